import { expect, test } from "bun:test";
import { writeNotice, type NoticeLine } from "./notices.ts";

const line = (over: Partial<NoticeLine>): NoticeLine => ({
  action: "settlement_address_changed",
  environment: "production",
  email: "ada@shop.test",
  ip: "203.0.113.7",
  detail: {},
  createdAt: new Date("2026-12-04T10:15:30Z"),
  merchantName: "Ada's Shop",
  ...over,
});

test("a settlement change says who, when, from where, before and after, and what to do", () => {
  const m = writeNotice(line({ detail: { chainId: 8453, network: "Base", previousAddress: "0xAAA", address: "0xBBB" } }), "https://pay.test/dashboard");
  expect(m.subject).toBe("Ada's Shop: the production settlement address on Base was changed");
  expect(m.text).toContain("On 2026-12-04 10:15 UTC, ada@shop.test changed where Ada's Shop's production payments on Base settle from the address 203.0.113.7.");
  expect(m.text).toContain("before: 0xAAA");
  expect(m.text).toContain("now:    0xBBB");
  expect(m.text).toContain("https://pay.test/dashboard/production/settings/security");
});

test("a change through an API key names the key; a password change names the person's own reset page", () => {
  const key = writeNotice(line({ email: null, detail: { keyPrefix: "sk_live_ab12", network: "Base", address: "0xB" } }), "https://pay.test/dashboard");
  expect(key.text).toContain("API key sk_live_ab12… changed");
  const pw = writeNotice(line({ action: "password_reset", detail: {} }), "https://pay.test/dashboard");
  expect(pw.subject).toBe("Ada's Shop: your Paysession password was reset");
  expect(pw.text).toContain("https://pay.test/dashboard/forgot-password");
  expect(writeNotice(line({ action: "api_key_created", detail: { name: "server", prefix: "sk_live_x" } }), "u").subject).toBe("Ada's Shop: a production API key was created");
  // What the key may do, when its line says so (lines from before scopes say nothing of it).
  const scoped = writeNotice(line({ action: "api_key_created", detail: { name: "r", prefix: "sk_live_y", scopes: ["sessions:read"], expiresAt: "2027-01-02T03:04:00.000Z" } }), "u").text;
  expect(scoped).toContain("It may only: sessions:read. It expires on 2027-01-02 03:04 UTC.");
  expect(writeNotice(line({ action: "api_key_created", detail: { name: "f", prefix: "sk_live_z", scopes: "full access", expiresAt: null } }), "u").text).toContain("It has full access. It does not expire.");
  expect(writeNotice(line({ action: "api_key_created", detail: { name: "old", prefix: "sk_live_w" } }), "u").text).not.toContain("It ");
});
