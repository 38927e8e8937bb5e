/**
 * A refund's row as this folder's raw statements read it (numerics as text: exact), typed as
 * drizzle's reads type it; and the one read of a refund inside a transaction that just changed it.
 * Apart from store.ts so that events.ts, which store.ts calls, reads rows without importing it.
 */
import type { TransactionSql } from "postgres";
import { Type } from "@sinclair/typebox";
import { refunds } from "../db/schema.ts";
import { col, decodeRow, rowShape } from "../db/rows.ts";
import { REFUND_FUNDINGS, REFUND_STATES } from "./logic.ts";

export type RefundRow = typeof refunds.$inferSelect;

/** A refund's columns as a raw statement returns them (numerics as text: exact). Only this folder's statements use it. */
export const REFUND_COLUMNS = `id, session_id, merchant_id, environment, chain_id, amount::text as amount, unit_decimals, currency, reason, metadata, parts, state,
  waiting_reason, failure_reason, transaction_id, funding, attempts, next_attempt_at, created_at, updated_at, sent_at, finished_at`;

const RefundSql = rowShape("refund", {
  id: col.text,
  session_id: col.text,
  merchant_id: col.text,
  environment: col.oneOf(["sandbox", "production"] as const),
  chain_id: col.int,
  amount: col.numeric,
  unit_decimals: col.int,
  currency: col.text,
  reason: col.text,
  metadata: col.json(Type.Record(Type.String(), Type.String())),
  parts: col.json(
    Type.Array(
      Type.Object({
        token: Type.String(),
        symbol: Type.String(),
        decimals: Type.Number(),
        amount: Type.String(),
        baseUnits: Type.String(),
        destination: Type.Union([Type.String(), Type.Null()]),
      }),
    ),
  ),
  state: col.oneOf(REFUND_STATES),
  waiting_reason: col.nullable(col.text),
  failure_reason: col.nullable(col.text),
  transaction_id: col.nullable(col.text),
  funding: col.oneOf(REFUND_FUNDINGS),
  attempts: col.int,
  next_attempt_at: col.time,
  created_at: col.time,
  updated_at: col.time,
  sent_at: col.nullable(col.time),
  finished_at: col.nullable(col.time),
});

/** A raw statement's refund row as drizzle's reads type it. */
export function refundFromSql(row: unknown): RefundRow {
  const r = decodeRow(RefundSql, row);
  return {
    id: r.id,
    sessionId: r.session_id,
    merchantId: r.merchant_id,
    environment: r.environment,
    chainId: r.chain_id,
    amount: r.amount,
    unitDecimals: r.unit_decimals,
    currency: r.currency,
    reason: r.reason,
    metadata: r.metadata,
    parts: r.parts,
    state: r.state,
    waitingReason: r.waiting_reason,
    failureReason: r.failure_reason,
    transactionId: r.transaction_id,
    funding: r.funding,
    attempts: r.attempts,
    nextAttemptAt: r.next_attempt_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    sentAt: r.sent_at,
    finishedAt: r.finished_at,
  };
}

/** A refund as `tx` sees it (after a change it made: what its event announces). */
export async function readRefund(tx: TransactionSql, id: string): Promise<RefundRow | undefined> {
  const rows = await tx`select ${tx.unsafe(REFUND_COLUMNS)} from app.refunds where id = ${id}`;
  return rows[0] ? refundFromSql(rows[0]) : undefined;
}

