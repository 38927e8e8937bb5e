/**
 * The sweeper's pure parts, apart from every RPC and SQL call (sweeper.ts does the I/O):
 *
 *   planBatch        — claimed sweep rows → one sweep call: deposits deduplicated (one sweep of
 *                      a deposit moves its whole balance), each checked against its session's
 *                      predicted address, and the calldata.
 *   marketFees, bumpFees, withGasMargin — EIP-1559 fees and the gas limit with their margins;
 *                      the fees of a replacement (same nonce) transaction.
 *   interpretReceipt — a mined receipt → per sweep: confirmed (with the amount its tokens'
 *                      Transfers deposit → settlement moved, in the session's unit) or a failed attempt (SweepFailed for
 *                      its deposit, the whole transaction reverted, or no such Transfer at all).
 *   retryDelayMs     — backoff between failed attempts.
 */
import { getAddress, parseEventLogs, zeroAddress, type Address, type Hex, type Log } from "viem";
import { depositFactoryAbi } from "../../../shared/contracts/artifacts.ts";
import { buildSweepCall, predictDepositAddress, sessionSalt } from "../../../shared/contracts/addresses.ts";
import { marketFees, type Fees } from "../../../shared/chains/fees.ts";
import type { SweepToken } from "./tokens.ts";
import { messageOf } from "../../../shared/describe-error.ts";

/** A claimed sweep row, as the planner needs it (addresses in any case). */
export interface SweepRow {
  id: string;
  sessionId: string;
  depositAddress: string;
  settlementAddress: string;
  /** The tokens to move (sweeps/tokens.ts); [the zero address] means native coin only (tokens: [] in the call). */
  tokens: readonly SweepToken[];
  /** The session's unit on the network: what moved is counted in it. */
  unit: number;
  /** Attempts so far, this one not included. */
  attempts: number;
}

export interface PlannedDeposit {
  depositAddress: Address;
  settlement: Address;
  salt: Hex;
  /** Every sweep row of this deposit in the batch, oldest first: one sweep call serves them all. */
  sweepIds: string[];
}

export interface BatchPlan {
  /** The tokens of this batch (checksummed); [] = native coin only. */
  tokens: Address[];
  deposits: PlannedDeposit[];
  /** Rows whose deposit address is not the one the factory would sweep: never sent. */
  mismatched: { id: string; error: string }[];
  /** Rows of other tokens than the batch's: left queued for a later batch. */
  deferred: string[];
  call: { to: Address; data: Hex } | null;
}

const lower = (a: string) => a.toLowerCase();

/**
 * Builds one sweep call from claimed rows (oldest first). A batch carries one set of tokens: that
 * of the first row (a session's accepted stablecoins, or a recovery's one token); rows of other
 * sets are deferred (a broken or hostile token in a recovery sweep must not fail the deposits of
 * every other session in the batch). Rows of the same deposit share one entry: listing a deposit
 * twice would fail the second CREATE2.
 */
export function planBatch(rows: readonly SweepRow[], factory: Address): BatchPlan {
  const first = rows[0];
  const setKey = (r: SweepRow) => tokenSetKey(r.tokens);
  const key0 = first ? setKey(first) : "";
  const tokens = first ? first.tokens.filter((t) => lower(t.address) !== lower(zeroAddress)).map((t) => getAddress(t.address)) : [];
  const byDeposit = new Map<string, PlannedDeposit>();
  const mismatched: { id: string; error: string }[] = [];
  const deferred: string[] = [];
  for (const row of rows) {
    if (setKey(row) !== key0) {
      deferred.push(row.id);
      continue;
    }
    const key = lower(row.depositAddress);
    const existing = byDeposit.get(key);
    if (existing) {
      existing.sweepIds.push(row.id);
      continue;
    }
    let settlement: Address;
    let salt: Hex;
    let predicted: Address;
    try {
      settlement = getAddress(row.settlementAddress);
      salt = sessionSalt(row.sessionId);
      predicted = predictDepositAddress({ factory, settlement, sessionSalt: salt });
    } catch (e) {
      mismatched.push({ id: row.id, error: `cannot sweep: ${messageOf(e)}` });
      continue;
    }
    if (lower(predicted) !== key) {
      mismatched.push({
        id: row.id,
        error: `deposit address ${row.depositAddress} is not the factory ${factory}'s address for session ${row.sessionId} and settlement ${settlement} (${predicted})`,
      });
      continue;
    }
    byDeposit.set(key, { depositAddress: predicted, settlement, salt, sweepIds: [row.id] });
  }
  const deposits = [...byDeposit.values()];
  const call =
    deposits.length === 0
      ? null
      : buildSweepCall({ factory, deposits: deposits.map((d) => ({ settlement: d.settlement, sessionSalt: d.salt })), tokens });
  return { tokens, deposits, mismatched, deferred, call };
}

/** A set of tokens as one comparable key (order does not matter). */
function tokenSetKey(tokens: readonly SweepToken[]): string {
  return tokens
    .map((t) => lower(t.address))
    .sort()
    .join(",");
}

// A new transaction's fees (the market's) are shared with the authorization submissions: shared/chains/fees.ts.
export { marketFees, type Fees };

/** `value` × (100 + percent) / 100, rounded up, and always at least value + 1. */
export function bumpBy(value: bigint, percent: number): bigint {
  const bumped = (value * BigInt(100 + percent) + 99n) / 100n;
  return bumped > value ? bumped : value + 1n;
}

/**
 * Fees of a replacement for a transaction sent with `previous`: each fee at least `percent`
 * above the old one (nodes want ≥ 10 %, geth and anvil 10 %, some 12.5 %), and never below
 * what the market asks now. The tip never exceeds the fee cap.
 */
