import { describe, expect, test } from "bun:test";
import { decodeFunctionData, encodeAbiParameters, encodeEventTopics, getAddress, pad, zeroAddress, type Address, type Hex } from "viem";
import { depositFactoryAbi } from "../../../shared/contracts/artifacts.ts";
import { predictDepositAddress, predictedFactoryAddress, sessionSalt } from "../../../shared/contracts/addresses.ts";
import { bumpBy, bumpFees, interpretReceipt, isConfirmed, marketFees, nextNonce, planBatch, retryDelayMs, withGasMargin, type SweepRow } from "./plan.ts";

const factory = predictedFactoryAddress();
const TOKEN = "0xe2b4152e3b6cc732b52df67f42b2cbdbaee385a5";
const OTHER_TOKEN = "0x1111111111111111111111111111111111111111";
const SETTLE: Address = "0x2222222222222222222222222222222222222222";
const TRANSFER = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";

let n = 0;
function row(over: Partial<SweepRow> = {}): SweepRow {
  const sessionId = over.sessionId ?? `ps_test${++n}`;
  const settlementAddress = over.settlementAddress ?? SETTLE;
  return {
    id: `swp_${n}_${Math.random()}`,
    sessionId,
    settlementAddress,
    depositAddress: predictDepositAddress({ factory, settlement: settlementAddress as Address, sessionSalt: sessionSalt(sessionId) }).toLowerCase(),
    tokens: [{ address: TOKEN, decimals: 6 }],
    unit: 6,
    attempts: 0,
    ...over,
  };
}

describe("planBatch", () => {
  test("one entry per deposit, several rows of a deposit share it, one set of tokens per batch", () => {
    const a = row();
    const a2 = { ...row({ sessionId: a.sessionId }), depositAddress: a.depositAddress.toUpperCase().replace("0X", "0x") };
    const b = row();
    const other = row({ tokens: [{ address: OTHER_TOKEN, decimals: 18 }] });
    const plan = planBatch([a, b, a2, other], factory);
    expect(plan.tokens).toEqual([getAddress(TOKEN)]);
    expect(plan.deposits.map((d) => d.sweepIds)).toEqual([[a.id, a2.id], [b.id]]);
    expect(plan.deferred).toEqual([other.id]);
    expect(plan.mismatched).toEqual([]);
    const decoded = decodeFunctionData({ abi: depositFactoryAbi, data: plan.call!.data });
    expect(decoded.functionName).toBe("sweepBatch");
    expect(plan.call!.to).toBe(factory);
    const [deposits, tokens] = decoded.args as unknown as [{ settlement: Address; salt: Hex }[], Address[]];
    expect(deposits.map((d) => d.salt)).toEqual([sessionSalt(a.sessionId), sessionSalt(b.sessionId)]);
    expect(tokens).toEqual([getAddress(TOKEN)]);
  });

  test("a single deposit uses sweep(); native-coin rows sweep no token", () => {
    const plan = planBatch([row({ tokens: [{ address: zeroAddress, decimals: 18 }] })], factory);
    const decoded = decodeFunctionData({ abi: depositFactoryAbi, data: plan.call!.data });
    expect(decoded.functionName).toBe("sweep");
    expect((decoded.args as unknown as unknown[])[2]).toEqual([]);
  });

  test("a session's accepted stablecoins go together, in any order; a recovery of one of them alone is another set", () => {
    const both = [{ address: TOKEN, decimals: 6 }, { address: OTHER_TOKEN, decimals: 6 }];
    const a = row({ tokens: both });
    const b = row({ tokens: [...both].reverse() });
    const recovery = row({ tokens: [{ address: OTHER_TOKEN, decimals: 6 }] });
    const plan = planBatch([a, recovery, b], factory);
    expect(plan.tokens).toEqual([getAddress(TOKEN), getAddress(OTHER_TOKEN)]);
    expect(plan.deposits.map((d) => d.sweepIds[0])).toEqual([a.id, b.id]);
    expect(plan.deferred).toEqual([recovery.id]);
    const [, tokens] = decodeFunctionData({ abi: depositFactoryAbi, data: plan.call!.data }).args as unknown as [unknown, Address[]];
    expect(tokens).toEqual([getAddress(TOKEN), getAddress(OTHER_TOKEN)]);
  });

  test("a deposit address that is not the session's is refused, never sent", () => {
    const good = row();
    const bad = { ...row(), depositAddress: "0x3333333333333333333333333333333333333333" };
    const zero = { ...row(), settlementAddress: zeroAddress };
    const plan = planBatch([good, bad, zero], factory);
    expect(plan.deposits.map((d) => d.sweepIds[0])).toEqual([good.id]);
    expect(plan.mismatched.map((m) => m.id)).toEqual([bad.id, zero.id]);
    expect(planBatch([bad], factory).call).toBeNull();
    expect(planBatch([], factory).call).toBeNull();
  });
});

