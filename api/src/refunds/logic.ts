/**
 * The rules of a refund, pure (docs/refunds.md): what a session may still refund per network and
 * token (from its ledger and its live refunds), a requested amount in the session's unit and in
 * each token's base units, the split of a refund over two tokens in the proportions still
 * refundable, and the state machine. Every amount is a bigint; nothing here is ever a float.
 * The files around it read the ledger, lock, write and send (refunds/create.ts, refunds/store.ts).
 */

import { REFUND_EVENT_TYPES, type RefundEventType } from "../db/column-values.ts";

/** app.refunds.state: PENDING → SENT → SUCCEEDED | FAILED; CANCELED while not sent. */
export const REFUND_STATES = ["PENDING", "SENT", "SUCCEEDED", "FAILED", "CANCELED"] as const;
export type RefundState = (typeof REFUND_STATES)[number];

/** Why the merchant refunds (the request's `reason`). */
export const REFUND_REASONS = ["requested_by_customer", "duplicate", "overpayment", "late_payment", "underpaid_expired", "other"] as const;
export type RefundReason = (typeof REFUND_REASONS)[number];

/** Why a PENDING refund has not gone out yet (app.refunds.waiting_reason; null: due now). */
export const WAITING_REASONS = ["destination_unknown", "insufficient_refund_balance", "spend_guard", "awaiting_claim", "awaiting_approval", "awaiting_wallet"] as const;
export type WaitingReason = (typeof WAITING_REASONS)[number];

/**
 * The reasons only a person ends — the payer claiming its link, the merchant approving the claim
 * (or a destination the service cannot know), the merchant's own wallet signing or sending (a refund
 * paid from the merchant's wallet, refunds/wallet.ts): the relayer never picks such a refund up by itself.
 * The others (a balance, a limit) end by themselves, and the relayer looks again.
 */
export const WAITING_ON_A_PERSON = ["destination_unknown", "awaiting_claim", "awaiting_approval", "awaiting_wallet"] as const satisfies readonly WaitingReason[];

/** Where a refund's money comes from: the merchant's refund balance (the vault), or the merchant's own wallet (docs/refunds.md). */
export const REFUND_FUNDINGS = ["balance", "merchant_wallet"] as const;
export type RefundFunding = (typeof REFUND_FUNDINGS)[number];

/** Why a sent refund failed for good (app.refunds.failure_reason). */
export const FAILURE_REASONS = ["reverted", "transfer_missing"] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

/** A confirmed payment into the session as its ledger holds it (app.session_funds, direction `in`). */
export interface ReceivedMoney {
  chainId: number;
  /** Lowercase; null: the deposit's main token (rows written before several stablecoins). */
  token: string | null;
  /** In the session's unit on that network (session_deposits.decimals). */
  amount: bigint;
  /** The chain took it back (reverted_at): not money received. */
  reverted: boolean;
}

/** What the session's live refunds hold per network and token (app.refund_totals). */
export interface HeldMoney {
  chainId: number;
  token: string;
  /** In the session's unit. */
  held: bigint;
}

/** A network of the session: its unit and its stablecoins (app.session_deposits). */
export interface SessionNetwork {
  chainId: number;
  /** The main token, lowercase (what a ledger row without a token is in). */
  mainToken: string;
  /** The session's unit: the most decimals among its stablecoins. */
  unitDecimals: number;
  /** In the session's order, main first. */
  tokens: readonly { address: string; symbol: string; decimals: number }[];
}

/** What is left to refund in one token on one network, in the session's unit. */
export interface Refundable {
  chainId: number;
  token: string;
  symbol: string;
  decimals: number;
  unitDecimals: number;
  received: bigint;
  held: bigint;
  rest: bigint;
}

/**
 * Per network and accepted token that received anything: received (not reverted) − held. Tokens
 * the session does not accept (stray money) are not refundable here. In the session's token order.
 */
