/**
 * A refund's webhook events (docs/refunds.md, "Webhooks"), written in the transaction of the state
 * change they announce — the create, the cancel, the relayer's round that sends it, the receipt
 * that settles it — with their deliveries, through the session events' outbox.
 *
 * The event takes the next number of its session's sequence (app.payment_sessions.sequence, the
 * counter the session's own events use), under the session's row lock, so the outbox's
 * per-(endpoint, session) queue orders it with them: a receiver sees `payment_session.succeeded`
 * before `refund.created`, and `refund.created` before `refund.sent`. Its `data` is the refund as
 * GET /refunds/{id} shows it at that moment, with the sequence, frozen in the row: every attempt and
 * redelivery sends the same bytes.
 *
 * Locks: the refund's row is already held by the caller (it has just written it); the session's
 * row is taken here, last. Nothing that holds a session's row waits for a refund's, so the order
 * refund → session never meets its reverse. Callers with several refunds take them in session id
 * order (`recordRefundEvents`), so two such transactions never wait on each other crosswise.
 */
import type { TransactionSql } from "postgres";
import { newId } from "../../../shared/ids.ts";
import { col, decodeRow, rowShape } from "../db/rows.ts";
import type { RefundEventType } from "../db/column-values.ts";
import { enqueueRefundEventDeliveries } from "../effects/webhook-outbox.ts";
import { linkFactsOf } from "./link-store.ts";
import { readRefund, type RefundRow } from "./rows.ts";
import { refundView, type RefundView } from "./view.ts";

/** A refund event's `data`: the refund as the API shows it, and its place in the session's sequence. */
export type RefundEventData = RefundView & { sequence: number };

const Sequence = rowShape("refund event's sequence", { sequence: col.int, tx_hash: col.nullable(col.text) });

/** The event of `type` for refund `id` as it stands in `tx` (after its change), and its deliveries. Returns the event's id. */
export async function recordRefundEvent(tx: TransactionSql, id: string, type: RefundEventType): Promise<string> {
  const refund = await readRefund(tx, id);
  if (!refund) throw new Error(`refund event ${type}: no refund ${id}`);
  return write(tx, refund, type);
}

/** Several refunds' events of one kind (a relayer round, a receipt), their sessions locked in id order. */
export async function recordRefundEvents(tx: TransactionSql, ids: readonly string[], type: RefundEventType | ((r: RefundRow) => RefundEventType)): Promise<void> {
  const rows: RefundRow[] = [];
  for (const id of ids) {
    const r = await readRefund(tx, id);
    if (!r) throw new Error(`refund event: no refund ${id}`);
    rows.push(r);
  }
  rows.sort((a, b) => (a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1)));
  for (const r of rows) await write(tx, r, typeof type === "function" ? type(r) : type);
}

async function write(tx: TransactionSql, refund: RefundRow, type: RefundEventType): Promise<string> {
  // The session's next sequence number, under its row lock (the session actor counts on the same row).
  const s = decodeRow(
    Sequence,
    (
      await tx`
        with s as (update app.payment_sessions set sequence = sequence + 1 where id = ${refund.sessionId} returning sequence)
        select s.sequence, coalesce((select tx_hash from app.sweep_transactions where id = ${refund.transactionId}),
                                      (select tx_hash from app.refund_wallet_payments where refund_id = ${refund.id})) as tx_hash from s`
    )[0],
  );
  // A link's facts but not its URL (a bearer secret: the create's answer and GET /refunds/{id} show it).
  const link = (await linkFactsOf(tx, null, [refund])).get(refund.id);
  const data: RefundEventData = { ...refundView(refund, s.tx_hash ?? undefined, link), sequence: s.sequence };
  const eventId = newId("event");
  await tx`
    insert into app.refund_events (id, refund_id, session_id, merchant_id, environment, sequence, type, data, created_at)
    values (${eventId}, ${refund.id}, ${refund.sessionId}, ${refund.merchantId}, ${refund.environment}, ${s.sequence}, ${type}, ${JSON.stringify(data)}::jsonb, now())`;
  await enqueueRefundEventDeliveries(tx, { id: eventId, sessionId: refund.sessionId, merchantId: refund.merchantId, environment: refund.environment, sequence: s.sequence });
  return eventId;
}
