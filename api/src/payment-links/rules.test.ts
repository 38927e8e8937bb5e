import { expect, test } from "bun:test";
import { checkRedirectUrl, linkStatus, linkUrl, redirectTarget, visitAmount } from "./rules.ts";

const now = new Date("2026-06-01T12:00:00Z");

test("a link's status: deactivated, then expired, then used up, else active", () => {
  const base = { deactivatedAt: null, expiresAt: null, maxUses: null, uses: 5 };
  expect(linkStatus(base, now)).toBe("active");
  expect(linkStatus({ ...base, maxUses: 5 }, now)).toBe("used_up");
  expect(linkStatus({ ...base, maxUses: 6 }, now)).toBe("active");
  expect(linkStatus({ ...base, maxUses: 5, expiresAt: now }, now)).toBe("expired");
  expect(linkStatus({ ...base, expiresAt: new Date(now.getTime() + 1) }, now)).toBe("active");
  expect(linkStatus({ ...base, maxUses: 5, expiresAt: now, deactivatedAt: now }, now)).toBe("inactive");
});

test("the payer's amount: the fixed one, or what they typed within the bounds (whole and one-decimal amounts read too)", () => {
  expect(visitAmount({ amountMinor: 1250n, minAmountMinor: null, maxAmountMinor: null }, "999")).toEqual({ ok: true, amountMinor: 1250n });
  const open = { amountMinor: null, minAmountMinor: 500n, maxAmountMinor: 5000n };
  expect(visitAmount(open, "20")).toEqual({ ok: true, amountMinor: 2000n });
  expect(visitAmount(open, " 20.5 ")).toEqual({ ok: true, amountMinor: 2050n });
  expect(visitAmount(open, "$5.00")).toEqual({ ok: true, amountMinor: 500n });
  expect(visitAmount(open, "50.00")).toEqual({ ok: true, amountMinor: 5000n });
  for (const bad of ["4.99", "50.01", "", "1e3", "20.555", "-5", "0x10", undefined]) expect(visitAmount(open, bad).ok).toBe(false);
});

test("redirect URLs: https anywhere, http only on this machine and only in the sandbox, never with credentials", () => {
  expect(checkRedirectUrl("https://shop.example/thanks", "production")).toBe("https://shop.example/thanks");
  expect(checkRedirectUrl("http://127.0.0.1:3000/ok", "sandbox")).toBe("http://127.0.0.1:3000/ok");
  for (const [url, env] of [
    ["http://127.0.0.1:3000/ok", "production"],
    ["http://shop.example/", "sandbox"],
    ["ftp://shop.example/", "sandbox"],
    ["https://a:b@shop.example/", "production"],
    ["/relative", "sandbox"],
  ] as const) {
    expect(() => checkRedirectUrl(url, env)).toThrow();
  }
  expect(redirectTarget("https://shop.example/thanks?a=1#top", "ps_1")).toBe("https://shop.example/thanks?a=1&paymentSessionId=ps_1#top");
  expect(linkUrl(new URL("https://pay.example/base"), "plink_1")).toBe("https://pay.example/base/pay/plink_1");
  expect(linkUrl(new URL("https://pay.example/"), "plink_1")).toBe("https://pay.example/pay/plink_1");
});
