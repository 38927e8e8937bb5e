import { expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { generateSecret, secretKey, signature, webhookHeaders } from "./signing.ts";

const body = JSON.stringify({ id: "evt_1", type: "payment_session.funded", data: { status: "FUNDED" } });
const now = () => Math.floor(Date.now() / 1000);

test("secrets are whsec_ + base64 of 24 random bytes, all different", () => {
  const seen = new Set<string>();
  for (let i = 0; i < 50; i++) {
    const s = generateSecret();
    expect(s).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(secretKey(s).length).toBe(24);
    seen.add(s);
  }
  expect(seen.size).toBe(50);
  for (const bad of ["sk_test_x", "whsec_", "whsec_!!!!", "whsec_" + Buffer.alloc(8).toString("base64")]) expect(() => secretKey(bad)).toThrow();
});

test("our headers verify with the standardwebhooks library, and match its own signature", () => {
  const secret = generateSecret();
  const ts = now();
  const headers = webhookHeaders([secretKey(secret)], "evt_abc", ts, body);
  expect(Object.keys(headers).sort()).toEqual(["webhook-id", "webhook-signature", "webhook-timestamp"]);
  const wh = new Webhook(secret);
  expect(wh.verify(body, headers)).toEqual(JSON.parse(body));
  expect(headers["webhook-signature"]).toBe(wh.sign("evt_abc", new Date(ts * 1000), body));
});

test("tampering with the body, the id, the timestamp or the secret fails verification", () => {
  const secret = generateSecret();
  const ts = now();
  const headers = webhookHeaders([secretKey(secret)], "evt_abc", ts, body);
  const wh = new Webhook(secret);
  expect(() => wh.verify(body.replace("FUNDED", "SUCCEEDED"), headers)).toThrow();
  expect(() => wh.verify(body + " ", headers)).toThrow();
  expect(() => wh.verify(body, { ...headers, "webhook-id": "evt_abd" })).toThrow();
  expect(() => wh.verify(body, { ...headers, "webhook-timestamp": String(ts + 1) })).toThrow();
  expect(() => new Webhook(generateSecret()).verify(body, headers)).toThrow();
  // and an old timestamp (replay) is refused by the library's tolerance window
  const old = webhookHeaders([secretKey(secret)], "evt_abc", ts - 3600, body);
  expect(() => wh.verify(body, old)).toThrow();
});

test("during a rotation both secrets verify, each on its own", () => {
  const [current, previous] = [generateSecret(), generateSecret()];
  const headers = webhookHeaders([secretKey(current), secretKey(previous)], "evt_x", now(), body);
  expect(headers["webhook-signature"]!.split(" ").length).toBe(2);
  expect(headers["webhook-signature"]!.split(" ").every((s) => s.startsWith("v1,"))).toBe(true);
  expect(new Webhook(current).verify(body, headers)).toBeTruthy();
  expect(new Webhook(previous).verify(body, headers)).toBeTruthy();
  expect(() => new Webhook(generateSecret()).verify(body, headers)).toThrow();
});

test("the signature is HMAC-SHA256 over id.timestamp.body with the decoded key", async () => {
  const key = Buffer.from("0123456789abcdef01234567");
  const { createHmac } = await import("node:crypto");
  const expected = "v1," + createHmac("sha256", key).update("evt_1.1700000000.{}").digest("base64");
  expect(signature(key, "evt_1", 1700000000, "{}")).toBe(expected);
  expect(() => webhookHeaders([], "evt_1", 1, "{}")).toThrow();
});
