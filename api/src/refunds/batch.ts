/**
 * Which due refunds go out in the relayer's next transaction, pure (docs/refunds.md, "Spend
 * guards"): in order, each refund whose merchant stays within its day's limit and whose vault
 * still holds every part; the others wait, with the reason. A refund never goes out in part.
 */
import type { WaitingReason } from "./logic.ts";

export interface DueRefund {
  id: string;
  /** The merchant and environment: whose vault, and whose day's limit. */
  owner: string;
  /** In minor units (cents), rounded up: what the day's limit counts. */
  minor: bigint;
  parts: readonly { token: string; baseUnits: bigint }[];
}

export interface BatchChoice {
  send: string[];
  wait: { id: string; reason: WaitingReason }[];
}

/** What a refund of `amount` in a unit of `unitDecimals` counts against a limit in cents (rounded up: never under). */
export function minorOf(amount: bigint, unitDecimals: number): bigint {
  const scale = 10n ** BigInt(unitDecimals - 2);
  return (amount + scale - 1n) / scale;
}

/**
 * `sentToday`: what each owner's refunds sent in the last 24 hours (minor units); `balances`: what
 * each owner's vault holds per token (`owner token` → base units), as read from the chain.
 */
export function chooseBatch(due: readonly DueRefund[], sentToday: ReadonlyMap<string, bigint>, balances: ReadonlyMap<string, bigint>, maxPerDayMinor: bigint): BatchChoice {
  const spent = new Map(sentToday);
  const left = new Map(balances);
  const out: BatchChoice = { send: [], wait: [] };
  for (const r of due) {
    const today = spent.get(r.owner) ?? 0n;
    if (today + r.minor > maxPerDayMinor) {
      out.wait.push({ id: r.id, reason: "spend_guard" });
      continue;
    }
    const need = new Map<string, bigint>();
    for (const p of r.parts) need.set(p.token, (need.get(p.token) ?? 0n) + p.baseUnits);
    if ([...need].some(([token, n]) => (left.get(`${r.owner} ${token}`) ?? 0n) < n)) {
      out.wait.push({ id: r.id, reason: "insufficient_refund_balance" });
      continue;
    }
    for (const [token, n] of need) left.set(`${r.owner} ${token}`, left.get(`${r.owner} ${token}`)! - n);
    spent.set(r.owner, today + r.minor);
    out.send.push(r.id);
  }
  return out;
}

/** A mined transfer as its receipt's Transfer log says it (addresses lowercase). */
export interface LoggedTransfer {
  token: string;
  from: string;
  to: string;
  value: bigint;
}

/**
 * Whether every part of a refund is in the receipt: a Transfer of its token from its vault to its
 * destination of exactly its amount, each log counted for one part only (`used` is shared across
 * the refunds of one receipt).
 */
export function partsPaid(parts: readonly { token: string; to: string; baseUnits: bigint }[], vault: string, logs: readonly LoggedTransfer[], used: Set<number>): boolean {
  const mine: number[] = [];
  for (const p of parts) {
    const i = logs.findIndex((l, j) => !used.has(j) && !mine.includes(j) && l.token === p.token && l.from === vault && l.to === p.to && l.value === p.baseUnits);
    if (i < 0) return false;
    mine.push(i);
  }
  for (const i of mine) used.add(i);
  return true;
}
