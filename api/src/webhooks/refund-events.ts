/**
 * Refunds' events in the events read model (the API's `/events`): found by id with their
 * deliveries, redelivered on request, and listed with the session events they are ordered with
 * (refunds/events.ts writes them; the worker sends them). A page of GET /events mixes both kinds
 * in one order, newest first by (created_at, id), chosen by one statement so the cursor follows
 * Postgres's own times (db/keyset.ts: a JS Date would drop the microseconds).
 */
import { and, eq, inArray } from "drizzle-orm";
import type { PendingQuery, Row, Sql, TransactionSql } from "postgres";
import type { Db } from "../db/client.ts";
import { refundEvents } from "../db/schema.ts";
import { REFUND_EVENT_TYPES, type RefundEventType } from "../db/column-values.ts";
import { col, decodeRows, rowShape } from "../db/rows.ts";
import { notifyWorkers } from "../effects/webhook-outbox.ts";
import { buildRefundEvent, eventTypeFilter, type EventType, type RefundEvent } from "./payload.ts";
import { eventsByIds, type EventWithSession } from "./events.ts";
import type { Owner } from "./endpoints.ts";

export type RefundEventRow = typeof refundEvents.$inferSelect;

export const isRefundEventType = (type: string): type is RefundEventType => (REFUND_EVENT_TYPES as readonly string[]).includes(type);

export async function findRefundEvent(db: Db, o: Owner, id: string): Promise<RefundEventRow | undefined> {
  const [row] = await db
    .select()
    .from(refundEvents)
    .where(and(eq(refundEvents.id, id), eq(refundEvents.merchantId, o.merchantId), eq(refundEvents.environment, o.environment)));
  return row;
}

export function refundEventObject(row: RefundEventRow): RefundEvent {
  return buildRefundEvent(row);
}

/** As events.ts `redeliver`, for a refund's event: outside its session's order (the merchant asked for this one). */
export async function redeliverRefundEvent(sql: Sql, event: RefundEventRow, endpointIds: string[], withRedelivery?: (tx: TransactionSql) => PendingQuery<Row[]>): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`
      insert into app.webhook_deliveries (refund_event_id, endpoint_id, session_id, sequence, ordered, state, next_attempt_at)
      select ${event.id}, ep.id, ${event.sessionId}, ${event.sequence}, false, 'pending', now()
        from app.webhook_endpoints ep
       where ep.id in ${tx(endpointIds)} and ep.enabled and ep.deleted_at is null`;
    if (withRedelivery) await withRedelivery(tx);
    await notifyWorkers(tx);
  });
}

/** Events with any delivery in this state (a redelivery is a delivery of its own): the dashboard's delivery filter. */
export type DeliveryStateFilter = "failed" | "pending" | "delivered" | "none";

/** The delivery filter as a condition on the deliveries of the event `column` names (`session_events.id` or `refund_events.id`). */
function deliveryCondition(sql: Sql, state: DeliveryStateFilter | undefined, kind: "session" | "refund") {
  if (state === undefined) return sql``;
  const d = kind === "session" ? sql`select 1 from app.webhook_deliveries d where d.event_id = session_events.id` : sql`select 1 from app.webhook_deliveries d where d.refund_event_id = refund_events.id`;
  switch (state) {
    case "failed":
      return sql`and exists (${d} and d.state = 'failed')`;
    case "pending":
      return sql`and exists (${d} and d.state in ('waiting', 'pending', 'sending'))`;
    case "delivered":
      return sql`and exists (${d} and d.state = 'succeeded')`;
    case "none":
      return sql`and not exists (${d})`;
  }
}

export type ListedEvent = { kind: "session"; id: string; session: EventWithSession } | { kind: "refund"; id: string; refund: RefundEventRow };

const PageRow = rowShape("events page", { kind: col.oneOf(["session", "refund"] as const), id: col.text });

/**
 * A page of the owner's session and refund events, newest first: of one session when
 * `sessionId` is given; of one type when `type` is (a session type lists session events only, a
 * refund type refund events only). `startingAfter`: an event of either kind.
 */
export async function listEventsWithRefunds(
  sql: Sql,
  db: Db,
  o: Owner & { limit: number; sessionId?: string; type?: EventType | RefundEventType; startingAfter?: string; delivery?: DeliveryStateFilter },
): Promise<{ rows: ListedEvent[]; hasMore: boolean }> {
  const n = o.limit + 1;
  const withSessions = o.type === undefined || !isRefundEventType(o.type);
  const withRefunds = o.type === undefined || isRefundEventType(o.type);
  const c = o.startingAfter;
  const cursor = c === undefined ? sql`` : sql`and (created_at, id) < ((select at from cursor), ${c})`;
  const session = o.sessionId === undefined ? sql`` : sql`and session_id = ${o.sessionId}`;
  let sessionType = sql``;
  if (o.type !== undefined && !isRefundEventType(o.type)) {
    const f = eventTypeFilter(o.type);
    sessionType = "reason" in f ? sql`and reason = ${f.reason}` : sql`and status = ${f.status} and reason not in ${sql(f.excludeReasons as string[])}`;
  }
  const refundType = o.type !== undefined && isRefundEventType(o.type) ? sql`and type = ${o.type}` : sql``;
  const rows = decodeRows(
    PageRow,
    await sql`
      with cursor as (
        select coalesce((select created_at from app.session_events where id = ${c ?? null}), (select created_at from app.refund_events where id = ${c ?? null})) as at
      )
      select kind, id from (
        (select 'session' as kind, id, created_at from app.session_events
          where ${withSessions} and merchant_id = ${o.merchantId} and environment = ${o.environment} ${session} ${sessionType} ${cursor} ${deliveryCondition(sql, o.delivery, "session")}
          order by created_at desc, id desc limit ${n})
        union all
        (select 'refund' as kind, id, created_at from app.refund_events
          where ${withRefunds} and merchant_id = ${o.merchantId} and environment = ${o.environment} ${session} ${refundType} ${cursor} ${deliveryCondition(sql, o.delivery, "refund")}
          order by created_at desc, id desc limit ${n})
      ) x
      order by created_at desc, id desc
      limit ${n}`,
  );
  const hasMore = rows.length > o.limit;
  const page = rows.slice(0, o.limit);
  const sessionIds = page.filter((r) => r.kind === "session").map((r) => r.id);
  const refundIds = page.filter((r) => r.kind === "refund").map((r) => r.id);
  const sessions = new Map((await eventsByIds(db, o, sessionIds)).map((e) => [e.event.id, e]));
  const refunds = new Map(
    (refundIds.length === 0 ? [] : await db.select().from(refundEvents).where(inArray(refundEvents.id, refundIds))).map((r) => [r.id, r]),
  );
  return {
    rows: page.map((r): ListedEvent => (r.kind === "session" ? { kind: "session", id: r.id, session: sessions.get(r.id)! } : { kind: "refund", id: r.id, refund: refunds.get(r.id)! })),
    hasMore,
  };
}
