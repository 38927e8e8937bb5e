/**
 * The Events page's query: a merchant's session events of one environment, newest first,
 * filtered by type, delivery status and session, paged by keyset (db/keyset.ts on
 * session_events_merchant_idx), each with its deliveries and newest attempts to every endpoint.
 * Account events (settlement changes) are not listed, as in the API's GET /events; the
 * security history lists those changes.
 */
import { and, eq, notInArray, sql as dsql, type SQL } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { paymentSessions, sessionEvents } from "../db/schema.ts";
import { after, newestFirst, onePage } from "../db/keyset.ts";
import type { Environment } from "../../../shared/environment.ts";
import { isId } from "../../../shared/ids.ts";
import type { EventRow } from "../sessions/views.ts";
import { EVENT_TYPES, eventTypeFilter, type EventType } from "../webhooks/payload.ts";
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

export interface EventFilters {
  type?: EventType;
  status?: DeliveryFilter;
  session?: string;
}

/** Filters and cursor from a query string; a bad value is dropped and said (never a 500). */
export function parseEventFilters(query: Record<string, string | undefined>): { filters: EventFilters; after?: string; problems: string[] } {
  const filters: EventFilters = {};
  const problems: string[] = [];
  const type = query.type?.trim();
  if (type) {
    const known = EVENT_TYPES.find((t) => t === type);
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

export interface EventLine {
  event: EventRow;
  referenceId: string | null;
  deliveries: DeliveryView[];
  attempts: AttemptRow[];
  /** Older attempts exist than the ones shown. */
  moreAttempts: boolean;
}

export interface EventsPage {
  rows: EventLine[];
  /** The last event's id when an older page exists. */
  next?: string;
}

function deliveryCondition(status: DeliveryFilter): SQL {
  const d = dsql`select 1 from app.webhook_deliveries d where d.event_id = ${sessionEvents.id}`;
  switch (status) {
    case "failed":
      return dsql`exists (${d} and d.state = 'failed')`;
    case "pending":
      return dsql`exists (${d} and d.state in ('waiting', 'pending', 'sending'))`;
    case "delivered":
      return dsql`exists (${d} and d.state = 'succeeded')`;
    case "none":
      return dsql`not exists (${d})`;
  }
}

/** Whether `id` is an event of this merchant and environment: a page cursor must be (else it would page another's). */
export async function ownsEvent(db: Db, owner: { merchantId: string; environment: Environment }, id: string): Promise<boolean> {
  const [r] = await db
    .select({ id: sessionEvents.id })
    .from(sessionEvents)
    .where(and(eq(sessionEvents.id, id), eq(sessionEvents.merchantId, owner.merchantId), eq(sessionEvents.environment, owner.environment)));
  return r !== undefined;
}

export async function listEventLines(
  db: Db,
  owner: { merchantId: string; environment: Environment },
  filters: EventFilters,
  cursor?: string,
  limit = EVENTS_PAGE_SIZE,
): Promise<EventsPage> {
  const conditions: SQL[] = [eq(sessionEvents.merchantId, owner.merchantId), eq(sessionEvents.environment, owner.environment)];
  if (filters.session) conditions.push(eq(sessionEvents.sessionId, filters.session));
  if (filters.type) {
    const f = eventTypeFilter(filters.type);
    if ("reason" in f) conditions.push(eq(sessionEvents.reason, f.reason));
    else conditions.push(eq(sessionEvents.status, f.status), notInArray(sessionEvents.reason, [...f.excludeReasons]));
  }
  if (filters.status) conditions.push(deliveryCondition(filters.status));
  if (cursor) conditions.push(after(sessionEvents, cursor));
  const found = await db
    .select({ event: sessionEvents, referenceId: paymentSessions.referenceId })
    .from(sessionEvents)
    .innerJoin(paymentSessions, eq(paymentSessions.id, sessionEvents.sessionId))
    .where(and(...conditions))
    .orderBy(...newestFirst(sessionEvents))
    .limit(limit + 1);
  const page = onePage(found, limit);
  const ids = page.rows.map((r) => r.event.id);
  const [deliveries, attempts] = await Promise.all([deliveriesOfEvents(db, ids), newestAttemptsOfEvents(db, owner, ids, ATTEMPTS_PER_EVENT)]);
  const rows = page.rows.map((r) => {
    const a = attempts.get(r.event.id)!;
    return { event: r.event, referenceId: r.referenceId, deliveries: deliveries.get(r.event.id) ?? [], attempts: a.rows, moreAttempts: a.hasMore };
  });
  return { rows, ...(page.hasMore && rows.length ? { next: rows[rows.length - 1]!.event.id } : {}) };
}
