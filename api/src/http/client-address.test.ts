/**
 * The client address through the real HTTP front: with SERVICE_TRUSTED_PROXIES naming the peer
 * (here 127.0.0.1, the test's own connection standing in for a reverse proxy), the security
 * history and the sign-in throttle see the client X-Forwarded-For names, read right to left;
 * without it the same header is ignored and the peer's address is used.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { csrfIn, merchantWithUser, signIn } from "../../../testing/dashboard.ts";
import { rawRequest } from "../../../testing/raw-http.ts";
import { FREE_FAILURES_PER_IP } from "../credentials/sign-in-throttle.ts";

/** A failed sign-in (unknown email) through the form, as a browser behind a proxy sends it. */
async function failedSignIn(svc: TestService, email: string, xff: string): Promise<Response> {
  const form = await fetch(`${svc.url}/dashboard/sign-in`, { headers: { "x-forwarded-for": xff } });
  const pre = form.headers
    .getSetCookie()
    .map((c) => c.split(";")[0]!)
    .find((c) => c.startsWith("ps_dashboard_pre="))!;
  const csrf = csrfIn(await form.text())!;
  return fetch(`${svc.url}/dashboard/sign-in`, {
    method: "POST",
    headers: { cookie: pre, "content-type": "application/x-www-form-urlencoded", "x-forwarded-for": xff },
    body: new URLSearchParams({ _csrf: csrf, email, password: "wrong password" }),
    redirect: "manual",
  });
}

const ipsOf = async (svc: TestService, email: string) =>
  (await svc.services.database.sql`select ip from app.security_events where email = ${email} order by created_at, id`).map((r) => r.ip as string | null);

const endpointLineIp = async (svc: TestService, merchantId: string, url: string) =>
  (await svc.services.database.sql`select ip from app.security_events where merchant_id = ${merchantId} and action = 'webhook_endpoint_created' and detail->>'url' = ${url}`)[0]?.ip as
    | string
    | null
    | undefined;

describe("behind a trusted proxy (SERVICE_TRUSTED_PROXIES=127.0.0.1)", () => {
  let svc: TestService;
  let m: Awaited<ReturnType<typeof merchantWithUser>>;
  beforeAll(async () => {
    svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false", SERVICE_TRUSTED_PROXIES: "127.0.0.1, ::1" });
    m = await merchantWithUser(svc, "proxied@s.example");
  }, 60_000);
  afterAll(() => svc.close());

  test("the sign-in throttle counts by the forwarded client: one client throttled, another behind the same proxy not", async () => {
    for (let i = 0; i < FREE_FAILURES_PER_IP; i++) {
      expect((await failedSignIn(svc, `nobody-${i}@s.example`, "203.0.113.7")).status).toBe(401);
    }
    const throttled = await failedSignIn(svc, "nobody-last@s.example", "203.0.113.7");
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThan(0);
    // The same proxy, another client: its failures are its own.
    expect((await failedSignIn(svc, "nobody-last@s.example", "203.0.113.8")).status).toBe(401);
    expect(await ipsOf(svc, "nobody-0@s.example")).toEqual(["203.0.113.7"]);
    expect(await ipsOf(svc, "nobody-last@s.example")).toEqual(["203.0.113.8"]);
  }, 60_000);

  test("entries a client wrote before the proxy's are not believed; the dashboard's Security history shows the client", async () => {
    // The client sent "X-Forwarded-For: 198.51.100.1"; the proxy appended the address it saw.
    const url = "http://localhost:3000/proxied";
    const created = await svc.call("POST", "/webhook-endpoints", { auth: m.sandboxKey, body: { url }, headers: { "x-forwarded-for": "198.51.100.1, 203.0.113.9" } });
    expect(created.status).toBe(201);
    expect(await endpointLineIp(svc, m.merchant.id, url)).toBe("203.0.113.9");
    const me = await signIn(svc, "proxied@s.example");
    const page = await (await me.get("/dashboard/sandbox/settings/security")).text();
    expect(page).toContain("<code>203.0.113.9</code>");
    expect(page).not.toContain("198.51.100.1");
  }, 30_000);

  test("X-Forwarded-For sent twice reads as one list, in order; garbage in the last entry falls back to the proxy", async () => {
    const send = (url: string, xffLines: string[]) => {
      const body = JSON.stringify({ url });
      const head = [
        "POST /webhook-endpoints HTTP/1.1",
        `Host: 127.0.0.1`,
        `Authorization: Bearer ${m.sandboxKey}`,
        "Content-Type: application/json",
        `Content-Length: ${Buffer.byteLength(body)}`,
        ...xffLines.map((v) => `X-Forwarded-For: ${v}`),
        "Connection: close",
      ].join("\r\n");
      return rawRequest(svc.url, head, body);
    };
    expect((await send("http://localhost:3000/twice", ["198.51.100.1", "203.0.113.10"])).status).toBe(201);
    expect(await endpointLineIp(svc, m.merchant.id, "http://localhost:3000/twice")).toBe("203.0.113.10");
    expect((await send("http://localhost:3000/garbage", ["203.0.113.11, not-an-address"])).status).toBe(201);
    expect(await endpointLineIp(svc, m.merchant.id, "http://localhost:3000/garbage")).toBe("127.0.0.1");
  }, 30_000);
});

describe("with no trusted proxies (the default)", () => {
  let svc: TestService;
  let m: Awaited<ReturnType<typeof merchantWithUser>>;
  beforeAll(async () => {
    svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false" });
    m = await merchantWithUser(svc, "direct@s.example");
  }, 60_000);
  afterAll(() => svc.close());

  test("X-Forwarded-For is ignored: the peer's address is recorded and throttled", async () => {
    expect((await failedSignIn(svc, "someone@s.example", "203.0.113.7")).status).toBe(401);
    expect(await ipsOf(svc, "someone@s.example")).toEqual(["127.0.0.1"]);
    const url = "http://localhost:3000/direct";
    expect((await svc.call("POST", "/webhook-endpoints", { auth: m.sandboxKey, body: { url }, headers: { "x-forwarded-for": "203.0.113.7" } })).status).toBe(201);
    expect(await endpointLineIp(svc, m.merchant.id, url)).toBe("127.0.0.1");
    // Forged addresses do not escape the per-address throttle: all count against 127.0.0.1.
    for (let i = 1; i < FREE_FAILURES_PER_IP; i++) {
      expect((await failedSignIn(svc, `someone-${i}@s.example`, `198.51.100.${i}`)).status).toBe(401);
    }
    expect((await failedSignIn(svc, "someone-else@s.example", "198.51.100.200")).status).toBe(429);
  }, 60_000);
});
