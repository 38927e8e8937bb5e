/**
 * A flash cookie set before the one seal (credentials/seal.ts) still opens after it: the vector
 * was set by the code before (dashboard/flash.ts over webhooks/secrets.ts) with the key and the
 * IV fixed. How a flash behaves otherwise is in logic.test.ts.
 */
import { expect, test } from "bun:test";
import { readFlash } from "./flash.ts";

const KEY = Buffer.from("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", "hex");
const PAGE = "/dashboard/sandbox/settings/api-keys";
const SET_AT = new Date(1_700_000_000_000);
const BEFORE =
  "djEuQUFFQ0F3UUZCZ2NJQ1FvTC5rL1pmWXRUeWV3TC9jN0hYWmhydE5RPT0uUENDbGZxYVhwMit2ZSt5cHg0Z1VHT2IwdlJhREVBQUlYUlNSMm1zTVk4WnVZb3pRamExeitoSElYZGVxNUVFYWszVkMvVHV4eHZnRnRRVjllWkNkako5ZHRCNzhva2NQZURiRkZzRDhhNXhNNDZjRkJVd3lHSlRROWFrQmc1dWg2WTAza3MwdDZpQ3ZLdzZDZUVVUlRJcFhIdz09";
const req = (value: string) => new Request("http://x/", { headers: { cookie: `ps_flash=${value}` } });
const at = new Date(SET_AT.getTime() + 60_000);

test("a flash cookie set before the one seal opens, for its session and page", () => {
  expect(Buffer.from(BEFORE, "base64url").toString("utf8")).toStartWith("v1.AAECAwQFBgcICQoL.");
  expect(readFlash(req(BEFORE), KEY, "login-vector", PAGE, false, at)).toEqual({ flash: { notice: undefined, secret: { value: "sk_test_vector", label: "ci" } }, clear: true });
  expect(readFlash(req(BEFORE), KEY, "login-other", PAGE, false, at)).toEqual({ clear: true });
});

test("that cookie with one bit flipped in its IV, tag or ciphertext is dropped", () => {
  const [label, ...parts] = Buffer.from(BEFORE, "base64url").toString("utf8").split(".");
  for (const part of [0, 1, 2]) {
    const bytes = parts.map((p) => Buffer.from(p, "base64"));
    bytes[part]![3]! ^= 4;
    const altered = Buffer.from([label, ...bytes.map((b) => b.toString("base64"))].join(".")).toString("base64url");
    expect(readFlash(req(altered), KEY, "login-vector", PAGE, false, at)).toEqual({ clear: true });
  }
});
