/**
 * What each side sees of a session. The merchant's view (API key) has everything the
 * merchant gave us; the public view (session token, read by the payer's browser) has only
 * what a checkout needs: no metadata, no reference id, nothing of other sessions.
 */
import { formatAmount } from "../../../shared/money.ts";
import type { Environment } from "../../../shared/environment.ts";
import type { SessionStatus, TransitionReason } from "../../../shared/status.ts";
import type { paymentSessions, sessionEvents } from "../db/schema.ts";

export type SessionRow = typeof paymentSessions.$inferSelect;
export type EventRow = typeof sessionEvents.$inferSelect;

export interface HistoryEntry {
  sequence: number;
  status: SessionStatus;
  previousStatus: SessionStatus | null;
  reason: TransitionReason;
  detail: Record<string, unknown>;
  at: string;
}

export interface MerchantSessionView {
  paymentSessionId: string;
  status: SessionStatus;
  statusReason: TransitionReason;
  amount: string;
  currency: string;
  environment: Environment;
  merchantId: string;
  referenceId: string | null;
  metadata: Record<string, string>;
  expiresAt: string;
  createdAt: string;
  updatedAt: string;
  history?: HistoryEntry[];
}

export interface PublicSessionView {
  paymentSessionId: string;
  status: SessionStatus;
  amount: string;
  currency: string;
  environment: Environment;
  merchantName: string;
  expiresAt: string;
  createdAt: string;
}

export function merchantView(row: SessionRow, publicMerchantId: string, events?: EventRow[]): MerchantSessionView {
  return {
    paymentSessionId: row.id,
    status: row.status as SessionStatus,
    statusReason: row.statusReason as TransitionReason,
    amount: formatAmount(row.amountMinor),
    currency: row.currency,
    environment: row.environment as Environment,
    merchantId: publicMerchantId,
    referenceId: row.referenceId,
    metadata: row.metadata,
    expiresAt: row.expiresAt.toISOString(),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    ...(events ? { history: events.map(historyEntry) } : {}),
  };
}

export function publicView(row: SessionRow, merchantName: string): PublicSessionView {
  return {
    paymentSessionId: row.id,
    status: row.status as SessionStatus,
    amount: formatAmount(row.amountMinor),
    currency: row.currency,
    environment: row.environment as Environment,
    merchantName,
    expiresAt: row.expiresAt.toISOString(),
    createdAt: row.createdAt.toISOString(),
  };
}

function historyEntry(e: EventRow): HistoryEntry {
  return {
    sequence: e.sequence,
    status: e.status as SessionStatus,
    previousStatus: (e.previousStatus as SessionStatus | null) ?? null,
    reason: e.reason as TransitionReason,
    detail: e.detail,
    at: e.createdAt.toISOString(),
  };
}
