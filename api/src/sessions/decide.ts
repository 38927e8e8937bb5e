/**
 * The session state machine (docs/session-lifecycle.md, "The state table") as one pure function:
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
 *   PENDING  → FUNDED     confirmed transfers on ONE network total ≥ amount (paid | overpaid);
 *                         a payment by the payer's signed authorization counts as a transfer
 *                         (straight to the settlement address: nothing to sweep)
 *   PENDING  → CANCELED   expiry with nothing received (expired); cancel by payer/merchant while
 *                         nothing is detected, confirmed or not (canceled_by_payer | _merchant)
 *   PENDING  → ERROR      expiry with a confirmed partial amount (underpaid); sandbox (simulated)
 *   FUNDED   → SUCCEEDED  the funding amount reached the settlement address (swept): from the
 *                         deposit, whoever sent the sweep (our relayer or anyone else), or by
 *                         the payment by authorization itself (method "authorization", no sweep)
 *   FUNDED   → ERROR      sweep failed past its retries (sweep_failed); funding reorged away (reorged)
 *   CANCELED → ERROR      funds confirmed after cancel/expiry (paid_after_cancel)
 * Funds confirmed in any state other than PENDING are swept too (effect `sweep`), never lost;
 * amounts below the network's minimum sweep wait at the deposit (recorded) for the next sweep.
 * A transfer counts toward the payment only if its block is no later than the expiry; one
 * still unconfirmed at expiry holds the decision until it is confirmed or gone. Transfers of
 * value 0 are no payment at all: they are ignored.
 *
 * The sweep-round policy (what one more sweep would be for) lives here too, so that the
 * whole money rule is read and tested in one file: a round is one row of app.sweeps; each
 * covers the amount it was asked for, whatever it found at the deposit (a round that found
 * the deposit already emptied by someone else covers it too: no round is ever asked twice for
 * the same money, so no path spends relayer gas in a loop).
 */
import type { SessionStatus } from "../../../shared/status.ts";
import { checksumAddress } from "../../../shared/contracts/keccak.ts";
import type { TransitionReasonAndDetail } from "./event-detail.ts";
import { authorizedOutflows, settledTransactions } from "./movements.ts";
import type { AuthorizedPayment, Network, Outflow, PaymentMethod, SweepRound, Transfer } from "./facts.ts";

export type { AuthorizedPayment, Network, Outflow, SweepRound, Transfer } from "./facts.ts";

export interface SessionState {
  status: SessionStatus;
  expiresAt: Date;
  networks: Network[];
  /** Set once FUNDED: the network that paid and the amount confirmed then. */
  funding?: { chainId: number; amount: bigint };
}

export interface Facts {
  /** Incoming transfers into the session's deposit addresses. */
  transfers: Transfer[];
  /**
   * Payments by authorization to the session's settlement address (confirmed or not): money in
   * and settled in one transaction; never swept.
   */
  authorized?: AuthorizedPayment[];
  /** Confirmed outgoing transfers deposit → settlement, from the indexer. */
  outflows?: Outflow[];
  /** Every sweep round of the session, oldest first (its own token's only). */
  sweeps?: SweepRound[];
  cancelRequest?: "payer" | "merchant";
  /** Sandbox: the merchant asked for an ERROR (simulated). */
  simulateError?: boolean;
  /**
   * Per network, whether the indexer has seen the chain up to the session's expiry (a block
   * stamped at or after it, or the chain's newest block). Until then an expiry is not decided:
   * an on-time payment may not be indexed yet. Absent: treated as caught up.
   */
  indexedPastExpiry?: Record<number, boolean>;
}

export type Effect = { kind: "sweep"; chainId: number; amount: bigint };

/**
 * A status change: its reason with the detail of that reason (event-detail.ts, kept as it is
 * for the merchant), so a detail that does not fit its reason does not compile.
 */
export type Transition = TransitionReasonAndDetail & {
  to: SessionStatus;
  /** The network the transition concerns, when there is one (its money movements go with it). */
  chainId?: number;
  /** FUNDED: the network that paid and the amount confirmed then, kept on the session. */
  funding?: { chainId: number; amount: bigint };
};

