/** sendWebhook against real HTTP(S) receivers on 127.0.0.1. */
import { afterAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { answerMayBeKept, readExcerpt, sendWebhook } from "./sender.ts";
import { startReceiver } from "../../../testing/webhook-receiver.ts";
import type { Resolver } from "./target.ts";

const rcv = startReceiver();
afterAll(() => rcv.stop());
const headers = { "webhook-id": "evt_1", "webhook-timestamp": "1", "webhook-signature": "v1,x" };
const body = '{"id":"evt_1"}';

test("an answer is kept up to 1 KB, and only from a public address", async () => {
  const excerpt = (await readExcerpt(new Response("é".repeat(2000))))!;
  expect(Buffer.byteLength(excerpt)).toBeLessThanOrEqual(1024);
  expect(excerpt.startsWith("éé")).toBe(true);
  expect(answerMayBeKept("93.184.215.14")).toBe(true);
  expect(answerMayBeKept("2606:4700::1")).toBe(true);
  for (const ip of ["127.0.0.1", "::1", "10.1.2.3", "192.168.0.1", "172.16.0.1", "100.64.0.1", "fd00::1", "::ffff:10.0.0.1"]) expect([ip, answerMayBeKept(ip)]).toEqual([ip, false]);
});

test("2xx is success; the request is a JSON POST with our headers; a loopback target's answer is not kept", async () => {
  rcv.behave(() => new Response("é".repeat(2000), { status: 202 }));
  const r = await sendWebhook(`${rcv.url}/ok`, "sandbox", headers, body, { timeoutMs: 2000, allowPrivateTargets: true });
  expect(r.succeeded).toBe(true);
  expect(r.statusCode).toBe(202);
  expect(r.responseExcerpt).toBeNull();
  const got = rcv.received.at(-1)!;
  expect(got.body).toBe(body);
  expect(got.headers["content-type"]).toBe("application/json");
  expect(got.headers["webhook-id"]).toBe("evt_1");
  expect(got.headers["user-agent"]).toMatch(/^Paysession-Webhooks/);
  expect(got.headers.host).toBe(`127.0.0.1:${rcv.port}`);
});

test("500, 410, a redirect (not followed) and a hang past the timeout are failures, each said so", async () => {
  rcv.behave(() => new Response("boom", { status: 500 }));
  let r = await sendWebhook(`${rcv.url}/a`, "sandbox", headers, body, { timeoutMs: 2000, allowPrivateTargets: true });
  expect([r.succeeded, r.statusCode, r.responseExcerpt, r.error, r.gone]).toEqual([false, 500, null, "HTTP 500", false]);

  rcv.behave(() => new Response("bye", { status: 410 }));
  r = await sendWebhook(`${rcv.url}/a`, "sandbox", headers, body, { timeoutMs: 2000, allowPrivateTargets: true });
  expect([r.succeeded, r.statusCode, r.gone]).toEqual([false, 410, true]);

  const before = rcv.received.length;
  rcv.behave((req) => (req.path === "/redirect" ? Response.redirect(`${rcv.url}/elsewhere`, 307) : undefined));
  r = await sendWebhook(`${rcv.url}/redirect`, "sandbox", headers, body, { timeoutMs: 2000, allowPrivateTargets: true });
  expect([r.succeeded, r.statusCode]).toEqual([false, 307]);
  expect(r.error).toContain("redirect not followed");
  await Bun.sleep(50);
  expect(rcv.received.slice(before).map((x) => x.path)).toEqual(["/redirect"]);

  rcv.behave(async () => {
    await Bun.sleep(1500);
    return new Response("late");
  });
  const t0 = performance.now();
  r = await sendWebhook(`${rcv.url}/slow`, "sandbox", headers, body, { timeoutMs: 300, allowPrivateTargets: true });
  expect(performance.now() - t0).toBeLessThan(1000);
  expect([r.succeeded, r.statusCode]).toEqual([false, null]);
  expect(r.error).toContain("timeout");
  rcv.behave(undefined);
});

test("a closed port is a connection error; a forbidden target is refused without connecting", async () => {
  const dead = startReceiver();
  const url = dead.url;
  await dead.stop();
  let r = await sendWebhook(url, "sandbox", headers, body, { timeoutMs: 2000, allowPrivateTargets: true });
  expect([r.succeeded, r.statusCode]).toEqual([false, null]);
  expect(r.error).toContain("connection failed");
  r = await sendWebhook(`https://127.0.0.1:${rcv.port}/`, "production", headers, body, { timeoutMs: 2000 });
  expect(r.error).toMatch(/^refused: .*loopback/);
  r = await sendWebhook(`http://169.254.169.254/latest/meta-data`, "sandbox", headers, body, { timeoutMs: 2000, allowPrivateTargets: true });
  expect(r.error).toMatch(/^refused: .*metadata/);
});

test("DNS rebinding: a name that now resolves to a private address is refused at connect time", async () => {
  let answer = ["93.184.215.14"];
  const rebinding: Resolver = async () => answer;
  answer = ["127.0.0.1"];
  const before = rcv.received.length;
  const r = await sendWebhook(`https://rebind.example:${rcv.port}/`, "production", headers, body, { timeoutMs: 2000, resolver: rebinding });
  expect(r.succeeded).toBe(false);
  expect(r.error).toMatch(/^refused: rebind\.example \(127\.0\.0\.1\) is a loopback address/);
  expect(rcv.received.length).toBe(before);
});

test("https goes to the checked address with the original Host, SNI and certificate name (pinning works under Bun)", async () => {
  const dir = join(import.meta.dir, "testdata");
  const cert = readFileSync(join(dir, "webhooks.test.cert.pem"), "utf8");
  const key = readFileSync(join(dir, "webhooks.test.key.pem"), "utf8");
  const seen: string[] = [];
  const tls = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    tls: { cert, key },
    fetch(req) {
      seen.push(req.headers.get("host") ?? "");
      return new Response("ok");
    },
  });
  try {
    const resolver: Resolver = async (h) => (h === "webhooks.test" || h === "other.test" ? ["127.0.0.1"] : []);
    const ok = await sendWebhook(`https://webhooks.test:${tls.port}/hook`, "sandbox", headers, body, { timeoutMs: 3000, resolver, tls: { ca: cert }, allowPrivateTargets: true });
    expect(ok.succeeded).toBe(true);
    expect(seen).toEqual([`webhooks.test:${tls.port}`]);
    // the same address under another name: the certificate does not match that name → refused
    const bad = await sendWebhook(`https://other.test:${tls.port}/hook`, "sandbox", headers, body, { timeoutMs: 3000, resolver, tls: { ca: cert }, allowPrivateTargets: true });
    expect(bad.succeeded).toBe(false);
    expect(bad.error).toContain("connection failed");
    expect(seen.length).toBe(1);
  } finally {
    await tls.stop(true);
  }
});