export function bumpFees(previous: Fees, market: Fees, percent = 25): Fees {
  const maxFeePerGas = max(bumpBy(previous.maxFeePerGas, percent), market.maxFeePerGas);
  const tip = max(bumpBy(previous.maxPriorityFeePerGas, percent), market.maxPriorityFeePerGas);
  return { maxFeePerGas, maxPriorityFeePerGas: tip > maxFeePerGas ? maxFeePerGas : tip };
}

/** Gas limit from an estimate: +25 % and +20,000 (a token's first transfer into a new holder costs more than estimated when state moved on). */
export function withGasMargin(estimate: bigint): bigint {
  return (estimate * 125n) / 100n + 20_000n;
}

export interface ReceiptLike {
  status: "success" | "reverted";
  logs: readonly Pick<Log, "address" | "topics" | "data">[];
}

export interface SweepInFlight {
  id: string;
  sessionId: string;
  depositAddress: string;
  settlementAddress: string;
  /** What the row moves (sweeps/tokens.ts); [the zero address]: native coin only. */
  tokens: readonly SweepToken[];
  /** The session's unit on the network: the amount moved is counted in it. */
  unit: number;
}

export type SweepOutcome =
  | { id: string; outcome: "confirmed"; sweptAmount: bigint }
  | { id: string; outcome: "failed"; error: string };

/**
 * What a mined sweep transaction did to each of its sweeps. Rows are attributed in the given
 * order (oldest first): when several rows share a (deposit, token), the first gets the amount
 * moved and the others 0 (the one call moved the whole balance once).
 */
export function interpretReceipt(receipt: ReceiptLike, sweeps: readonly SweepInFlight[], factory: Address): SweepOutcome[] {
  if (receipt.status !== "success") {
    return sweeps.map((s) => ({ id: s.id, outcome: "failed", error: "sweep transaction reverted" }));
  }
  const logs = receipt.logs.map((l) => ({ ...l, topics: [...l.topics] })) as unknown as Log[];
  const failed = new Set(
    parseEventLogs({ abi: depositFactoryAbi, eventName: "SweepFailed", logs, strict: false })
      .filter((e) => lower(e.address) === lower(factory))
      .map((e) => `${lower(e.args.settlement ?? "")}:${(e.args.salt ?? "").toLowerCase()}`),
  );
  // token → deposit → settlement → amount
  const moved = new Map<string, bigint>();
  const TRANSFER = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
  for (const l of receipt.logs) {
    if (l.topics[0]?.toLowerCase() !== TRANSFER || l.topics.length !== 3) continue;
    const from = `0x${l.topics[1]!.slice(26)}`.toLowerCase();
    const to = `0x${l.topics[2]!.slice(26)}`.toLowerCase();
    const key = `${lower(l.address)}:${from}:${to}`;
    const value = l.data === "0x" ? 0n : BigInt(l.data);
    moved.set(key, (moved.get(key) ?? 0n) + value);
  }
  const attributed = new Set<string>();
  return sweeps.map((s): SweepOutcome => {
    if (failed.has(`${lower(s.settlementAddress)}:${sessionSalt(s.sessionId).toLowerCase()}`)) {
      return { id: s.id, outcome: "failed", error: "SweepFailed: the deposit's sweep reverted on-chain (a token refused the transfer)" };
    }
    const key = `${tokenSetKey(s.tokens)}:${lower(s.depositAddress)}:${lower(s.settlementAddress)}`;
    if (attributed.has(key)) return { id: s.id, outcome: "confirmed", sweptAmount: 0n };
    attributed.add(key);
    // What each of its tokens moved deposit → settlement, in the session's unit (every accepted
    // stablecoin counts at par; a token with fewer decimals than the unit is scaled up, exactly).
    const native = s.tokens.every((t) => lower(t.address) === lower(zeroAddress));
    let amount = 0n;
    for (const t of s.tokens) {
      const moved1 = moved.get(`${lower(t.address)}:${lower(s.depositAddress)}:${lower(s.settlementAddress)}`) ?? 0n;
      amount += moved1 * 10n ** BigInt(Math.max(0, s.unit - t.decimals));
    }
    // A sweep is done only when its receipt shows a token leaving the deposit for the bound
    // settlement address. A call to an address without code also "succeeds"; a deposit emptied
    // by someone else in between moves nothing: both are a failed attempt, never a confirmation.
    // (Native-coin recoveries move no token: for them the call's success is the outcome.)
    if (amount === 0n && !native) {
      return { id: s.id, outcome: "failed", error: "the receipt shows no Transfer from the deposit to its settlement address" };
    }
    return { id: s.id, outcome: "confirmed", sweptAmount: amount };
  });
}

/**
 * Wait after the `attempt`-th failed attempt (1-based): base × 2^(attempt−1), at most one hour,
 * ± 20 % jitter (`random` in [0, 1)).
 */
export function retryDelayMs(attempt: number, baseMs: number, random = 0.5): number {
  const raw = Math.min(baseMs * 2 ** Math.max(0, attempt - 1), 3_600_000);
  return Math.round(raw * (0.8 + 0.4 * random));
}

/** Whether `head` is deep enough above `block` (the block itself counts as one confirmation). */
export function isConfirmed(block: bigint, head: bigint, confirmations: number): boolean {
  return head >= block && head - block + 1n >= BigInt(confirmations);
}

/** The nonce for a new transaction: past every nonce we recorded, and past what the chain has pending (other senders may share the key). */
export function nextNonce(dbNext: bigint | null, chainPending: bigint): bigint {
  return dbNext !== null && dbNext > chainPending ? dbNext : chainPending;
}

function max(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}
