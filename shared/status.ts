/** The five statuses of a payment session (spec §3). */
export const SESSION_STATUSES = ["PENDING", "FUNDED", "SUCCEEDED", "CANCELED", "ERROR"] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

export const TERMINAL_STATUSES: readonly SessionStatus[] = ["SUCCEEDED", "CANCELED", "ERROR"];

export function isSessionStatus(s: string): s is SessionStatus {
  return (SESSION_STATUSES as readonly string[]).includes(s);
}

/** Why a session moved; one code per row of the state table (DESIGN.md §5). */
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
