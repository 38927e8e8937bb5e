import { expect, test } from "bun:test";
import { returnUrlOf } from "./return-url.ts";

test("the checkout returns only to a payment-link path of its own origin", () => {
  const o = "https://pay.example";
  expect(returnUrlOf("/pay/plink_1/done/ps_1", o)).toBe("/pay/plink_1/done/ps_1");
  for (const bad of [null, "", "https://evil.example/pay/x", "//evil.example/pay/x", "/dashboard", "/pay", "javascript:alert(1)", "/\\evil.example/pay/"]) {
    expect(returnUrlOf(bad, o)).toBeUndefined();
  }
});
