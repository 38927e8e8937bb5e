/**
 * The events read model (the API's `/events` and what a webhook carries): an event with its
 * session, the merchant's public id and the session's deposits; the deliveries of an event; and
 * redelivery on request. The worker's own statements are in statements/.
 *
 * Account events (app.account_events: `settlement_address.updated`) are found by id, with their
 * deliveries, attempts and redelivery, but not listed by `listEvents`: that list is the
 * sessions' history, paged and filtered by session and status, and mixing in account events
 * would change what its cursor and `type` filter mean for every caller reconciling sessions.
 */
import { and, asc, eq, inArray, notInArray, or, type SQL } from "drizzle-orm";
import type { PendingQuery, Row, Sql, TransactionSql } from "postgres";
import type { Db } from "../db/client.ts";
import { accountEvents, merchants, paymentSessions, sessionEvents, webhookDeliveries } from "../db/schema.ts";
import { buildAccountEvent, buildEvent, eventTypeFilter, type AccountEvent, type EventType, type WebhookEvent } from "./payload.ts";
import { depositFromJson, depositsOf, sessionFromSql } from "../sessions/repository.ts";
import type { DepositLike, SessionRow } from "../sessions/views.ts";
import { notifyWorkers } from "../effects/webhook-outbox.ts";
import { after, newestFirst, onePage } from "../db/keyset.ts";
import { type Owner } from "./endpoints.ts";
import type { DeliveryState } from "../db/column-values.ts";

type EventRow = typeof sessionEvents.$inferSelect;

export interface EventWithSession {
  event: EventRow;
  session: typeof paymentSessions.$inferSelect;
  publicMerchantId: string;
  deposits: DepositLike[];
}

export function eventObject(e: EventWithSession): WebhookEvent {
  const asOf = e.event.snapshot ? fromSnapshot(e.event.snapshot) : { session: e.session, deposits: e.deposits };
  return buildEvent(asOf.session, e.publicMerchantId, asOf.deposits, {
    id: e.event.id,
    sequence: e.event.sequence,
    status: e.event.status,
    previousStatus: e.event.previousStatus,
    reason: e.event.reason,
    detail: e.event.detail,
    createdAt: e.event.createdAt,
  });
}

/**
 * The session and its deposits as of an event, from the event's snapshot (the session row as
 * to_jsonb spells it, without its token hash, and its deposits: db/schema.ts sessionEvents), for
 * the worker's body and for GET /events alike. An event an older build wrote, not yet claimed,
 * has none: GET /events then shows the session as it stands, as it always did.
 */
export function fromSnapshot(snapshot: { session: Record<string, unknown>; deposits: readonly unknown[] }): { session: SessionRow; deposits: DepositLike[] } {
  return { session: sessionFromSql({ payment_link_id: null, ...snapshot.session, token_hash: "" }), deposits: snapshot.deposits.map(depositFromJson) };
}

const eventSelect = {
  event: sessionEvents,
  session: paymentSessions,
  sandboxPublicId: merchants.sandboxPublicId,
  livePublicId: merchants.livePublicId,
};

type EventJoin = { event: EventRow; session: typeof paymentSessions.$inferSelect; sandboxPublicId: string; livePublicId: string };

async function withPublicIdAndDeposits(db: Db, rows: EventJoin[]): Promise<EventWithSession[]> {
  const deposits = await depositsOf(db, [...new Set(rows.filter((r) => !r.event.snapshot).map((r) => r.session.id))]);
  return rows.map((r) => ({
    event: r.event,
    session: r.session,
    publicMerchantId: r.event.environment === "sandbox" ? r.sandboxPublicId : r.livePublicId,
    deposits: deposits.get(r.session.id) ?? [],
  }));
}

export async function findEvent(db: Db, o: Owner, id: string): Promise<EventWithSession | undefined> {
  const [r] = await db
    .select(eventSelect)
    .from(sessionEvents)
    .innerJoin(paymentSessions, eq(paymentSessions.id, sessionEvents.sessionId))
    .innerJoin(merchants, eq(merchants.id, sessionEvents.merchantId))
    .where(and(eq(sessionEvents.id, id), eq(sessionEvents.merchantId, o.merchantId), eq(sessionEvents.environment, o.environment)));
  return r ? (await withPublicIdAndDeposits(db, [r]))[0] : undefined;
}

/** The owner's session events with these ids (their order is the caller's to keep). */
export async function eventsByIds(db: Db, o: Owner, ids: readonly string[]): Promise<EventWithSession[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .select(eventSelect)
    .from(sessionEvents)
    .innerJoin(paymentSessions, eq(paymentSessions.id, sessionEvents.sessionId))
    .innerJoin(merchants, eq(merchants.id, sessionEvents.merchantId))
    .where(and(inArray(sessionEvents.id, [...ids]), eq(sessionEvents.merchantId, o.merchantId), eq(sessionEvents.environment, o.environment)));
  return withPublicIdAndDeposits(db, rows);
}

