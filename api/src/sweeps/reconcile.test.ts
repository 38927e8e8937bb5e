import { expect, test } from "bun:test";
import { planReconcile } from "./reconcile.ts";

const row = (id: string, nonce: number, state: string) => ({ id, nonce: BigInt(nonce), state });

test("mined transactions at or above the chain's mined nonce count have vanished", () => {
  const plan = planReconcile(10n, [row("a", 9, "mined"), row("b", 10, "mined"), row("c", 14, "mined")]);
  expect(plan.vanished).toEqual(["b", "c"]);
  expect(plan.stranded).toEqual([]);
});

test("unfinished transactions contiguous from the chain's nonce can still be mined; those above a hole cannot", () => {
  expect(planReconcile(10n, [row("a", 10, "sent"), row("b", 11, "signed"), row("c", 12, "sent")])).toEqual({ vanished: [], stranded: [] });
  // The chain lost nonces 10–14 (mined in our records): 15 and 16 wait forever unless dropped.
  const plan = planReconcile(10n, [row("m", 12, "mined"), row("x", 15, "sent"), row("y", 16, "sent")]);
  expect(plan.vanished).toEqual(["m"]);
  expect(plan.stranded).toEqual(["x", "y"]);
  // A hole in the middle strands only what is above it.
  expect(planReconcile(10n, [row("a", 10, "sent"), row("b", 12, "sent")]).stranded).toEqual(["b"]);
});