describe("fees and gas", () => {
  test("market fees: twice the base fee plus the tip", () => {
    expect(marketFees(10n, 2n)).toEqual({ maxFeePerGas: 22n, maxPriorityFeePerGas: 2n });
    expect(marketFees(10n, 0n).maxPriorityFeePerGas).toBe(1n);
  });

  test("a replacement raises both fees by at least 25 % (≥ the 12.5 % nodes require) and follows the market up", () => {
    expect(bumpBy(100n, 25)).toBe(125n);
    expect(bumpBy(1n, 25)).toBe(2n);
    expect(bumpBy(0n, 25)).toBe(1n);
    const prev = { maxFeePerGas: 1_000_000_000n, maxPriorityFeePerGas: 100_000_000n };
    const calm = bumpFees(prev, { maxFeePerGas: 500_000_000n, maxPriorityFeePerGas: 50_000_000n });
    expect(calm).toEqual({ maxFeePerGas: 1_250_000_000n, maxPriorityFeePerGas: 125_000_000n });
    expect(calm.maxFeePerGas * 1000n).toBeGreaterThanOrEqual(prev.maxFeePerGas * 1125n);
    const surge = bumpFees(prev, { maxFeePerGas: 5_000_000_000n, maxPriorityFeePerGas: 300_000_000n });
    expect(surge).toEqual({ maxFeePerGas: 5_000_000_000n, maxPriorityFeePerGas: 300_000_000n });
    const capped = bumpFees({ maxFeePerGas: 10n, maxPriorityFeePerGas: 10n }, { maxFeePerGas: 1n, maxPriorityFeePerGas: 100n });
    expect(capped.maxPriorityFeePerGas).toBeLessThanOrEqual(capped.maxFeePerGas);
  });

  test("gas limit margin, confirmations, nonce choice, backoff", () => {
    expect(withGasMargin(100_000n)).toBe(145_000n);
    expect(isConfirmed(10n, 10n, 1)).toBe(true);
    expect(isConfirmed(10n, 10n, 2)).toBe(false);
    expect(isConfirmed(10n, 11n, 2)).toBe(true);
    expect(isConfirmed(10n, 9n, 1)).toBe(false);
    expect(nextNonce(null, 3n)).toBe(3n);
    expect(nextNonce(7n, 3n)).toBe(7n);
    expect(nextNonce(2n, 3n)).toBe(3n);
    expect(retryDelayMs(1, 1000, 0.5)).toBe(1000);
    expect(retryDelayMs(3, 1000, 0.5)).toBe(4000);
    expect(retryDelayMs(1, 1000, 0)).toBe(800);
    expect(retryDelayMs(1, 1000, 0.999)).toBeLessThanOrEqual(1200);
    expect(retryDelayMs(40, 1000, 0.5)).toBe(3_600_000);
  });
});

