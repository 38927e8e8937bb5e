/**
 * The session state machine (DESIGN.md §5) as one pure function:
 *
 *   decide(state, facts, now) → { transition?, effects, wakeAt }
 *
 * `state` is what the session row holds; `facts` is everything observed about it right
 * now (indexed transfers into its deposit addresses with their confirmations, requests,
 * sweep outcomes). The runner loads both, calls decide, and commits the transition, its
 * event and its effects in one transaction. Because decide looks at the whole current
 * picture rather than at deltas, running it twice on the same inputs gives the same
 * answer: a crash between deciding and committing repeats nothing visible.
 *
 * Rules, one per row of the state table:
 *   PENDING  → FUNDED     confirmed transfers on ONE network total ≥ amount (paid | overpaid)
 *   PENDING  → CANCELED   expiry with nothing received (expired); cancel by payer/merchant while
 *                         nothing is detected, confirmed or not (canceled_by_payer | _merchant)
 *   PENDING  → ERROR      expiry with a confirmed partial amount (underpaid); sandbox (simulated)
 *   FUNDED   → SUCCEEDED  the sweep of its funds is confirmed (swept)
 *   FUNDED   → ERROR      sweep failed past its retries (sweep_failed); funding reorged away (reorged)
 *   CANCELED → ERROR      funds confirmed after cancel/expiry (paid_after_cancel)
 * Funds confirmed in any state other than PENDING are swept too (effect `sweep`), never lost.
 * A transfer counts toward the payment only if its block is no later than the expiry; one
 * still unconfirmed at expiry holds the decision until it is confirmed or gone.
 */
import type { SessionStatus, TransitionReason } from "../../../shared/status.ts";

export interface Transfer {
  chainId: number;
  txHash: string;
  logIndex: number;
  value: bigint;
  blockTimestamp: Date;
  /** head − block + 1; 0 when not yet in a block the indexer has seen. */
  confirmations: number;
}

export interface Network {
  chainId: number;
  /** The session amount in this network's token base units. */
  requiredBaseUnits: bigint;
  confirmationsRequired: number;
}

export interface SessionState {
  status: SessionStatus;
  expiresAt: Date;
  networks: Network[];
  /** Set once FUNDED: the network that paid and the amount confirmed then. */
  funding?: { chainId: number; amount: bigint };
}

export interface Facts {
  transfers: Transfer[];
  cancelRequest?: "payer" | "merchant";
  /** Sandbox: the merchant asked for an ERROR (simulated). */
  simulateError?: boolean;
  /** The outcome of the sweep of the funding network, when there is one (`swept`: base units it moved). */
  sweep?: { state: "confirmed"; txHash: string; swept: bigint } | { state: "failed"; attempts: number; error: string };
  /**
   * Per network, whether the indexer has seen the chain up to the session's expiry (a block
   * stamped at or after it, or the chain's newest block). Until then an expiry is not decided:
   * an on-time payment may not be indexed yet. Absent: treated as caught up.
   */
  indexedPastExpiry?: Record<number, boolean>;
  /** Base units already swept (or being swept) per network, so late funds are swept once. */
  sweptOrSweeping: Record<number, bigint>;
}

export type Effect = { kind: "sweep"; chainId: number; amount: bigint };

export interface Decision {
  transition?: { to: SessionStatus; reason: TransitionReason; detail: Record<string, unknown> };
  /** When a cancel was asked for and could not be honoured, why. */
  refused?: "payment_detected" | "not_pending";
  effects: Effect[];
  /** When to look again even if nothing new is observed (expiry, confirmations); undefined: only on news. */
  wakeAt?: Date;
}

/** How long to wait before looking again at a transfer that is short of confirmations. */
export const CONFIRMATION_RECHECK_MS = 2_000;
/**
 * How long past its expiry a session waits for a lagging indexer before it is decided with
 * what is known (a late-indexed on-time payment then shows as paid_after_cancel, still swept).
 */
export const EXPIRY_INDEX_GRACE_MS = 15 * 60_000;

