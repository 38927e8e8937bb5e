import { expect, test } from "bun:test";
import { bearer, displayPrefix, hashSecret, mintCredential, newMerchantPublicId, parseCredential, sameHash } from "./format.ts";

test("minted credentials parse back to their kind and environment", () => {
  const k = mintCredential("api_key", "sandbox");
  expect(k).toMatch(/^sk_test_[0-9A-Za-z]{40}$/);
  expect(parseCredential(k)).toEqual({ kind: "api_key", environment: "sandbox", raw: k });
  const t = mintCredential("session_token", "production");
  expect(t).toMatch(/^pst_live_/);
  expect(parseCredential(t)?.kind).toBe("session_token");
  expect(parseCredential(t)?.environment).toBe("production");
});

test("malformed credentials are not parsed", () => {
  for (const bad of ["", "sk_test_", "sk_prod_" + "a".repeat(40), "sk_test_" + "a".repeat(39), "xk_test_" + "a".repeat(40), "sk_test_" + "a".repeat(39) + "!"]) {
    expect(parseCredential(bad)).toBeUndefined();
  }
});

test("two mints differ and hashes compare in constant time", () => {
  const a = mintCredential("api_key", "sandbox");
  const b = mintCredential("api_key", "sandbox");
  expect(a).not.toBe(b);
  expect(sameHash(hashSecret(a), hashSecret(a))).toBe(true);
  expect(sameHash(hashSecret(a), hashSecret(b))).toBe(false);
});

test("display prefix shows the environment and four characters only", () => {
  const k = mintCredential("api_key", "production");
  expect(displayPrefix(k)).toBe(k.slice(0, 12));
  expect(displayPrefix(k)).toMatch(/^sk_live_.{4}$/);
  const t = mintCredential("session_token", "sandbox");
  expect(displayPrefix(t)).toMatch(/^pst_test_.{4}$/);
});

test("bearer header parsing", () => {
  expect(bearer("Bearer abc")).toBe("abc");
  expect(bearer("bearer abc")).toBe("abc");
  expect(bearer("Basic abc")).toBeUndefined();
  expect(bearer("Bearer")).toBeUndefined();
  expect(bearer(undefined)).toBeUndefined();
  expect(newMerchantPublicId("sandbox")).toMatch(/^mch_test_[0-9A-Za-z]{24}$/);
});
