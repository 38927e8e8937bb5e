import { describe, expect, test } from "bun:test";
import { checksumAddress } from "../../../shared/contracts/keccak.ts";
import { CONFIRMATION_RECHECK_MS, coveredOn, decide, MAX_SWEEP_ROUNDS, settledOn, type AuthorizedPayment, type Facts, type SessionState, type SweepRound, type Transfer } from "./decide.ts";

const T0 = new Date("2026-11-21T10:00:00Z");
const EXPIRY = new Date("2026-11-21T10:30:00Z");
const at = (min: number) => new Date(T0.getTime() + min * 60_000);
const AMOUNT = 12_340_000n; // "12.34" at 6 decimals

const pending = (over: Partial<SessionState> = {}): SessionState => ({
  status: "PENDING",
  expiresAt: EXPIRY,
  networks: [
    { chainId: 1, requiredBaseUnits: AMOUNT, confirmationsRequired: 3 },
    { chainId: 8453, requiredBaseUnits: AMOUNT, confirmationsRequired: 1 },
  ],
  ...over,
});
let n = 0;
const tx = (chainId: number, value: bigint, confirmations: number, minute = 5): Transfer => ({
  chainId,
  txHash: `0x${(++n).toString(16).padStart(64, "0")}`,
  logIndex: 0,
  value,
  blockTimestamp: at(minute),
  confirmations,
});
const facts = (transfers: Transfer[], more: Partial<Facts> = {}): Facts => ({ transfers, ...more });
const PAYER = "0x00000000000000000000000000000000000000aa";
const PAYER_CHECKSUMMED = checksumAddress(PAYER);
/** A payment by the payer's signed authorization, straight to the settlement address. */
const authorized = (chainId: number, value: bigint, confirmations: number, minute = 5): AuthorizedPayment => ({ ...tx(chainId, value, confirmations, minute), from: PAYER, method: "authorization" });
/** A sweep round on chain 1 (or `chainId`). */
const round = (state: SweepRound["state"], amount: bigint, more: Partial<SweepRound> = {}): SweepRound => ({ chainId: 1, state, amount, attempts: 1, ...more });

