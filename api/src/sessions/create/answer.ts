/**
 * A create's answer (201): the merchant's view of the new session with its token. Built from the
 * row the create statement wrote, and rebuilt from the stored session for a retry with the same
 * Idempotency-Key (its key's record holds only the session's id and token) — the same bytes either
 * way, since nothing a create's answer shows changes after it: what moves later (status, reason,
 * sequence, updated time) is shown as it was created.
 */
import type { PlannedDeposit } from "../deposits.ts";
import { merchantView, type DepositLike, type SessionRow } from "../views.ts";

export interface CreateAnswer {
  status: 201;
  body: unknown;
}

export function createdAnswer(row: SessionRow, publicMerchantId: string, deposits: readonly (DepositLike | PlannedDeposit)[], token: string): CreateAnswer {
  return {
    status: 201,
    body: {
      // A new session has refunded nothing: the same field a retrieve shows.
      ...merchantView(row, publicMerchantId, [...deposits], undefined, "0.00"),
      paymentSessionToken: token,
      tokenExpiresAt: row.tokenExpiresAt.toISOString(),
    },
  };
}

/** A stored session's row as its create wrote it (statement.ts createdRow): for replaying the create's answer. */
export function asCreated(row: SessionRow): SessionRow {
  return {
    ...row,
    status: "PENDING",
    statusReason: "created",
    sequence: 1,
    wakeAt: row.expiresAt,
    fundingChainId: null,
    fundingAmount: null,
    forceSweepFailure: false,
    updatedAt: row.createdAt,
  };
}