export function refundableRests(networks: readonly SessionNetwork[], received: readonly ReceivedMoney[], held: readonly HeldMoney[]): Refundable[] {
  const out: Refundable[] = [];
  for (const n of networks) {
    for (const t of n.tokens) {
      const token = t.address.toLowerCase();
      const got = received
        .filter((r) => r.chainId === n.chainId && !r.reverted && (r.token ?? n.mainToken).toLowerCase() === token)
        .reduce((sum, r) => sum + r.amount, 0n);
      if (got === 0n) continue;
      const h = held.filter((x) => x.chainId === n.chainId && x.token.toLowerCase() === token).reduce((sum, x) => sum + x.held, 0n);
      out.push({ chainId: n.chainId, token, symbol: t.symbol, decimals: t.decimals, unitDecimals: n.unitDecimals, received: got, held: h, rest: got > h ? got - h : 0n });
    }
  }
  return out;
}

/** One base unit of a token with `decimals`, counted in a unit of `unitDecimals`. */
export function granularity(unitDecimals: number, decimals: number): bigint {
  if (decimals > unitDecimals) throw new RangeError(`token decimals ${decimals} above the session's unit ${unitDecimals}`);
  return 10n ** BigInt(unitDecimals - decimals);
}

/** An amount in the session's unit → the token's base units (exact: throws on a fraction of one). */
export function unitToTokenUnits(amount: bigint, unitDecimals: number, decimals: number): bigint {
  const g = granularity(unitDecimals, decimals);
  if (amount % g !== 0n) throw new RangeError(`${amount} is not a whole number of base units of a ${decimals}-decimal token`);
  return amount / g;
}



/** A part of a refund: one token's amount, in the unit and in the token's own base units. */
export interface RefundPart {
  chainId: number;
  token: string;
  /** In the session's unit (what the refund totals count). */
  amount: bigint;
  /** In the token's base units (what is sent). */
  baseUnits: bigint;
}

/**
 * `amount` (in the unit) over `rests` (one network's tokens) in the proportions still refundable:
 * each token ⌊amount × rest / total⌋, down to a whole base unit of its token; what is left over goes
 * to the token with the largest rest first (the first in order on a tie), as much as its rest
 * allows in whole base units, then to the next. The parts add up to `amount` exactly and none
 * exceeds its rest. Undefined when that is impossible (amount above the total, or a remainder no
 * token can take in whole base units: then the request must name its token).
 */
export function splitProportionally(amount: bigint, rests: readonly Refundable[]): RefundPart[] | undefined {
  const total = rests.reduce((s, r) => s + r.rest, 0n);
  if (amount <= 0n || amount > total) return undefined;
  const shares = rests.map((r) => {
    const g = granularity(r.unitDecimals, r.decimals);
    const raw = (amount * r.rest) / total;
    return raw - (raw % g);
  });
  let left = amount - shares.reduce((s, x) => s + x, 0n);
  const order = rests.map((r, i) => ({ r, i })).sort((a, b) => (a.r.rest === b.r.rest ? a.i - b.i : a.r.rest > b.r.rest ? -1 : 1));
  for (const { r, i } of order) {
    if (left === 0n) break;
    const g = granularity(r.unitDecimals, r.decimals);
    const room = r.rest - shares[i]!;
    let take = left < room ? left : room;
    take -= take % g;
    shares[i]! += take;
    left -= take;
  }
  if (left !== 0n) return undefined;
  return rests
    .map((r, i) => ({ chainId: r.chainId, token: r.token, amount: shares[i]!, baseUnits: unitToTokenUnits(shares[i]!, r.unitDecimals, r.decimals) }))
    .filter((p) => p.amount > 0n);
}

/** What a create asks for, its input already checked for shape (http/refunds.schemas.ts). */
export interface RefundAsk {
  /** In minor units (cents); undefined: the whole refundable rest. */
  amountMinor?: bigint;
  /** In the session's unit, exact (an automatic return: an excess need not be whole cents); wins over amountMinor. */
  amountUnits?: bigint;
  /** At most what is left to refund: the amount is lowered to the rest instead of refused (an automatic return). */
  upToRest?: boolean;
  chainId?: number;
  /** Lowercase. */
  token?: string;
}