describe("PENDING", () => {
  test("exact payment, confirmed → FUNDED paid, sweep requested", () => {
    const d = decide(pending(), facts([tx(1, AMOUNT, 3)]), at(6));
    expect(d.transition).toMatchObject({ to: "FUNDED", reason: "paid", detail: { chainId: 1, overpaid: "0" } });
    expect(d.effects).toEqual([{ kind: "sweep", chainId: 1, amount: AMOUNT }]);
  });

  test("not yet confirmed → stays, rechecks soon", () => {
    const d = decide(pending(), facts([tx(1, AMOUNT, 2)]), at(6));
    expect(d.transition).toBeUndefined();
    expect(d.wakeAt).toEqual(new Date(at(6).getTime() + CONFIRMATION_RECHECK_MS));
  });

  test("over-payment → FUNDED overpaid with the surplus", () => {
    const d = decide(pending(), facts([tx(8453, AMOUNT + 5_000_000n, 1)]), at(6));
    expect(d.transition).toMatchObject({ to: "FUNDED", reason: "overpaid", detail: { chainId: 8453, overpaid: "5000000" } });
  });

  test("partial payments that add up on one network → FUNDED", () => {
    const d = decide(pending(), facts([tx(1, 10_000_000n, 5), tx(1, 2_340_000n, 3)]), at(6));
    expect(d.transition).toMatchObject({ to: "FUNDED", reason: "paid" });
    expect((d.transition!.detail as { txHashes: string[] }).txHashes.length).toBe(2);
  });

  test("halves on two networks do not add up", () => {
    const d = decide(pending(), facts([tx(1, AMOUNT / 2n, 5), tx(8453, AMOUNT / 2n, 5)]), at(6));
    expect(d.transition).toBeUndefined();
  });

  test("expiry with a confirmed partial → ERROR underpaid, the partial swept", () => {
    const d = decide(pending(), facts([tx(1, 1_000_000n, 5)]), at(31));
    expect(d.transition).toMatchObject({ to: "ERROR", reason: "underpaid", detail: { shortBy: String(AMOUNT - 1_000_000n) } });
    expect(d.effects).toEqual([{ kind: "sweep", chainId: 1, amount: 1_000_000n }]);
  });

  test("expiry with nothing → CANCELED expired; before expiry it wakes at expiry", () => {
    expect(decide(pending(), facts([]), at(10)).wakeAt).toEqual(EXPIRY);
    expect(decide(pending(), facts([]), at(30)).transition).toMatchObject({ to: "CANCELED", reason: "expired" });
  });

  test("a payment made in time but unconfirmed at expiry holds the decision", () => {
    const d = decide(pending(), facts([tx(1, AMOUNT, 1, 29)]), at(31));
    expect(d.transition).toBeUndefined();
    expect(d.wakeAt!.getTime()).toBe(at(31).getTime() + CONFIRMATION_RECHECK_MS);
    expect(decide(pending(), facts([tx(1, AMOUNT, 3, 29)]), at(32)).transition).toMatchObject({ to: "FUNDED" });
  });

  test("a payment mined after expiry does not fund", () => {
    const d = decide(pending(), facts([tx(1, AMOUNT, 3, 31)]), at(32));
    expect(d.transition).toMatchObject({ to: "CANCELED", reason: "expired" });
  });

  test("cancel by payer or merchant while nothing is detected", () => {
    expect(decide(pending(), facts([], { cancelRequest: "payer" }), at(1)).transition).toMatchObject({ to: "CANCELED", reason: "canceled_by_payer" });
    expect(decide(pending(), facts([], { cancelRequest: "merchant" }), at(1)).transition).toMatchObject({ to: "CANCELED", reason: "canceled_by_merchant" });
  });

  test("a cancel after the expiry is decided as the expiry", () => {
    expect(decide(pending(), facts([], { cancelRequest: "payer" }), at(31)).transition).toMatchObject({ to: "CANCELED", reason: "expired" });
    const paidLate = decide(pending(), facts([tx(1, 1n, 0, 29)], { cancelRequest: "payer" }), at(31));
    expect(paidLate.refused).toBe("payment_detected");
  });

  test("cancel refused once funds are detected, even unconfirmed", () => {
    const d = decide(pending(), facts([tx(1, 1n, 0)], { cancelRequest: "merchant" }), at(1));
    expect(d.transition).toBeUndefined();
    expect(d.refused).toBe("payment_detected");
  });

  test("sandbox simulated error; a confirmed partial amount is swept", () => {
    expect(decide(pending(), facts([], { simulateError: true }), at(1)).transition).toMatchObject({ to: "ERROR", reason: "simulated" });
    const d = decide(pending(), facts([tx(1, 5n, 5)], { simulateError: true }), at(1));
    expect(d.effects).toEqual([{ kind: "sweep", chainId: 1, amount: 5n }]);
  });

  test("an indexer that has not seen the chain up to the expiry holds the decision, within a grace period", () => {
    const lagging = facts([], { indexedPastExpiry: { 1: true, 8453: false } });
    const d = decide(pending(), lagging, at(31));
    expect(d.transition).toBeUndefined();
    expect(d.wakeAt!.getTime()).toBe(at(31).getTime() + CONFIRMATION_RECHECK_MS);
    expect(decide(pending(), lagging, at(30 + 16)).transition).toMatchObject({ to: "CANCELED", reason: "expired" });
    expect(decide(pending(), facts([], { indexedPastExpiry: { 1: true, 8453: true } }), at(31)).transition).toMatchObject({ to: "CANCELED" });
  });

  test("a reorg before the confirmation depth: the transfer vanishes, no FUNDED", () => {
    const t = tx(1, AMOUNT, 2);
    expect(decide(pending(), facts([t]), at(6)).transition).toBeUndefined();
    expect(decide(pending(), facts([]), at(7)).transition).toBeUndefined();
  });

  test("transfers on a network the session does not use are ignored", () => {
    expect(decide(pending(), facts([tx(10, AMOUNT, 99)]), at(6)).transition).toBeUndefined();
  });
});

