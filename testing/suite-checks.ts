/**
 * The end checks the fault suites (testing/faults.ts, testing/cluster.ts) share, once the
 * service has recovered: no transition lost or doubled, every webhook event delivered and first
 * delivered in order, and the money — what was paid is what the settlement received, nothing
 * left behind. Each returns the problems it found (empty: all good), so that a suite can report
 * every one of them at once.
 */
import type { Address, PublicClient } from "viem";
import { testUsdAbi } from "../shared/contracts/artifacts.ts";
import { MONEY_EVENT_REASONS } from "../shared/status.ts";
import type { Receiver } from "./webhook-receiver.ts";

export interface HistoryEntry {
  sequence: number;
  status: string;
  reason: string;
}

/** A session event as delivered to the receiver (and answered 2xx). */
export interface Delivery {
  id: string;
  sessionId: string;
  sequence: number;
}

const isMoneyEvent = (h: HistoryEntry) => (MONEY_EVENT_REASONS as readonly string[]).includes(h.reason);

/**
 * A session's history: sequences 1..n, each status reached at most once (a money event is no
 * transition) and, when given, exactly the transitions `expected`.
 */
export function historyProblems(sessionId: string, history: HistoryEntry[], expected?: string[]): string[] {
  const problems: string[] = [];
  const seqs = history.map((h) => h.sequence);
  if (!seqs.every((s, i) => s === i + 1)) problems.push(`${sessionId}: sequences ${seqs.join(",")}`);
  const statuses = history.filter((h) => !isMoneyEvent(h)).map((h) => h.status);
  if (new Set(statuses).size !== statuses.length) problems.push(`${sessionId}: a status recorded twice (${statuses.join(" → ")})`);
  if (expected && statuses.join() !== expected.join()) problems.push(`${sessionId}: transitions ${statuses.join(" → ")}, expected ${expected.join(" → ")}`);
  return problems;
}

/** The session events the receiver got and answered 2xx, in the order they arrived. */
export function deliveries(receiver: Receiver): Delivery[] {
  return receiver.received
    .filter((r) => r.answered !== undefined && r.answered < 300 && r.json?.data?.paymentSessionId)
    .map((r) => ({ id: r.id, sessionId: r.json.data.paymentSessionId as string, sequence: Number(r.json.data.sequence ?? 0) }));
}

/** Every event delivered at least once; per session, the first delivery of each event in sequence order. */
export function deliveryProblems(events: { sessionId: string; sequence: number }[], delivered: Delivery[]): string[] {
  const problems: string[] = [];
  const got = new Set(delivered.map((d) => `${d.sessionId}#${d.sequence}`));
  for (const e of events) if (!got.has(`${e.sessionId}#${e.sequence}`)) problems.push(`event ${e.sessionId}#${e.sequence} never delivered`);
  const firsts = new Map<string, number[]>();
  for (const d of delivered) {
    const seen = firsts.get(d.sessionId) ?? [];
    if (!seen.includes(d.sequence)) seen.push(d.sequence);
    firsts.set(d.sessionId, seen);
  }
  for (const [id, seqs] of firsts) if (!seqs.every((q, i) => i === 0 || q > seqs[i - 1]!)) problems.push(`${id}: first deliveries out of order (${seqs.join(",")})`);
  return problems;
}

/** The settlement addresses received exactly `paid`, and no deposit address holds anything. */
export async function moneyProblems(args: { publicClient: PublicClient; token: Address; settlements: Address[]; deposits: Address[]; paid: bigint }) {
  const balance = (a: Address) => args.publicClient.readContract({ address: args.token, abi: testUsdAbi, functionName: "balanceOf", args: [a] }) as Promise<bigint>;
  let settled = 0n;
  for (const a of args.settlements) settled += await balance(a);
  let left = 0n;
  for (const a of args.deposits) left += await balance(a);
  const problems: string[] = [];
  if (left !== 0n) problems.push(`nothing left on deposits (${left} base units are)`);
  if (settled !== args.paid) problems.push(`swept sum = paid sum (${settled} vs ${args.paid})`);
  return { settled, left, problems };
}