export type RefundPlan =
  | { ok: true; chainId: number; amount: bigint; unitDecimals: number; parts: RefundPart[] }
  | { ok: false; problem: "not_refundable" | "exceeds" | "chain_required" | "chain_unknown" | "token_unknown" | "split_impossible"; rest?: bigint; unitDecimals?: number };

/**
 * The parts of a refund: on the network asked for (or the only one with money left), in the token
 * asked for (or every token, split in proportion), the amount asked for (or all that is left).
 * `not_refundable`: the session received nothing refundable at all; `exceeds`: more than is left
 * (nothing left included), with the rest; `chain_unknown`: a network the session has no deposit on.
 */
export function planRefund(ask: RefundAsk, rests: readonly Refundable[]): RefundPlan {
  if (rests.length === 0) return { ok: false, problem: "not_refundable" };
  let on = ask.chainId === undefined ? rests : rests.filter((r) => r.chainId === ask.chainId);
  if (ask.chainId === undefined) {
    const withRest = [...new Set(rests.filter((r) => r.rest > 0n).map((r) => r.chainId))];
    if (withRest.length > 1) return { ok: false, problem: "chain_required" };
    const chainId = withRest[0] ?? rests[0]!.chainId;
    on = rests.filter((r) => r.chainId === chainId);
  }
  // A network the session cannot be paid on at all: the ask is wrong, not too large.
  if (on.length === 0) return { ok: false, problem: "chain_unknown" };
  if (ask.token !== undefined) {
    on = on.filter((r) => r.token === ask.token);
    if (on.length === 0) return { ok: false, problem: "token_unknown" };
  }
  const unitDecimals = on[0]!.unitDecimals;
  const rest = on.reduce((s, r) => s + r.rest, 0n);
  let amount = ask.amountUnits ?? (ask.amountMinor === undefined ? rest : ask.amountMinor * 10n ** BigInt(unitDecimals - 2));
  if (ask.upToRest && amount > rest) amount = rest;
  if (amount === 0n || amount > rest) return { ok: false, problem: "exceeds", rest, unitDecimals };
  const parts = on.length === 1 ? [{ chainId: on[0]!.chainId, token: on[0]!.token, amount, baseUnits: unitToTokenUnits(amount, unitDecimals, on[0]!.decimals) }] : splitProportionally(amount, on);
  if (!parts) return { ok: false, problem: "split_impossible" };
  return { ok: true, chainId: on[0]!.chainId, amount, unitDecimals, parts };
}

/** What can happen to a refund. */
export type RefundEvent =
  | { kind: "cancel" }
  | { kind: "sent"; transactionId: string }
  | { kind: "succeeded" }
  | { kind: "failed"; reason: FailureReason }
  /** The chain lost its transaction (sent, or mined and then reorged away deeper than the confirmations): it goes out again. */
  | { kind: "dropped" };

export type RefundTransition =
  | { ok: true; to: RefundState; /** Whether its amount stops being held (refundable again). */ releases: boolean; /** The webhook event it causes, if any. */ webhook?: RefundWebhookType }
  | { ok: false; why: string };

export const REFUND_WEBHOOK_TYPES = REFUND_EVENT_TYPES;
export type RefundWebhookType = RefundEventType;

