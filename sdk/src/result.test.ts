import { describe, expect, test } from "bun:test";
import { checkMerchantId, checkOpenArgs, errorCodeOf, outcomeOf, PaysessionError } from "./result.ts";
import { baseFromScriptUrl } from "./index.ts";
import { readFromCheckout, readToCheckout } from "./protocol.ts";

const ID = "ps_V1StGXR8Z5jdHi6BmyT2kq4e";
const TEST_TOKEN = `pst_test_${"a".repeat(40)}`;
const code = (f: () => unknown) => {
  try {
    f();
    return "ok";
  } catch (e) {
    return (e as PaysessionError).code;
  }
};

describe("arguments", () => {
  test("merchant id: its environment, or invalid_argument", () => {
    expect(checkMerchantId("mch_test_4f9KpQ2xYz81LmNoPq7RsTuV")).toBe("test");
    expect(checkMerchantId("mch_live_4f9KpQ2xYz81LmNoPq7RsTuV")).toBe("live");
    for (const bad of [undefined, "", "acme", "sk_test_xxxxxxxxxxxxxxxxxxxx", 42]) expect(code(() => checkMerchantId(bad))).toBe("invalid_argument");
  });

  test("open's argument: shapes and the token's environment against the merchant id's", () => {
    expect(checkOpenArgs({ paymentSessionId: ID, paymentSessionToken: TEST_TOKEN }, "test")).toEqual({ paymentSessionId: ID, paymentSessionToken: TEST_TOKEN });
    expect(code(() => checkOpenArgs(undefined, "test"))).toBe("invalid_argument");
    expect(code(() => checkOpenArgs({ paymentSessionId: "x", paymentSessionToken: TEST_TOKEN }, "test"))).toBe("invalid_argument");
    expect(code(() => checkOpenArgs({ paymentSessionId: ID, paymentSessionToken: "sk_test_abc" }, "test"))).toBe("invalid_argument");
    expect(code(() => checkOpenArgs({ paymentSessionId: ID, paymentSessionToken: TEST_TOKEN }, "live"))).toBe("environment_mismatch");
  });
});

describe("results", () => {
  test("each status its outcome; PENDING when closed is 'closed'", () => {
    expect(["SUCCEEDED", "FUNDED", "CANCELED", "ERROR", "PENDING"].map((s) => outcomeOf(s as never))).toEqual(["succeeded", "funded", "canceled", "error", "closed"]);
  });
  test("a checkout's fail code maps to ours; an unknown one is a load failure", () => {
    expect(errorCodeOf("merchant_mismatch")).toBe("merchant_mismatch");
    expect(errorCodeOf("from_the_future")).toBe("checkout_unreachable");
  });
});

describe("base address and protocol", () => {
  test("the service's base from the SDK's own URL, path prefix kept", () => {
    expect(baseFromScriptUrl("https://pay.example.com/sdk/v1/paysession.js")).toBe("https://pay.example.com");
    expect(baseFromScriptUrl("https://example.com/pay/sdk/v1/paysession.mjs?x=1")).toBe("https://example.com/pay");
    expect(baseFromScriptUrl("https://cdn.example.com/paysession.js")).toBeUndefined();
    expect(baseFromScriptUrl(undefined)).toBeUndefined();
  });
  test("messages of other shapes are ignored, both ways", () => {
    expect(readFromCheckout({ paysession: 1, type: "ready" })).toEqual({ paysession: 1, type: "ready" });
    expect(readFromCheckout({ paysession: 1, type: "status", status: "FUNDED", reason: "paid" })).toMatchObject({ status: "FUNDED" });
    expect(readFromCheckout({ paysession: 1, type: "status", status: "PAID", reason: "x" })).toBeUndefined();
    expect(readFromCheckout({ type: "ready" })).toBeUndefined();
    expect(readFromCheckout("ready")).toBeUndefined();
    expect(readToCheckout({ paysession: 1, type: "init", merchantId: "m", paymentSessionId: ID, paymentSessionToken: TEST_TOKEN })).toBeDefined();
    expect(readToCheckout({ paysession: 1, type: "init", merchantId: "m", paymentSessionId: ID })).toBeUndefined();
  });
});
