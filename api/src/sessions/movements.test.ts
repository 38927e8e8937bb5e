/** The step's money, worked out without I/O (movements.ts), and decide's settled count built on it. */
import { expect, test } from "bun:test";
import { authorizedOutflows, authorizedPayments, confirmedIncoming, confirmedOutflows, presentMovements, settledTransactions, type DepositFact, type IndexedAuthorized, type IndexedOutflow } from "./movements.ts";
import { settledOn, type SweepRound, type Transfer } from "./decide.ts";

const SETTLE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const deposit: DepositFact = { chain_id: 1, address: "0xdep", settlement_address: SETTLE, token_address: "0xtok", required_base_units: "100", confirmations: 3 };
const out = (txHash: string, amount: bigint, over: Partial<IndexedOutflow> = {}): IndexedOutflow => ({ chainId: 1, txHash, amount, to: SETTLE.toLowerCase(), confirmations: 3, ...over });
const round = (over: Partial<SweepRound>): SweepRound => ({ chainId: 1, state: "confirmed", amount: 100n, attempts: 1, ...over });
const transfer = (txHash: string, value: bigint, confirmations: number, chainId = 1): Transfer => ({ chainId, txHash, logIndex: 0, value, blockTimestamp: new Date(0), confirmations });

test("an outflow counts as settled only to the deposit's own settlement address (any case), at the network's depth", () => {
  const kept = confirmedOutflows([out("0xa", 60n), out("0xb", 5n, { to: "0x0000000000000000000000000000000000000bad" }), out("0xc", 7n, { confirmations: 2 }), out("0xd", 9n, { chainId: 2 })], [deposit]);
  expect(kept).toEqual([{ chainId: 1, txHash: "0xa", amount: 60n }]);
});

test("settled money is one entry per transaction: outflows summed, a receipt only for a transaction the indexer has not stored", () => {
  const settled = settledTransactions(
    [
      { chainId: 1, txHash: "0xA", amount: 40n },
      { chainId: 1, txHash: "0xa", amount: 20n }, // the same transaction, another log
    ],
    [round({ txHash: "0xa", swept: 60n }), round({ txHash: "0xb", swept: 30n }), round({ txHash: "0xc", swept: 0n }), round({ state: "sending", txHash: "0xd", swept: 9n })],
  );
  expect(settled).toEqual([
    { chainId: 1, txHash: "0xa", amount: 60n },
    { chainId: 1, txHash: "0xb", amount: 30n },
  ]);
});

test("decide's settled count agrees: the same transaction is never counted twice, and the last one is named", () => {
  const facts = { transfers: [], outflows: [{ chainId: 1, txHash: "0xa", amount: 60n }, { chainId: 1, txHash: "0xz", amount: 0n }], sweeps: [round({ txHash: "0xA", swept: 60n }), round({ txHash: "0xb", swept: 30n }), round({ chainId: 2, txHash: "0xe", swept: 5n })] };
  expect(settledOn(facts, 1)).toEqual({ amount: 90n, lastTxHash: "0xb" });
  expect(settledOn(facts, 2)).toEqual({ amount: 5n, lastTxHash: "0xe" });
  expect(settledOn({ transfers: [], outflows: [{ chainId: 1, txHash: "0xa", amount: 60n }] }, 1)).toEqual({ amount: 60n, lastTxHash: "0xa" });
  expect(settledOn({ transfers: [] }, 1)).toEqual({ amount: 0n, lastTxHash: undefined });
});

test("incoming money counts once it has value and its network's depth; a network the session does not offer never counts", () => {
  const networks = [{ chainId: 1, requiredBaseUnits: 100n, confirmationsRequired: 3 }];
  const kept = confirmedIncoming([transfer("0x1", 50n, 3), transfer("0x2", 0n, 9), transfer("0x3", 50n, 2), transfer("0x4", 50n, 99, 7)], networks);
  expect(kept.map((t) => t.txHash)).toEqual(["0x1"]);
});

test("present movements: every indexed transfer in, outflows to the settlement address, and our confirmed sweeps out, lowercase", () => {
  const present = presentMovements(
    { transfers: [transfer("0xIN", 1n, 0)], outflows: [out("0xOUT", 1n, { confirmations: 0 }), out("0xelse", 1n, { to: "0x0000000000000000000000000000000000000bad" })] },
    [deposit],
    [round({ txHash: "0xSWEEP" }), round({ state: "sending", txHash: "0xnot" })],
  );
  expect([...present].sort()).toEqual(["1:in:0xin", "1:out:0xout", "1:out:0xsweep"]);
});

const settlements = [{ chainId: 1, settlementAddress: SETTLE }];
const auth = (txHash: string, value: bigint, over: Partial<IndexedAuthorized> = {}): IndexedAuthorized => ({
  ...transfer(txHash, value, 3),
  from: "0xpayer",
  to: SETTLE.toLowerCase(),
  method: "authorization",
  ...over,
});

test("a payment by authorization counts only to the deposit's settlement address on its network", () => {
  const kept = authorizedPayments([auth("0xa", 100n), auth("0xb", 100n, { to: "0x0000000000000000000000000000000000000bad" }), auth("0xc", 100n, { chainId: 2 })], settlements);
  expect(kept).toEqual([{ chainId: 1, txHash: "0xa", logIndex: 0, value: 100n, blockTimestamp: new Date(0), confirmations: 3, from: "0xpayer", method: "authorization" }]);
});

test("a confirmed payment by authorization is settled money in its own transaction; decide counts it once and names it", () => {
  const networks = [{ chainId: 1, requiredBaseUnits: 100n, confirmationsRequired: 3 }];
  const [a] = authorizedPayments([auth("0xA", 100n)], settlements);
  expect(authorizedOutflows([a!, { ...a!, txHash: "0xshallow", confirmations: 2 }], networks)).toEqual([{ chainId: 1, txHash: "0xA", amount: 100n }]);
  expect(settledOn({ transfers: [], authorized: [a!] }, 1, networks)).toEqual({ amount: 100n, lastTxHash: "0xA" });
  // A sweep of other money after it is named last.
  expect(settledOn({ transfers: [], authorized: [a!], sweeps: [round({ txHash: "0xs", swept: 5n, amount: 5n })] }, 1, networks)).toEqual({ amount: 105n, lastTxHash: "0xs" });
  // Short of its depth, nothing is settled yet.
  expect(settledOn({ transfers: [], authorized: [{ ...a!, confirmations: 1 }] }, 1, networks)).toEqual({ amount: 0n, lastTxHash: undefined });
});

test("present movements: a payment by authorization is there in and out (one transaction)", () => {
  const [a] = authorizedPayments([auth("0xAUTH", 100n, { confirmations: 0 })], settlements);
  expect([...presentMovements({ transfers: [], outflows: [], authorized: [a!] }, [deposit], [])].sort()).toEqual(["1:in:0xauth", "1:out:0xauth"]);
});