describe("interpretReceipt", () => {
  const topicOf = (a: string) => pad(a.toLowerCase() as Hex, { size: 32 });
  const transfer = (token: string, from: string, to: string, value: bigint) => ({
    address: token as Address,
    topics: [TRANSFER, topicOf(from), topicOf(to)] as [Hex, ...Hex[]],
    data: encodeAbiParameters([{ type: "uint256" }], [value]),
  });
  async function sweepFailedLog(settlement: string, salt: Hex) {
    const topics = encodeEventTopics({ abi: depositFactoryAbi, eventName: "SweepFailed", args: { settlement: settlement as Address, salt } });
    return { address: factory, topics: topics as [Hex, ...Hex[]], data: "0x" as Hex };
  }

  test("amounts from the token's Transfer deposit → settlement; SweepFailed fails only its deposit; duplicates get 0; no Transfer is a failed attempt", async () => {
    const a = row();
    const a2 = { ...row({ sessionId: a.sessionId }), depositAddress: a.depositAddress };
    const b = row();
    const c = row();
    const empty = row();
    const logs = [
      transfer(TOKEN, a.depositAddress, SETTLE, 5_000_000n),
      transfer(TOKEN, b.depositAddress, SETTLE, 7n),
      transfer(OTHER_TOKEN, empty.depositAddress, SETTLE, 99n), // another token: not this sweep's
      transfer(TOKEN, b.depositAddress, "0x4444444444444444444444444444444444444444", 1n), // elsewhere: not counted
      await sweepFailedLog(SETTLE, sessionSalt(c.sessionId)),
    ];
    const out = interpretReceipt({ status: "success", logs }, [a, a2, b, c, empty], factory);
    expect(out).toEqual([
      { id: a.id, outcome: "confirmed", sweptAmount: 5_000_000n },
      { id: a2.id, outcome: "confirmed", sweptAmount: 0n },
      { id: b.id, outcome: "confirmed", sweptAmount: 7n },
      { id: c.id, outcome: "failed", error: expect.stringContaining("SweepFailed") as unknown as string },
      // Nothing of its token left the deposit for its settlement (a missing factory, an emptied deposit): failed.
      { id: empty.id, outcome: "failed", error: "the receipt shows no Transfer from the deposit to its settlement address" },
    ]);
  });

  test("a session's stablecoins swept together: what each moved, in the session's unit, added up (a 2-decimal token scaled up exactly)", () => {
    const TWO_DECIMALS = "0x5555555555555555555555555555555555555555";
    const tokens = [{ address: TOKEN, decimals: 6 }, { address: OTHER_TOKEN, decimals: 6 }, { address: TWO_DECIMALS, decimals: 2 }];
    const a = row({ tokens });
    const onlyOne = row({ tokens });
    const logs = [
      transfer(TOKEN, a.depositAddress, SETTLE, 600_000n),
      transfer(OTHER_TOKEN, a.depositAddress, SETTLE, 400_000n),
      transfer(TWO_DECIMALS, a.depositAddress, SETTLE, 25n), // 0.25 → 250,000 in a 6-decimal unit
      transfer(OTHER_TOKEN, onlyOne.depositAddress, SETTLE, 1_000_000n),
    ];
    expect(interpretReceipt({ status: "success", logs }, [a, onlyOne], factory)).toEqual([
      { id: a.id, outcome: "confirmed", sweptAmount: 1_250_000n },
      { id: onlyOne.id, outcome: "confirmed", sweptAmount: 1_000_000n },
    ]);
  });

  test("a SweepFailed from another contract is ignored; a reverted transaction fails every sweep", async () => {
    const a = row();
    const fake = { ...(await sweepFailedLog(SETTLE, sessionSalt(a.sessionId))), address: OTHER_TOKEN as Address };
    const moved = transfer(TOKEN, a.depositAddress, SETTLE, 3n);
    expect(interpretReceipt({ status: "success", logs: [fake, moved] }, [a], factory)[0]!.outcome).toBe("confirmed");
    const out = interpretReceipt({ status: "reverted", logs: [] }, [a, row()], factory);
    expect(out.map((o) => o.outcome)).toEqual(["failed", "failed"]);
  });
});