export function decide(state: SessionState, facts: Facts, now: Date): Decision {
  const byChain = summarize(state, facts.transfers);
  const confirmed = (chainId: number) => byChain.get(chainId)?.confirmed ?? 0n;
  const effects = lateFundsToSweep(state, facts, byChain);
  const hasUnconfirmed = [...byChain.values()].some((c) => c.unconfirmedOnTime > 0n);
  // Any transfer short of its depth, on time or late, is looked at again soon: late funds must
  // be swept too, whatever the runners' settings say about which blocks to re-scan.
  const anyUnconfirmed = [...byChain.values()].some((c) => c.all > c.confirmedAll);
  const recheck = anyUnconfirmed ? new Date(now.getTime() + CONFIRMATION_RECHECK_MS) : undefined;

  switch (state.status) {
    case "PENDING": {
      const paid = state.networks.find((n) => confirmed(n.chainId) >= n.requiredBaseUnits);
      if (paid) {
        const amount = confirmed(paid.chainId);
        const overpaid = amount - paid.requiredBaseUnits;
        return {
          transition: {
            to: "FUNDED",
            reason: overpaid > 0n ? "overpaid" : "paid",
            detail: { chainId: paid.chainId, amount: amount.toString(), overpaid: overpaid.toString(), txHashes: txHashesOn(facts, paid.chainId) },
          },
          effects: [{ kind: "sweep", chainId: paid.chainId, amount }],
        };
      }
      const detected = facts.transfers.length > 0;
      // A cancel asked after the expiry is decided as the expiry it comes after.
      if (facts.cancelRequest && now < state.expiresAt) {
        if (detected) return { refused: "payment_detected", effects, wakeAt: recheck ?? state.expiresAt };
        return {
          transition: { to: "CANCELED", reason: facts.cancelRequest === "payer" ? "canceled_by_payer" : "canceled_by_merchant", detail: {} },
          effects,
        };
      }
      if (facts.simulateError) return { transition: { to: "ERROR", reason: "simulated", detail: {} }, effects: sweepConfirmed(state, byChain) };
      if (now < state.expiresAt) return { effects, wakeAt: minDate(recheck, state.expiresAt) };
      if (facts.cancelRequest && detected) return { refused: "payment_detected", effects, wakeAt: recheck ?? new Date(now.getTime() + CONFIRMATION_RECHECK_MS) };
      if (hasUnconfirmed) return { effects, wakeAt: recheck };
      const lagging = Object.values(facts.indexedPastExpiry ?? {}).some((caughtUp) => !caughtUp);
      if (lagging && now.getTime() < state.expiresAt.getTime() + EXPIRY_INDEX_GRACE_MS) {
        return { effects, wakeAt: new Date(now.getTime() + CONFIRMATION_RECHECK_MS) };
      }
      const partial = state.networks.find((n) => confirmed(n.chainId) > 0n);
      if (partial) {
        return {
          transition: {
            to: "ERROR",
            reason: "underpaid",
            detail: {
              chainId: partial.chainId,
              amount: confirmed(partial.chainId).toString(),
              shortBy: (partial.requiredBaseUnits - confirmed(partial.chainId)).toString(),
              txHashes: txHashesOn(facts, partial.chainId),
            },
          },
          // Partial funds belong to the merchant too: sweep them.
          effects: sweepConfirmed(state, byChain),
        };
      }
      return { transition: { to: "CANCELED", reason: "expired", detail: {} }, effects };
    }
    case "FUNDED": {
      const funding = state.funding!;
      const network = state.networks.find((n) => n.chainId === funding.chainId)!;
      if (facts.cancelRequest) return { refused: "not_pending", effects };
      // SUCCEEDED only once the funding amount itself reached the settlement address.
      if (facts.sweep?.state === "confirmed" && facts.sweep.swept >= funding.amount) {
        return { transition: { to: "SUCCEEDED", reason: "swept", detail: { chainId: funding.chainId, sweepTxHash: facts.sweep.txHash } }, effects };
      }
      if (facts.sweep?.state === "failed") {
        return {
          transition: { to: "ERROR", reason: "sweep_failed", detail: { chainId: funding.chainId, attempts: facts.sweep.attempts, error: facts.sweep.error } },
          effects,
        };
      }
      // Incoming transfers stay indexed after a sweep (the sweep is an outgoing transfer), so
      // incoming funds below the amount mean the funding transfer was reorged away.
      const present = byChain.get(funding.chainId)?.all ?? 0n;
      if (present < network.requiredBaseUnits) {
        return { transition: { to: "ERROR", reason: "reorged", detail: { chainId: funding.chainId, amount: present.toString() } }, effects };
      }
      return { effects };
    }
    case "CANCELED": {
      if (facts.cancelRequest) return { refused: "not_pending", effects };
      const paidLate = state.networks.find((n) => (byChain.get(n.chainId)?.confirmedAll ?? 0n) > 0n);
      if (paidLate) {
        return {
          transition: {
            to: "ERROR",
            reason: "paid_after_cancel",
            detail: { chainId: paidLate.chainId, amount: (byChain.get(paidLate.chainId)?.confirmedAll ?? 0n).toString(), txHashes: txHashesOn(facts, paidLate.chainId) },
          },
          effects,
        };
      }
      return { effects, wakeAt: recheck };
    }
    default:
      if (facts.cancelRequest) return { refused: "not_pending", effects };
      return { effects, wakeAt: recheck };
  }
}