describe("FUNDED", () => {
  const funded = pending({ status: "FUNDED", funding: { chainId: 1, amount: AMOUNT } });
  const paidTx = tx(1, AMOUNT, 10);
  test("our sweep confirmed (its receipt moved the amount) → SUCCEEDED, before the indexer has seen it", () => {
    const d = decide(funded, facts([paidTx], { sweeps: [round("confirmed", AMOUNT, { swept: AMOUNT, txHash: "0xabc" })] }), at(7));
    expect(d.transition).toMatchObject({ to: "SUCCEEDED", reason: "swept", detail: { sweepTxHash: "0xabc" } });
  });
  test("someone else swept the deposit (the indexer saw deposit → settlement) → SUCCEEDED, no new sweep", () => {
    // Our round found the deposit empty (swept 0, no transaction): it still covers the amount.
    const sweeps = [round("confirmed", AMOUNT, { swept: 0n })];
    const outflows = [{ chainId: 1, txHash: "0xstranger", amount: AMOUNT }];
    const d = decide(funded, facts([paidTx], { sweeps, outflows }), at(7));
    expect(d.transition).toMatchObject({ to: "SUCCEEDED", reason: "swept", detail: { sweepTxHash: "0xstranger" } });
    expect(d.effects).toEqual([]);
    // Before the indexer shows the outflow: still FUNDED, and still no new sweep (no loop).
    const lagging = decide(funded, facts([paidTx], { sweeps }), at(7));
    expect(lagging.transition).toBeUndefined();
    expect(lagging.effects).toEqual([]);
  });
  test("a stranger's sweep while ours is queued: nothing more is asked for", () => {
    const d = decide(funded, facts([paidTx], { sweeps: [round("queued", AMOUNT)] }), at(7));
    expect(d).toEqual({ effects: [], wakeAt: undefined });
  });
  test("sweep failed past retries → ERROR sweep_failed", () => {
    const d = decide(funded, facts([paidTx], { sweeps: [round("failed", AMOUNT, { attempts: 5, error: "reverted" })] }), at(7));
    expect(d.transition).toMatchObject({ to: "ERROR", reason: "sweep_failed", detail: { attempts: 5, error: "reverted" } });
  });
  test("funding reorged away after confirmation → ERROR reorged", () => {
    const d = decide(funded, facts([], { sweeps: [round("queued", AMOUNT)] }), at(7));
    expect(d.transition).toMatchObject({ to: "ERROR", reason: "reorged" });
  });
  test("a confirmed sweep that moved less than the funding is not SUCCEEDED, and asks for no new round", () => {
    const d = decide(funded, facts([], { sweeps: [round("confirmed", AMOUNT, { swept: 0n, txHash: "0xabc" })] }), at(7));
    expect(d.transition).toMatchObject({ to: "ERROR", reason: "reorged" });
    const partial = decide(funded, facts([paidTx], { sweeps: [round("confirmed", AMOUNT, { swept: 1n, txHash: "0xabc" })] }), at(7));
    expect(partial.transition).toBeUndefined();
    expect(partial.effects).toEqual([]);
  });
  test("a cancel while FUNDED is refused and changes nothing", () => {
    const d = decide(funded, facts([], { cancelRequest: "merchant", sweeps: [round("queued", AMOUNT)] }), at(7));
    expect(d).toEqual({ refused: "not_pending", effects: [] });
  });
  test("while the sweep is under way nothing changes", () => {
    const d = decide(funded, facts([paidTx], { sweeps: [round("sending", AMOUNT)] }), at(7));
    expect(d).toEqual({ effects: [], wakeAt: undefined });
  });
  test("a second payment while FUNDED is swept as well", () => {
    const d = decide(funded, facts([paidTx, tx(1, 1_000_000n, 10)], { sweeps: [round("sending", AMOUNT)] }), at(7));
    expect(d.effects).toEqual([{ kind: "sweep", chainId: 1, amount: 1_000_000n }]);
  });
});