/** Newest first (by time, then id); one more row than asked tells whether another page exists. */
export async function listEvents(
  db: Db,
  o: Owner & { limit: number; sessionId?: string; type?: EventType; startingAfter?: string },
): Promise<{ rows: EventWithSession[]; hasMore: boolean }> {
  const conditions: SQL[] = [eq(sessionEvents.merchantId, o.merchantId), eq(sessionEvents.environment, o.environment)];
  if (o.sessionId) conditions.push(eq(sessionEvents.sessionId, o.sessionId));
  if (o.type) {
    const f = eventTypeFilter(o.type);
    if ("reason" in f) conditions.push(eq(sessionEvents.reason, f.reason));
    else conditions.push(eq(sessionEvents.status, f.status), notInArray(sessionEvents.reason, [...f.excludeReasons]));
  }
  if (o.startingAfter) conditions.push(after(sessionEvents, o.startingAfter));
  const rows = await db
    .select(eventSelect)
    .from(sessionEvents)
    .innerJoin(paymentSessions, eq(paymentSessions.id, sessionEvents.sessionId))
    .innerJoin(merchants, eq(merchants.id, sessionEvents.merchantId))
    .where(and(...conditions))
    .orderBy(...newestFirst(sessionEvents))
    .limit(o.limit + 1);
  const page = onePage(rows, o.limit);
  return { rows: await withPublicIdAndDeposits(db, page.rows), hasMore: page.hasMore };
}

export interface DeliveryView {
  webhookEndpointId: string;
  state: DeliveryState;
  ordered: boolean;
  attempts: number;
  nextAttemptAt: string | null;
  lastAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
}

/** Of a session, account or refund event (their ids never collide: each is `evt_` + 24 random characters). */
export async function deliveriesOf(db: Db, eventId: string): Promise<DeliveryView[]> {
  const rows = await db
    .select()
    .from(webhookDeliveries)
    .where(or(eq(webhookDeliveries.eventId, eventId), eq(webhookDeliveries.accountEventId, eventId), eq(webhookDeliveries.refundEventId, eventId)))
    .orderBy(asc(webhookDeliveries.id));
  return rows.map(deliveryView);
}

/** The deliveries of several session or refund events, in one statement (the dashboard's Events page). */
export async function deliveriesOfEvents(db: Db, eventIds: string[]): Promise<Map<string, DeliveryView[]>> {
  const out = new Map<string, DeliveryView[]>(eventIds.map((id) => [id, []]));
  if (eventIds.length === 0) return out;
  const rows = await db
    .select()
    .from(webhookDeliveries)
    .where(or(inArray(webhookDeliveries.eventId, eventIds), inArray(webhookDeliveries.refundEventId, eventIds)))
    .orderBy(asc(webhookDeliveries.id));
  for (const d of rows) out.get((d.eventId ?? d.refundEventId)!)?.push(deliveryView(d));
  return out;
}

function deliveryView(d: typeof webhookDeliveries.$inferSelect): DeliveryView {
  return {
    webhookEndpointId: d.endpointId,
    state: d.state,
    ordered: d.ordered,
    attempts: d.attempts,
    nextAttemptAt: d.state === "pending" && d.nextAttemptAt ? d.nextAttemptAt.toISOString() : null,
    lastAttemptAt: d.lastAttemptAt?.toISOString() ?? null,
    lastStatusCode: d.lastStatusCode,
    lastError: d.lastError,
  };
}

/**
 * Sends an event again to the given enabled endpoints, now, with the usual retries. These
 * deliveries stand outside the per-session order (the merchant asked for this one event).
 */
export async function redeliver(sql: Sql, event: EventRow, endpointIds: string[], withRedelivery?: (tx: TransactionSql) => PendingQuery<Row[]>): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`
      insert into app.webhook_deliveries (event_id, endpoint_id, session_id, sequence, ordered, state, next_attempt_at)
      select ${event.id}, ep.id, ${event.sessionId}, ${event.sequence}, false, 'pending', now()
        from app.webhook_endpoints ep
       where ep.id in ${tx(endpointIds)} and ep.enabled and ep.deleted_at is null`;
    // Its security-history line, when asked for: queued with the deliveries, never without them.
    if (withRedelivery) await withRedelivery(tx);
    await notifyWorkers(tx);
  });
}

export type AccountEventRow = typeof accountEvents.$inferSelect;

export async function findAccountEvent(db: Db, o: Owner, id: string): Promise<AccountEventRow | undefined> {
  const [row] = await db
    .select()
    .from(accountEvents)
    .where(and(eq(accountEvents.id, id), eq(accountEvents.merchantId, o.merchantId), eq(accountEvents.environment, o.environment)));
  return row;
}

export function accountEventObject(row: AccountEventRow): AccountEvent {
  return buildAccountEvent(row);
}

/** As `redeliver`, for an account event. */
export async function redeliverAccountEvent(sql: Sql, event: AccountEventRow, endpointIds: string[], withRedelivery?: (tx: TransactionSql) => PendingQuery<Row[]>): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`
      insert into app.webhook_deliveries (account_event_id, endpoint_id, ordered, state, next_attempt_at)
      select ${event.id}, ep.id, false, 'pending', now()
        from app.webhook_endpoints ep
       where ep.id in ${tx(endpointIds)} and ep.enabled and ep.deleted_at is null`;
    // Its security-history line, when asked for: queued with the deliveries, never without them.
    if (withRedelivery) await withRedelivery(tx);
    await notifyWorkers(tx);
  });
}