interface ChainSummary {
  /** Confirmed, in a block no later than the expiry: counts toward the payment. */
  confirmed: bigint;
  /** Confirmed, whenever: what can be swept. */
  confirmedAll: bigint;
  /** Not yet confirmed but on time: holds the expiry decision. */
  unconfirmedOnTime: bigint;
  /** Everything seen, confirmed or not. */
  all: bigint;
}

function summarize(state: SessionState, transfers: Transfer[]): Map<number, ChainSummary> {
  const out = new Map<number, ChainSummary>();
  for (const n of state.networks) out.set(n.chainId, { confirmed: 0n, confirmedAll: 0n, unconfirmedOnTime: 0n, all: 0n });
  for (const t of transfers) {
    const network = state.networks.find((n) => n.chainId === t.chainId);
    const s = out.get(t.chainId);
    if (!network || !s) continue; // not one of this session's networks: ignore
    const isConfirmed = t.confirmations >= network.confirmationsRequired;
    const onTime = t.blockTimestamp <= state.expiresAt;
    s.all += t.value;
    if (isConfirmed) s.confirmedAll += t.value;
    if (isConfirmed && onTime) s.confirmed += t.value;
    if (!isConfirmed && onTime) s.unconfirmedOnTime += t.value;
  }
  return out;
}

/** Leaving PENDING for good: every confirmed amount goes to the merchant. */
function sweepConfirmed(state: SessionState, byChain: Map<number, ChainSummary>): Effect[] {
  return state.networks
    .filter((n) => (byChain.get(n.chainId)?.confirmedAll ?? 0n) > 0n)
    .map((n) => ({ kind: "sweep" as const, chainId: n.chainId, amount: byChain.get(n.chainId)!.confirmedAll }));
}

/** Outside PENDING, confirmed funds not yet swept are swept (late payments, second payments). */
function lateFundsToSweep(state: SessionState, facts: Facts, byChain: Map<number, ChainSummary>): Effect[] {
  if (state.status === "PENDING") return [];
  const effects: Effect[] = [];
  for (const n of state.networks) {
    const confirmedAll = byChain.get(n.chainId)?.confirmedAll ?? 0n;
    const swept = facts.sweptOrSweeping[n.chainId] ?? 0n;
    if (confirmedAll > swept) effects.push({ kind: "sweep", chainId: n.chainId, amount: confirmedAll - swept });
  }
  return effects;
}

function txHashesOn(facts: Facts, chainId: number): string[] {
  return [...new Set(facts.transfers.filter((t) => t.chainId === chainId).map((t) => t.txHash))];
}

function minDate(a: Date | undefined, b: Date): Date {
  return a && a < b ? a : b;
}
