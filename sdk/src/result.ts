/**
 * What `open()` resolves with and rejects with, and the pure checks behind them.
 */
import type { SessionStatus } from "./protocol.ts";

/**
 * How the payment flow ended, as the payer left it:
 * - `succeeded`: paid and settled to the merchant (status SUCCEEDED).
 * - `funded`: paid, settlement still under way (FUNDED); a SUCCEEDED (or ERROR) webhook follows.
 * - `canceled`: CANCELED — `reason` is `canceled_by_payer`, `expired` or `canceled_by_merchant`.
 * - `error`: ERROR — `reason` says which (`underpaid`, `paid_after_cancel`, `sweep_failed`,
 *   `reorged`, `simulated`); funds received are never lost (they go to the merchant).
 * - `closed`: the payer closed the checkout while the session was still PENDING (nothing
 *   paid yet, or a payment not yet seen): the session stays open until it expires.
 * Your server learns the final word from the webhook; this result is for your page.
 */
export type PaymentOutcome = "succeeded" | "funded" | "canceled" | "error" | "closed";

export interface PaymentResult {
  outcome: PaymentOutcome;
  status: SessionStatus;
  /** The session's status reason (`created`, `paid`, `swept`, `expired`, `canceled_by_payer`, `underpaid`, …). */
  reason: string;
  paymentSessionId: string;
}

/**
 * Why `open()` rejected (nothing was shown, or the modal was closed again at once):
 * - `invalid_argument`: missing or malformed merchant id, session id or token, or no base address.
 * - `environment_mismatch`: a sandbox merchant id with a production token, or the reverse.
 * - `merchant_mismatch`: the session belongs to another merchant than the SDK's merchant id.
 * - `session_mismatch`: the token belongs to another session than `paymentSessionId`.
 * - `session_token_invalid` / `session_token_expired`: the token is unknown / past its lifetime.
 * - `already_open`: `open()` was called while a checkout is open (the first goes on).
 * - `checkout_unreachable`: the checkout did not load (network, blocked frame) within the time limit.
 * - `not_in_browser`: called without a DOM.
 */
export type PaysessionErrorCode =
  | "invalid_argument"
  | "environment_mismatch"
  | "merchant_mismatch"
  | "session_mismatch"
  | "session_token_invalid"
  | "session_token_expired"
  | "already_open"
  | "checkout_unreachable"
  | "not_in_browser";

export class PaysessionError extends Error {
  constructor(
    readonly code: PaysessionErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "PaysessionError";
  }
}

const ERROR_CODES: readonly string[] = [
  "invalid_argument",
  "environment_mismatch",
  "merchant_mismatch",
  "session_mismatch",
  "session_token_invalid",
  "session_token_expired",
  "already_open",
  "checkout_unreachable",
  "not_in_browser",
];

/** A checkout's `fail` code as one of ours (an unknown one, from a newer checkout, is a load failure). */
export function errorCodeOf(code: string): PaysessionErrorCode {
  return (ERROR_CODES.includes(code) ? code : "checkout_unreachable") as PaysessionErrorCode;
}

export function outcomeOf(status: SessionStatus): PaymentOutcome {
  switch (status) {
    case "SUCCEEDED":
      return "succeeded";
    case "FUNDED":
      return "funded";
    case "CANCELED":
      return "canceled";
    case "ERROR":
      return "error";
    default:
      return "closed";
  }
}

const MERCHANT_ID = /^mch_(test|live)_[A-Za-z0-9_-]{8,64}$/;
const SESSION_ID = /^ps_[A-Za-z0-9_-]{8,64}$/;
const SESSION_TOKEN = /^pst_(test|live)_[A-Za-z0-9_-]{16,128}$/;

/** The merchant id's environment tag, or an error for a malformed one. */
export function checkMerchantId(merchantId: unknown): "test" | "live" {
  if (typeof merchantId !== "string" || !MERCHANT_ID.test(merchantId)) {
    throw new PaysessionError("invalid_argument", "merchantId must be your NEXT_PUBLIC_SERVICE_MERCHANT_ID (mch_test_… or mch_live_…).");
  }
  return merchantId.startsWith("mch_test_") ? "test" : "live";
}

/** Checks open()'s argument against the merchant id's environment; throws PaysessionError. */
export function checkOpenArgs(args: unknown, merchantEnv: "test" | "live"): { paymentSessionId: string; paymentSessionToken: string } {
  if (typeof args !== "object" || args === null) {
    throw new PaysessionError("invalid_argument", "open() takes { paymentSessionId, paymentSessionToken }.");
  }
  const { paymentSessionId, paymentSessionToken } = args as Record<string, unknown>;
  if (typeof paymentSessionId !== "string" || !SESSION_ID.test(paymentSessionId)) {
    throw new PaysessionError("invalid_argument", "paymentSessionId must be the ps_… id your server got from POST /payment-sessions.");
  }
  if (typeof paymentSessionToken !== "string" || !SESSION_TOKEN.test(paymentSessionToken)) {
    throw new PaysessionError("invalid_argument", "paymentSessionToken must be the pst_… token your server got from POST /payment-sessions.");
  }
  const tokenEnv = paymentSessionToken.startsWith("pst_test_") ? "test" : "live";
  if (tokenEnv !== merchantEnv) {
    throw new PaysessionError(
      "environment_mismatch",
      `The session token is a ${tokenEnv === "test" ? "sandbox" : "production"} token but the merchant id is ${merchantEnv === "test" ? "sandbox" : "production"}: create the session with the API key of the same environment.`,
    );
  }
  return { paymentSessionId, paymentSessionToken };
}