export interface Decision {
  transition?: Transition;
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
/** After this many failed rounds on a network, funds wait for an operator instead of a new round. */
export const MAX_SWEEP_ROUNDS = 3;

export function decide(state: SessionState, given: Facts, now: Date): Decision {
  // A Transfer of value 0 moves nothing (anyone can emit one to any address): no payment at all.
  const facts: Facts = { ...given, transfers: given.transfers.filter((t) => t.value > 0n), authorized: (given.authorized ?? []).filter((t) => t.value > 0n) };
  const byChain = summarize(state, facts);
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
        // Only what came to the deposit address is swept; a payment by authorization is already
        // at the settlement address: then the next step (at once) sees it settled → SUCCEEDED.
        const toSweep = byChain.get(paid.chainId)?.confirmedAtDeposit ?? 0n;
        return {
          transition: {
            to: "FUNDED",
            reason: overpaid > 0n ? "overpaid" : "paid",
            detail: { chainId: paid.chainId, amount: amount.toString(), overpaid: overpaid.toString(), txHashes: txHashesOn(facts, paid.chainId), ...paymentOn(facts, paid.chainId) },
            chainId: paid.chainId,
            funding: { chainId: paid.chainId, amount },
          },
          effects: toSweep > 0n ? [{ kind: "sweep", chainId: paid.chainId, amount: toSweep }] : [],
          ...(toSweep > 0n ? {} : { wakeAt: now }),
        };
      }
      const detected = facts.transfers.length > 0 || (facts.authorized?.length ?? 0) > 0;
      // A cancel asked after the expiry is decided as the expiry it comes after.
      if (facts.cancelRequest && now < state.expiresAt) {
        if (detected) return { refused: "payment_detected", effects, wakeAt: recheck ?? state.expiresAt };
        return {
          transition: { to: "CANCELED", reason: facts.cancelRequest === "payer" ? "canceled_by_payer" : "canceled_by_merchant", detail: {} },
          effects,
        };
      }
      if (facts.simulateError) return { transition: { to: "ERROR", reason: "simulated", detail: {} }, effects: sweepConfirmed(state, byChain, facts) };
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
            chainId: partial.chainId,
            detail: {
              chainId: partial.chainId,
              amount: confirmed(partial.chainId).toString(),
              shortBy: (partial.requiredBaseUnits - confirmed(partial.chainId)).toString(),
              txHashes: txHashesOn(facts, partial.chainId),
              ...paymentOn(facts, partial.chainId),
            },
          },
          // Partial funds belong to the merchant too: sweep them.
          effects: sweepConfirmed(state, byChain, facts),
        };
      }
      return { transition: { to: "CANCELED", reason: "expired", detail: {} }, effects };
    }
    case "FUNDED": {
      const funding = state.funding;
      const network = funding && state.networks.find((n) => n.chainId === funding.chainId);
      if (facts.cancelRequest) return { refused: "not_pending", effects };
      if (!funding || !network) return { effects }; // a FUNDED row always names its network; nothing to decide without it
      // SUCCEEDED once the funding amount itself reached the settlement address: from the
      // deposit — by our sweep or by anyone's call of the open sweep function — or, paid by
      // authorization, in the payment's own transaction.
      const settled = settledOn(facts, funding.chainId, state.networks);
      // (A positive amount always came in a transaction: the event names the last one.)
      if (settled.amount >= funding.amount && settled.lastTxHash !== undefined) {
        const byAuthorization = (facts.authorized ?? []).some((a) => a.chainId === funding.chainId && a.txHash.toLowerCase() === settled.lastTxHash?.toLowerCase());
        const method: PaymentMethod = byAuthorization ? "authorization" : "transfer";
        return { transition: { to: "SUCCEEDED", reason: "swept", chainId: funding.chainId, detail: { chainId: funding.chainId, sweepTxHash: settled.lastTxHash, method } }, effects };
      }
      const rounds = (facts.sweeps ?? []).filter((w) => w.chainId === funding.chainId);
      const last = rounds.at(-1);
      if (last && rounds.every((w) => w.state === "failed")) {
        return {
          transition: { to: "ERROR", reason: "sweep_failed", chainId: funding.chainId, detail: { chainId: funding.chainId, attempts: last.attempts, error: last.error ?? "sweep failed" } },
          effects,
        };
      }
      // Incoming transfers stay indexed after a sweep (the sweep is an outgoing transfer), so
      // incoming funds below the amount mean the funding transfer was reorged away.
      const present = byChain.get(funding.chainId)?.all ?? 0n;
      if (present < network.requiredBaseUnits) {
        return { transition: { to: "ERROR", reason: "reorged", chainId: funding.chainId, detail: { chainId: funding.chainId, amount: present.toString() } }, effects };
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
            chainId: paidLate.chainId,
            detail: {
              chainId: paidLate.chainId,
              amount: (byChain.get(paidLate.chainId)?.confirmedAll ?? 0n).toString(),
              txHashes: txHashesOn(facts, paidLate.chainId),
              ...paymentOn(facts, paidLate.chainId),
            },
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
  /** Of `confirmed`, what came to the deposit address (the rest came by authorization: settled already). */
  confirmedAtDeposit: bigint;
  /** Of `confirmedAll`, what is at the deposit address: what sweeps are for. */
  sweepable: bigint;
}

/** Per network, payments into the deposit addresses and by authorization (both count toward the amount; only the first is swept). */
function summarize(state: SessionState, facts: Facts): Map<number, ChainSummary> {
  const out = new Map<number, ChainSummary>();
  for (const n of state.networks) out.set(n.chainId, { confirmed: 0n, confirmedAll: 0n, unconfirmedOnTime: 0n, all: 0n, confirmedAtDeposit: 0n, sweepable: 0n });
  const payments = [...facts.transfers.map((t) => ({ t, atDeposit: true })), ...(facts.authorized ?? []).map((t) => ({ t, atDeposit: false }))];
  for (const { t, atDeposit } of payments) {
    const network = state.networks.find((n) => n.chainId === t.chainId);
    const s = out.get(t.chainId);
    if (!network || !s) continue; // not one of this session's networks: ignore
    const isConfirmed = t.confirmations >= network.confirmationsRequired;
    const onTime = t.blockTimestamp <= state.expiresAt;
    s.all += t.value;
    if (isConfirmed) s.confirmedAll += t.value;
    if (isConfirmed && onTime) s.confirmed += t.value;
    if (!isConfirmed && onTime) s.unconfirmedOnTime += t.value;
    if (atDeposit && isConfirmed) s.sweepable += t.value;
    if (atDeposit && isConfirmed && onTime) s.confirmedAtDeposit += t.value;
  }
  return out;
}

/** Leaving PENDING for good: every confirmed amount goes to the merchant (above the network's minimum). */
function sweepConfirmed(state: SessionState, byChain: Map<number, ChainSummary>, facts: Facts): Effect[] {
  return unsweptFunds(state, byChain, facts);
}

/** Outside PENDING, confirmed funds not yet swept are swept (late payments, second payments). */
function lateFundsToSweep(state: SessionState, facts: Facts, byChain: Map<number, ChainSummary>): Effect[] {
  if (state.status === "PENDING") return [];
  return unsweptFunds(state, byChain, facts);
}

/**
 * Per network, confirmed funds that no sweep round covers yet, when they reach the network's
 * minimum sweep (below it they wait, recorded, for the next sweep of that deposit).
 */
function unsweptFunds(state: SessionState, byChain: Map<number, ChainSummary>, facts: Facts): Effect[] {
  const effects: Effect[] = [];
  for (const n of state.networks) {
    const atDeposit = byChain.get(n.chainId)?.sweepable ?? 0n;
    const rest = atDeposit - coveredOn(facts, n.chainId);
    if (rest > 0n && rest >= (n.minSweepBaseUnits ?? 0n)) effects.push({ kind: "sweep", chainId: n.chainId, amount: rest });
  }
  return effects;
}

/**
 * Base units that sweep rounds on a network already stand for: every open or confirmed round
 * covers what it was asked to move, or what it moved if that was more (funds that arrived
 * before it ran); a confirmed round that found the deposit empty (someone else swept it)
 * covers its amount all the same — that money left. Failed rounds cover nothing until
 * MAX_SWEEP_ROUNDS of them failed; then the last one's amount counts once, so the funds
 * wait for an operator instead of a new round.
 */
export function coveredOn(facts: Facts, chainId: number): bigint {
  let covered = 0n;
  const failed: SweepRound[] = [];
  for (const w of facts.sweeps ?? []) {
    if (w.chainId !== chainId) continue;
    if (w.state === "failed") failed.push(w);
    else if (w.state === "confirmed") covered += w.swept !== undefined && w.swept > w.amount ? w.swept : w.amount;
    else covered += w.amount;
  }
  if (failed.length >= MAX_SWEEP_ROUNDS) covered += failed.at(-1)?.amount ?? 0n;
  return covered;
}

/**
 * What reached the settlement address on one network: payments by authorization at the network's
 * depth (`networks`; they went there directly), the indexer's confirmed outflows from the deposit,
 * plus what our confirmed sweeps' receipts show moved in transactions the indexer has not stored
 * yet (the same transaction is never counted twice). The last transaction is a sweep's when there
 * is one, else the payment by authorization.
 */
export function settledOn(facts: Facts, chainId: number, networks: readonly Network[] = []): { amount: bigint; lastTxHash: string | undefined } {
  const outflows = [...authorizedOutflows(facts.authorized ?? [], networks), ...(facts.outflows ?? [])].filter((o) => o.chainId === chainId && o.amount > 0n);
  const settled = settledTransactions(outflows, (facts.sweeps ?? []).filter((w) => w.chainId === chainId));
  // settledTransactions lists the outflows' transactions first, then the receipts' own.
  const fromReceipts = settled.slice(new Set(outflows.map((o) => o.txHash.toLowerCase())).size);
  return { amount: settled.reduce((sum, t) => sum + t.amount, 0n), lastTxHash: fromReceipts.at(-1)?.txHash ?? outflows.at(-1)?.txHash };
}

function txHashesOn(facts: Facts, chainId: number): string[] {
  return [...new Set([...facts.transfers, ...(facts.authorized ?? [])].filter((t) => t.chainId === chainId).map((t) => t.txHash))];
}

/**
 * How the payment on a network was made, by whom and in what: `authorization` if a payment by the
 * payer's signed authorization is among it; `payer` when every payment there came from one
 * address; `tokens`, what each stablecoin brought (in the session's unit there), when known.
 */
function paymentOn(facts: Facts, chainId: number): { method: PaymentMethod; payer?: string; tokens?: { token: string; amount: string }[] } {
  const byAuthorization = (facts.authorized ?? []).filter((t) => t.chainId === chainId);
  const all = [...facts.transfers.filter((t) => t.chainId === chainId), ...byAuthorization];
  const senders = new Set(all.map((t) => t.from?.toLowerCase()));
  const [only] = senders;
  const byToken = new Map<string, bigint>();
  for (const t of all) if (t.token && t.value > 0n) byToken.set(t.token, (byToken.get(t.token) ?? 0n) + t.value);
  // Addresses leave the API in EIP-55 checksum form (views.ts).
  return {
    method: byAuthorization.length > 0 ? "authorization" : "transfer",
    ...(senders.size === 1 && only ? { payer: checksumAddress(only) } : {}),
    ...(byToken.size > 0 ? { tokens: [...byToken].map(([token, amount]) => ({ token: checksumAddress(token), amount: amount.toString() })) } : {}),
  };
}

function minDate(a: Date | undefined, b: Date): Date {
  return a && a < b ? a : b;
}