describe("sweep rounds: what is covered, what is settled", () => {
  test("a round covers what it was asked for, or what it moved when that was more", () => {
    expect(coveredOn(facts([], { sweeps: [round("confirmed", 10n, { swept: 0n })] }), 1)).toBe(10n);
    expect(coveredOn(facts([], { sweeps: [round("confirmed", 10n, { swept: 15n, txHash: "0x1" })] }), 1)).toBe(15n);
    expect(coveredOn(facts([], { sweeps: [round("queued", 10n), round("sending", 5n), round("confirmed", 1n, { chainId: 8453 })] }), 1)).toBe(15n);
  });
  test(`failed rounds cover nothing until ${MAX_SWEEP_ROUNDS} failed; then the last one's amount counts once`, () => {
    const failed = (n: number) => Array.from({ length: n }, () => round("failed", 7n));
    expect(coveredOn(facts([], { sweeps: failed(MAX_SWEEP_ROUNDS - 1) }), 1)).toBe(0n);
    expect(coveredOn(facts([], { sweeps: failed(MAX_SWEEP_ROUNDS) }), 1)).toBe(7n);
    expect(coveredOn(facts([], { sweeps: failed(MAX_SWEEP_ROUNDS + 2) }), 1)).toBe(7n);
  });
  test("settled: indexed outflows and our receipts, one transaction counted once", () => {
    const f = facts([], {
      outflows: [{ chainId: 1, txHash: "0xAA", amount: 10n }],
      sweeps: [round("confirmed", 10n, { swept: 10n, txHash: "0xaa" }), round("confirmed", 4n, { swept: 4n, txHash: "0xbb" })],
    });
    expect(settledOn(f, 1)).toEqual({ amount: 14n, lastTxHash: "0xbb" });
    expect(settledOn(f, 8453)).toEqual({ amount: 0n, lastTxHash: undefined });
  });
});

describe("CANCELED and terminal", () => {
  const canceled = pending({ status: "CANCELED" });
  test("funds confirmed after cancel → ERROR paid_after_cancel, and swept", () => {
    const d = decide(canceled, facts([tx(8453, AMOUNT, 1, 40)]), at(41));
    expect(d.transition).toMatchObject({ to: "ERROR", reason: "paid_after_cancel", detail: { chainId: 8453 } });
    expect(d.effects).toEqual([{ kind: "sweep", chainId: 8453, amount: AMOUNT }]);
  });
  test("unconfirmed funds after cancel: wait, and look again soon", () => {
    const d = decide(canceled, facts([tx(1, AMOUNT, 1, 40)]), at(41));
    expect(d.transition).toBeUndefined();
    expect(d.wakeAt!.getTime()).toBe(at(41).getTime() + CONFIRMATION_RECHECK_MS);
  });
  test("a late unconfirmed payment after SUCCEEDED is looked at again soon", () => {
    const s = pending({ status: "SUCCEEDED", funding: { chainId: 1, amount: AMOUNT } });
    const d = decide(s, facts([tx(1, AMOUNT, 10), tx(1, 7n, 1, 50)], { sweeps: [round("confirmed", AMOUNT, { swept: AMOUNT, txHash: "0x1" })] }), at(51));
    expect(d.effects).toEqual([]);
    expect(d.wakeAt!.getTime()).toBe(at(51).getTime() + CONFIRMATION_RECHECK_MS);
  });
  test("cancel of a canceled session is refused", () => {
    expect(decide(canceled, facts([], { cancelRequest: "payer" }), at(41)).refused).toBe("not_pending");
  });
  test("funds after SUCCEEDED or ERROR are swept once, no transition", () => {
    for (const status of ["SUCCEEDED", "ERROR"] as const) {
      const s = pending({ status, funding: { chainId: 1, amount: AMOUNT } });
      const first = round("confirmed", AMOUNT, { swept: AMOUNT, txHash: "0x1" });
      const d = decide(s, facts([tx(1, AMOUNT, 10), tx(1, 3n, 10)], { sweeps: [first] }), at(50));
      expect(d.transition).toBeUndefined();
      expect(d.effects).toEqual([{ kind: "sweep", chainId: 1, amount: 3n }]);
      const again = decide(s, facts([tx(1, AMOUNT, 10), tx(1, 3n, 10)], { sweeps: [first, round("queued", 3n)] }), at(51));
      expect(again.effects).toEqual([]);
      // That round found the deposit empty (someone swept it first): still covered, never asked again.
      const empty = decide(s, facts([tx(1, AMOUNT, 10), tx(1, 3n, 10)], { sweeps: [first, round("confirmed", 3n, { swept: 0n })] }), at(52));
      expect(empty.effects).toEqual([]);
    }
  });
  test("dust below the network's minimum sweep waits at the deposit; with more funds it is swept in one go", () => {
    const s = pending({
      status: "SUCCEEDED",
      funding: { chainId: 1, amount: AMOUNT },
      networks: [{ chainId: 1, requiredBaseUnits: AMOUNT, confirmationsRequired: 3, minSweepBaseUnits: 10_000n }],
    });
    const first = round("confirmed", AMOUNT, { swept: AMOUNT, txHash: "0x1" });
    expect(decide(s, facts([tx(1, AMOUNT, 10), tx(1, 9_999n, 10)], { sweeps: [first] }), at(50)).effects).toEqual([]);
    expect(decide(s, facts([tx(1, AMOUNT, 10), tx(1, 9_999n, 10), tx(1, 1n, 10)], { sweeps: [first] }), at(50)).effects).toEqual([
      { kind: "sweep", chainId: 1, amount: 10_000n },
    ]);
  });
  test("a session's own payment is swept whatever the minimum", () => {
    const small = pending({ networks: [{ chainId: 1, requiredBaseUnits: 10_000n, confirmationsRequired: 1, minSweepBaseUnits: 1_000_000n }] });
    expect(decide(small, facts([tx(1, 10_000n, 1)]), at(6)).effects).toEqual([{ kind: "sweep", chainId: 1, amount: 10_000n }]);
  });
});

