/**
 * The Events page's query: a merchant's session events and their refunds' events (`refund.*`) of
 * one environment, newest first, filtered by type, delivery status and session, paged by keyset —
 * the very read model of the API's GET /events (webhooks/refund-events.ts listEventsWithRefunds),
 * so both list the same events in the same order — each with its deliveries and newest attempts to
 * every endpoint. Account events (settlement changes) are not listed, as in GET /events; the
 * security history lists those changes.
 */
import { and, eq, inArray } from "drizzle-orm";
import type { Sql } from "postgres";
import type { Db } from "../db/client.ts";
import { paymentSessions, refundEvents, sessionEvents } from "../db/schema.ts";
import { REFUND_EVENT_TYPES, type RefundEventType } from "../db/column-values.ts";
import { listEventsWithRefunds, type RefundEventRow } from "../webhooks/refund-events.ts";
import type { Environment } from "../../../shared/environment.ts";
import { isId } from "../../../shared/ids.ts";
import type { EventRow } from "../sessions/views.ts";
import { EVENT_TYPES, type EventType } from "../webhooks/payload.ts";
import { deliveriesOfEvents, type DeliveryView } from "../webhooks/events.ts";
import { newestAttemptsOfEvents, type AttemptRow } from "../webhooks/attempts.ts";

export const EVENTS_PAGE_SIZE = 25;
/** Attempts shown per event; the endpoint's page has them all. */
export const ATTEMPTS_PER_EVENT = 5;

/** The delivery filter: an event with any delivery in that state (a redelivery is a delivery of its own). */
export const DELIVERY_FILTERS = {
  failed: "Failed (gave up after its retries)",
  pending: "Still being tried",
  delivered: "Delivered",
  none: "Not sent (no endpoint then)",
} as const;
export type DeliveryFilter = keyof typeof DELIVERY_FILTERS;
/** DELIVERY_FILTERS's names, in order. */
export const DELIVERY_FILTER_NAMES: readonly DeliveryFilter[] = ["failed", "pending", "delivered", "none"];

/** The types the page filters by: the sessions' and their refunds', as GET /events lists them. */
export const LISTED_TYPES: readonly (EventType | RefundEventType)[] = [...EVENT_TYPES, ...REFUND_EVENT_TYPES];

export interface EventFilters {
  type?: EventType | RefundEventType;
  status?: DeliveryFilter;
  session?: string;
}

/** Filters and cursor from a query string; a bad value is dropped and said (never a 500). */
export function parseEventFilters(query: Record<string, string | undefined>): { filters: EventFilters; after?: string; problems: string[] } {
  const filters: EventFilters = {};
  const problems: string[] = [];
  const type = query.type?.trim();
  if (type) {
    const known = LISTED_TYPES.find((t) => t === type);
    if (known) filters.type = known;
    else problems.push("Unknown event type; showing every type.");
  }
  const status = query.status?.trim();
  if (status) {
    const known = DELIVERY_FILTER_NAMES.find((f) => f === status);
    if (known) filters.status = known;
    else problems.push("Unknown delivery status; showing every event.");
  }
  const session = query.session?.trim();
  if (session) {
    if (isId("paymentSession", session)) filters.session = session;
    else problems.push("The session must be a payment session id (ps_…); showing every session.");
  }
  let cursor: string | undefined;
  if (query.after) {
    if (isId("event", query.after)) cursor = query.after;
    else problems.push("That page link is not valid; showing the newest events.");
  }
  return { filters, after: cursor, problems };
}

/** A line of the page: a session's event, or one of its refunds' (`refund.*`). */
export type EventLine = (
  | { kind: "session"; event: EventRow }
  | { kind: "refund"; event: RefundEventRow }
) & {
  referenceId: string | null;
  deliveries: DeliveryView[];
  attempts: AttemptRow[];
  /** Older attempts exist than the ones shown. */
  moreAttempts: boolean;
};

export interface EventsPage {
  rows: EventLine[];
  /** The last event's id when an older page exists. */
  next?: string;
}

/** Whether `id` is an event (a session's or a refund's) of this merchant and environment: a page cursor must be (else it would page another's). */
export async function ownsEvent(db: Db, owner: { merchantId: string; environment: Environment }, id: string): Promise<boolean> {
  const [r] = await db
    .select({ id: sessionEvents.id })
    .from(sessionEvents)
    .where(and(eq(sessionEvents.id, id), eq(sessionEvents.merchantId, owner.merchantId), eq(sessionEvents.environment, owner.environment)));
  if (r) return true;
  const [f] = await db
    .select({ id: refundEvents.id })
    .from(refundEvents)
    .where(and(eq(refundEvents.id, id), eq(refundEvents.merchantId, owner.merchantId), eq(refundEvents.environment, owner.environment)));
  return f !== undefined;
}

export async function listEventLines(
  sql: Sql,
  db: Db,
  owner: { merchantId: string; environment: Environment },
  filters: EventFilters,
  cursor?: string,
  limit = EVENTS_PAGE_SIZE,
): Promise<EventsPage> {
  const page = await listEventsWithRefunds(sql, db, { ...owner, limit, sessionId: filters.session, type: filters.type, startingAfter: cursor, delivery: filters.status });
  const ids = page.rows.map((r) => r.id);
  const sessionIds = [...new Set(page.rows.map((r) => (r.kind === "session" ? r.session.event.sessionId : r.refund.sessionId)))];
  const [deliveries, attempts, references] = await Promise.all([
    deliveriesOfEvents(db, ids),
    newestAttemptsOfEvents(db, owner, ids, ATTEMPTS_PER_EVENT),
    sessionIds.length === 0 ? [] : db.select({ id: paymentSessions.id, referenceId: paymentSessions.referenceId }).from(paymentSessions).where(inArray(paymentSessions.id, sessionIds)),
  ]);
  const referenceOf = new Map(references.map((r) => [r.id, r.referenceId]));
  const rows = page.rows.map((r): EventLine => {
    const a = attempts.get(r.id)!;
    const common = { deliveries: deliveries.get(r.id) ?? [], attempts: a.rows, moreAttempts: a.hasMore };
    return r.kind === "session"
      ? { kind: "session", event: r.session.event, referenceId: referenceOf.get(r.session.event.sessionId) ?? null, ...common }
      : { kind: "refund", event: r.refund, referenceId: referenceOf.get(r.refund.sessionId) ?? null, ...common };
  });
  return { rows, ...(page.hasMore && rows.length ? { next: rows[rows.length - 1]!.event.id } : {}) };
}
