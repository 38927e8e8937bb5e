/**
 * The sandbox `expire` tool waits for the expiry to be decided (a block stamped after it must be
 * indexed) but never past the request's own deadline: on a chain that makes no new block it
 * answers 200 with the session as it is, within SERVICE_REQUEST_TIMEOUT_MS, never a 503.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startLifecycleStack, type LifecycleStack } from "../../../testing/lifecycle.ts";

let stack: LifecycleStack;
beforeAll(async () => {
  // No heartbeat: the chain mines only when a transaction comes, so no block follows the expiry.
  stack = await startLifecycleStack({ heartbeatSeconds: 0, env: { SERVICE_REQUEST_TIMEOUT_MS: "2000" } });
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

test("expire on a quiet chain answers within the request deadline with the session still PENDING; a later block decides it", async () => {
  const s = await stack.create("1.00");
  const t0 = Date.now();
  const r = await stack.svc.call("POST", `/sandbox/payment-sessions/${s.id}/expire`, { auth: stack.key, body: {} });
  expect(r.status).toBe(200);
  expect(r.body.status).toBe("PENDING");
  expect(Date.now() - t0).toBeLessThan(2000);
  // A block after the expiry (any transaction mines one) lets the runner decide it.
  await stack.chains[0]!.mint("0x00000000000000000000000000000000000000c3", 1n);
  const done = await stack.waitFor(s.id, "CANCELED");
  expect(done.statusReason).toBe("expired");
  // The deadline is asserted above (< 2 s); the whole test, a mint and the runner's decision
  // included, takes ≈ 3.3 s, so the runner's default 5 s left too little margin (once over it in CI).
}, 30_000);