/** The refund's state machine (docs/refunds.md, "The state table"). */
export function nextRefundState(from: RefundState, event: RefundEvent): RefundTransition {
  switch (event.kind) {
    case "cancel":
      return from === "PENDING" ? { ok: true, to: "CANCELED", releases: true, webhook: "refund.canceled" } : { ok: false, why: `a ${from} refund can no longer be canceled` };
    case "sent":
      return from === "PENDING" ? { ok: true, to: "SENT", releases: false, webhook: "refund.sent" } : { ok: false, why: `a ${from} refund is not waiting to be sent` };
    case "succeeded":
      return from === "SENT" ? { ok: true, to: "SUCCEEDED", releases: false, webhook: "refund.succeeded" } : { ok: false, why: `a ${from} refund was not sent` };
    case "failed":
      return from === "SENT" ? { ok: true, to: "FAILED", releases: true, webhook: "refund.failed" } : { ok: false, why: `a ${from} refund was not sent` };
    case "dropped":
      return from === "SENT" || from === "SUCCEEDED" ? { ok: true, to: "PENDING", releases: false } : { ok: false, why: `a ${from} refund has no transaction to lose` };
  }
}

/** The one payer of a token's payments, if there is exactly one known (lowercase); else undefined. */
export function onePayer(payers: readonly (string | null)[]): string | undefined {
  if (payers.length === 0 || payers.some((p) => p === null)) return undefined;
  const distinct = [...new Set(payers.map((p) => p!.toLowerCase()))];
  if (distinct.length !== 1) return undefined;
  const only = distinct[0]!;
  return /^0x[0-9a-f]{40}$/.test(only) && !/^0x0{40}$/.test(only) ? only : undefined;
}

/** The reasons the service returns money by itself (docs/refunds.md, "Automatic returns"). */
export const AUTO_RETURN_REASONS = ["overpayment", "late_payment", "underpaid_expired"] as const satisfies readonly RefundReason[];
export type AutoReturnReason = (typeof AUTO_RETURN_REASONS)[number];

/** A confirmed payment in on one network, with its block's time (app.session_funds.block_timestamp). */
export interface TimedPayment {
  /** In the session's unit on the network. */
  amount: bigint;
  /** Null: a row written before block times were kept (counted as on time). */
  blockTimestamp: Date | null;
  reverted: boolean;
}

/** What an automatic return of one network looks at, read under the return's row lock. */
export interface ReturnFacts {
  /** The session's price on this network, in its unit (session_deposits.required_base_units). */
  required: bigint;
  expiresAt: Date;
  /** The network that paid the session in full (payment_sessions.funding_chain_id), if any. */
  fundingChainId: number | null;
  /** The session ended ERROR `underpaid`: it expired with part of its price received. */
  underpaid: boolean;
  /** The network this return is on. */
  chainId: number;
  /** Its confirmed payments in (accepted tokens only), on this network. */
  payments: readonly TimedPayment[];
}

/**
 * How much an automatic return gives back, in the session's unit (0n: nothing), before what the
 * session's refunds already hold is taken off (planRefund's `upToRest` does that):
 *   - overpayment: on the funding network, what arrived by the expiry above the price; on another
 *     network of a session paid in full, all that arrived there by the expiry (it was paid twice);
 *   - late_payment: what arrived after the expiry; for a session that ended with no payment
 *     (expired or canceled, then paid: `paid_after_cancel`), all it received on the network,
 *     since anything after a cancel is late whatever the clock said;
 *   - underpaid_expired: of a session that expired underpaid, all that arrived by the expiry.
 * The three never count the same payment twice, so together they never exceed what was received.
 */
export function autoReturnAmount(reason: AutoReturnReason, f: ReturnFacts): bigint {
  const live = f.payments.filter((p) => !p.reverted);
  const onTime = live.filter((p) => p.blockTimestamp === null || p.blockTimestamp <= f.expiresAt).reduce((s, p) => s + p.amount, 0n);
  const late = live.filter((p) => p.blockTimestamp !== null && p.blockTimestamp > f.expiresAt).reduce((s, p) => s + p.amount, 0n);
  const funded = f.fundingChainId !== null;
  switch (reason) {
    case "overpayment":
      if (!funded) return 0n;
      if (f.fundingChainId !== f.chainId) return onTime;
      return onTime > f.required ? onTime - f.required : 0n;
    case "late_payment":
      return funded || f.underpaid ? late : onTime + late;
    case "underpaid_expired":
      return !funded && f.underpaid ? onTime : 0n;
  }
}