describe("value-0 transfers are no payment", () => {
  test("they neither fund, nor block a cancel, nor count at expiry", () => {
    const zero = tx(1, 0n, 5);
    expect(decide(pending(), facts([zero], { cancelRequest: "payer" }), at(1)).transition).toMatchObject({ to: "CANCELED", reason: "canceled_by_payer" });
    expect(decide(pending(), facts([zero]), at(31)).transition).toMatchObject({ to: "CANCELED", reason: "expired" });
    const s = pending({ status: "SUCCEEDED", funding: { chainId: 1, amount: AMOUNT } });
    expect(decide(s, facts([tx(1, AMOUNT, 10), zero], { sweeps: [round("confirmed", AMOUNT, { swept: AMOUNT, txHash: "0x1" })] }), at(50)).effects).toEqual([]);
  });
});

test("decide is deterministic: the same inputs give the same decision", () => {
  const f = facts([tx(1, AMOUNT, 3)]);
  expect(decide(pending(), f, at(6))).toEqual(decide(pending(), f, at(6)));
});

describe("paid by authorization (straight to the settlement address: no sweep)", () => {
  test("PENDING → FUNDED paid, method authorization and the payer; nothing to sweep, and the next step at once", () => {
    const a = authorized(1, AMOUNT, 3);
    const d = decide(pending(), facts([], { authorized: [a] }), at(6));
    expect(d.transition).toMatchObject({
      to: "FUNDED",
      reason: "paid",
      detail: { chainId: 1, amount: AMOUNT.toString(), overpaid: "0", txHashes: [a.txHash], method: "authorization", payer: PAYER_CHECKSUMMED },
      funding: { chainId: 1, amount: AMOUNT },
    });
    expect(d.effects).toEqual([]);
    expect(d.wakeAt).toEqual(at(6));
  });
  test("unconfirmed: no FUNDED, a cancel is refused (a payment is detected), and it looks again soon", () => {
    const f = facts([], { authorized: [authorized(1, AMOUNT, 2)] });
    expect(decide(pending(), f, at(6)).transition).toBeUndefined();
    expect(decide(pending(), { ...f, cancelRequest: "merchant" }, at(6)).refused).toBe("payment_detected");
  });
  test("FUNDED → SUCCEEDED swept by the payment itself: method authorization, its transaction, no sweep", () => {
    const a = authorized(1, AMOUNT, 3);
    const funded = pending({ status: "FUNDED", funding: { chainId: 1, amount: AMOUNT } });
    const d = decide(funded, facts([], { authorized: [a] }), at(6));
    expect(d.transition).toEqual({ to: "SUCCEEDED", reason: "swept", chainId: 1, detail: { chainId: 1, sweepTxHash: a.txHash, method: "authorization" } });
    expect(d.effects).toEqual([]);
  });
  test("a plain payment swept says method transfer", () => {
    const funded = pending({ status: "FUNDED", funding: { chainId: 1, amount: AMOUNT } });
    const d = decide(funded, facts([tx(1, AMOUNT, 9)], { sweeps: [round("confirmed", AMOUNT, { swept: AMOUNT, txHash: "0xs" })] }), at(7));
    expect(d.transition).toMatchObject({ reason: "swept", detail: { sweepTxHash: "0xs", method: "transfer" } });
  });
  test("a plain payment's detail says method transfer and its sender", () => {
    const d = decide(pending(), facts([{ ...tx(1, AMOUNT, 3), from: PAYER }]), at(6));
    expect(d.transition?.detail).toMatchObject({ method: "transfer", payer: PAYER_CHECKSUMMED });
  });
  test("part by transfer, part by authorization: FUNDED on the sum, only the deposit's part swept; SUCCEEDED once that sweep lands", () => {
    const a = authorized(1, AMOUNT - 1_000_000n, 3);
    const t = { ...tx(1, 1_000_000n, 3), from: "0x00000000000000000000000000000000000000bb" };
    const d = decide(pending(), facts([t], { authorized: [a] }), at(6));
    expect(d.transition).toMatchObject({ to: "FUNDED", reason: "paid", detail: { method: "authorization", txHashes: [t.txHash, a.txHash] } });
    expect((d.transition!.detail as { payer?: string }).payer).toBeUndefined(); // two senders
    expect(d.effects).toEqual([{ kind: "sweep", chainId: 1, amount: 1_000_000n }]);
    const funded = pending({ status: "FUNDED", funding: { chainId: 1, amount: AMOUNT } });
    expect(decide(funded, facts([t], { authorized: [a], sweeps: [round("queued", 1_000_000n)] }), at(7)).transition).toBeUndefined();
    const done = decide(funded, facts([t], { authorized: [a], sweeps: [round("confirmed", 1_000_000n, { swept: 1_000_000n, txHash: "0xsw" })] }), at(8));
    expect(done.transition).toMatchObject({ to: "SUCCEEDED", detail: { sweepTxHash: "0xsw", method: "transfer" } });
  });
  test("decide stays total: less than the amount by authorization (not what we offer) is underpaid at expiry, nothing to sweep", () => {
    const a = authorized(1, AMOUNT - 1n, 3);
    expect(decide(pending(), facts([], { authorized: [a] }), at(6)).transition).toBeUndefined();
    const d = decide(pending(), facts([], { authorized: [a] }), at(31));
    expect(d.transition).toMatchObject({ to: "ERROR", reason: "underpaid", detail: { shortBy: "1", method: "authorization", payer: PAYER_CHECKSUMMED } });
    expect(d.effects).toEqual([]);
  });
  test("after a cancel or expiry → ERROR paid_after_cancel, method authorization, no sweep", () => {
    const a = authorized(8453, AMOUNT, 1, 20);
    const d = decide(pending({ status: "CANCELED" }), facts([], { authorized: [a] }), at(21));
    expect(d.transition).toMatchObject({ to: "ERROR", reason: "paid_after_cancel", detail: { chainId: 8453, amount: AMOUNT.toString(), txHashes: [a.txHash], method: "authorization", payer: PAYER_CHECKSUMMED } });
    expect(d.effects).toEqual([]);
  });
  test("reorged away while FUNDED → ERROR reorged (nothing settled any more, nothing present)", () => {
    const funded = pending({ status: "FUNDED", funding: { chainId: 1, amount: AMOUNT } });
    expect(decide(funded, facts([]), at(7)).transition).toMatchObject({ to: "ERROR", reason: "reorged", detail: { amount: "0" } });
  });
  test("value 0 by authorization is no payment", () => {
    expect(decide(pending(), facts([], { authorized: [authorized(1, 0n, 9)], cancelRequest: "payer" }), at(6)).transition).toMatchObject({ reason: "canceled_by_payer" });
  });
  test("a second payment by authorization after SUCCEEDED is never swept (it is at the settlement address)", () => {
    const s = pending({ status: "SUCCEEDED", funding: { chainId: 1, amount: AMOUNT } });
    const d = decide(s, facts([tx(1, AMOUNT, 10)], { authorized: [authorized(1, AMOUNT, 10, 20)], sweeps: [round("confirmed", AMOUNT, { swept: AMOUNT, txHash: "0x1" })] }), at(21));
    expect(d.effects).toEqual([]);
    expect(d.transition).toBeUndefined();
  });
});
