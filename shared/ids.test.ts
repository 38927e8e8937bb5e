import { expect, test } from "bun:test";
import { isId, newId, newSecret } from "./ids.ts";

test("ids carry their prefix and are checked by exact shape", () => {
  const id = newId("paymentSession");
  expect(id).toMatch(/^ps_[0-9A-Za-z]{24}$/);
  expect(isId("paymentSession", id)).toBe(true);
  expect(isId("event", id)).toBe(false);
  for (const bad of ["ps_", `${id}x`, id.slice(0, -1), `ps_${"\u0000".repeat(24)}`, `ps_${"-".repeat(24)}`]) {
    expect(isId("paymentSession", bad)).toBe(false);
  }
  expect(newSecret()).toMatch(/^[0-9A-Za-z]{40}$/);
  expect(newSecret()).not.toBe(newSecret());
});
