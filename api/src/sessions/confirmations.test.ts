/**
 * Confirmation depth and reorgs, end to end (local network at 3 confirmations, no sweeper,
 * so FUNDED sessions stay FUNDED): a detected but unconfirmed payment blocks cancels and does
 * not fund; one reorged away before the depth never funds; one reorged away after FUNDED
 * makes the session ERROR (reorged); a second payment reorged away after it was reported is
 * reported again (funds_reverted).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eventually } from "../../../testing/eventually.ts";
import { startLifecycleStack, type LifecycleStack } from "../../../testing/lifecycle.ts";
import { checkEventsAgainstDocument } from "../../../testing/documented-events.ts";

let stack: LifecycleStack;
beforeAll(async () => {
  stack = await startLifecycleStack({ env: { SERVICE_CONFIRMATIONS_LOCAL: "3", SERVICE_SWEEPER: "false" }, heartbeatSeconds: 0 });
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

const indexedTo = async (address: string) =>
  (await stack.svc.services.database.sql`select block_number from indexer.transfers where "to" = ${address.toLowerCase()}`).length;

test("detected but unconfirmed: no FUNDED yet, cancel refused; FUNDED at the third confirmation", async () => {
  const s = await stack.create("1.00");
  expect(s.networks[0]).toMatchObject({ confirmations: 3 });
  await stack.pay(s, 1_000_000n);
  await eventually(async () => ((await indexedTo(s.networks[0]!.depositAddress)) ? true : undefined), "payment indexed");
  await Bun.sleep(200);
  expect((await stack.status(s.id)).status).toBe("PENDING");
  const cancel = await stack.svc.call("POST", `/payment-sessions/${s.id}/cancel`, { auth: stack.key });
  expect(cancel.status).toBe(409);
  expect(cancel.body.error.message).toContain("payment to this session was detected");
  await stack.chains[0]!.rpc("anvil_mine", ["0x2"]);
  const funded = await stack.waitFor(s.id, "FUNDED");
  expect(funded.history.map((h) => h.status)).toEqual(["PENDING", "FUNDED"]);
});

test("a payment reorged away before the confirmation depth never funds", async () => {
  const s = await stack.create("1.00");
  await stack.pay(s, 1_000_000n);
  const address = s.networks[0]!.depositAddress;
  await eventually(async () => ((await indexedTo(address)) ? true : undefined), "payment indexed");
  // Replace the payment's block with an empty one, then build past the depth.
  await stack.chains[0]!.rpc("anvil_reorg", [1, []]);
  await stack.chains[0]!.rpc("anvil_mine", ["0x4"]);
  await eventually(async () => ((await indexedTo(address)) === 0 ? true : undefined), "the reorged transfer removed");
  await Bun.sleep(500);
  const now = await stack.status(s.id);
  expect(now.status).toBe("PENDING");
  expect(now.history.length).toBe(1);
  // And it can still be paid for real.
  await stack.pay(s, 1_000_000n);
  await stack.chains[0]!.rpc("anvil_mine", ["0x2"]);
  await stack.waitFor(s.id, "FUNDED");
}, 30_000);

test("a funding payment reorged away after FUNDED → ERROR reorged", async () => {
  const s = await stack.create("1.00");
  await stack.pay(s, 1_000_000n);
  await stack.chains[0]!.rpc("anvil_mine", ["0x2"]);
  await stack.waitFor(s.id, "FUNDED");
  // Rewrite the last three blocks (the payment's among them) without it.
  await stack.chains[0]!.rpc("anvil_reorg", [3, []]);
  const e = await stack.waitFor(s.id, "ERROR");
  expect(e.statusReason).toBe("reorged");
  expect(e.history.map((h) => h.status)).toEqual(["PENDING", "FUNDED", "ERROR"]);
}, 30_000);

test("a second payment reported as funds_received, then reorged away → funds_reverted; the status stays", async () => {
  const s = await stack.create("1.00");
  await stack.pay(s, 1_000_000n);
  await stack.chains[0]!.rpc("anvil_mine", ["0x2"]);
  await stack.waitFor(s.id, "FUNDED");
  await stack.pay(s, 250_000n);
  await stack.chains[0]!.rpc("anvil_mine", ["0x2"]);
  const reasons = async () => (await stack.status(s.id)).history.map((h) => h.reason);
  await eventually(async () => ((await reasons()).includes("funds_received") ? true : undefined), "the second payment reported");
  // Rewrite the second payment's block and the two after it without it (the funding payment stays).
  await stack.chains[0]!.rpc("anvil_reorg", [3, []]);
  await eventually(async () => ((await reasons()).includes("funds_reverted") ? true : undefined), "the second payment reported reverted", 20_000);
  const now = await stack.status(s.id);
  expect(now.status).toBe("FUNDED");
  expect(now.history.find((h) => h.reason === "funds_reverted")).toMatchObject({ status: "FUNDED", detail: { direction: "received", amountBaseUnits: "250000", statusReason: "paid" } });
}, 30_000);

test("every event these tests produced matches the document's schema for its reason", async () => {
  const checked = await checkEventsAgainstDocument(stack.svc, stack.key);
  expect(checked.problems).toEqual([]);
  expect([...checked.reasons]).toEqual(expect.arrayContaining(["created", "paid", "reorged", "funds_received", "funds_reverted"]));
}, 30_000);
