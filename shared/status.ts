/** The five statuses of a payment session (docs/session-lifecycle.md, "The statuses"). */
export const SESSION_STATUSES = ["PENDING", "FUNDED", "SUCCEEDED", "CANCELED", "ERROR"] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

export const TERMINAL_STATUSES: readonly SessionStatus[] = ["SUCCEEDED", "CANCELED", "ERROR"];

export function isSessionStatus(s: string): s is SessionStatus {
  return (SESSION_STATUSES as readonly string[]).includes(s);
}

/** Why a session moved; one code per row of the state table (docs/session-lifecycle.md, "The state table"). */
export const TRANSITION_REASONS = [
  "created",
  "paid",
  "overpaid",
  "expired",
  "canceled_by_payer",
  "canceled_by_merchant",
  "underpaid",
  "simulated",
  "swept",
  "sweep_failed",
  "reorged",
  "paid_after_cancel",
] as const;
export type TransitionReason = (typeof TRANSITION_REASONS)[number];

/**
 * Events that are no status change: money moved that the merchant must reconcile, outside
 * the transition it caused (api/src/sessions/money-plan.ts). The status stays as it was.
 */
export const MONEY_EVENT_REASONS = ["funds_received", "funds_settled", "funds_reverted"] as const;
export type MoneyEventReason = (typeof MONEY_EVENT_REASONS)[number];

/** Every reason an event (a history entry, a webhook) can carry. */
export const EVENT_REASONS = [...TRANSITION_REASONS, ...MONEY_EVENT_REASONS] as const;
export type EventReason = TransitionReason | MoneyEventReason;
