/**
 * The attempt log: one row per HTTP request to an endpoint (events, redeliveries, test events),
 * written by the worker in batches and read by the API.
 */
import { and, eq, type SQL } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { webhookAttempts } from "../db/schema.ts";
import type { Query } from "../sessions/repository.ts";
import { after, newestFirst, onePage } from "../db/keyset.ts";
import { ENVIRONMENTS } from "../../../shared/environment.ts";
import { col, decodeRows, rowShape, type RowOf } from "../db/rows.ts";
import { type Owner } from "./endpoints.ts";

export type AttemptRow = typeof webhookAttempts.$inferSelect;

export interface AttemptView {
  id: string;
  eventId: string;
  webhookEndpointId: string;
  kind: string;
  attemptNumber: number;
  url: string;
  succeeded: boolean;
  statusCode: number | null;
  latencyMs: number;
  responseBody: string | null;
  error: string | null;
  createdAt: string;
}

export function attemptView(a: AttemptRow): AttemptView {
  return {
    id: a.id,
    eventId: a.eventId,
    webhookEndpointId: a.endpointId,
    kind: a.kind,
    attemptNumber: a.attemptNumber,
    url: a.url,
    succeeded: a.succeeded,
    statusCode: a.statusCode,
    latencyMs: a.latencyMs,
    responseBody: a.responseExcerpt,
    error: a.error,
    createdAt: a.createdAt.toISOString(),
  };
}

/** Newest first; by event or by endpoint (owner checked by the caller). */
export async function listAttempts(
  db: Db,
  o: Owner & { eventId?: string; endpointId?: string; limit: number; startingAfter?: string },
): Promise<{ rows: AttemptRow[]; hasMore: boolean }> {
  const conditions: SQL[] = [eq(webhookAttempts.merchantId, o.merchantId), eq(webhookAttempts.environment, o.environment)];
  if (o.eventId) conditions.push(eq(webhookAttempts.eventId, o.eventId));
  if (o.endpointId) conditions.push(eq(webhookAttempts.endpointId, o.endpointId));
  if (o.startingAfter) conditions.push(after(webhookAttempts, o.startingAfter));
  const rows = await db
    .select()
    .from(webhookAttempts)
    .where(and(...conditions))
    .orderBy(...newestFirst(webhookAttempts))
    .limit(o.limit + 1);
  return onePage(rows, o.limit);
}

/**
 * The newest `perEvent` attempts of each of these events (to every endpoint), one statement:
 * a lateral scan of webhook_attempts_event_idx per event. `perEvent + 1` are read, so the
 * caller can say that older ones exist.
 */
export async function newestAttemptsOfEvents(db: Db, o: Owner, eventIds: string[], perEvent: number): Promise<Map<string, { rows: AttemptRow[]; hasMore: boolean }>> {
  const out = new Map<string, { rows: AttemptRow[]; hasMore: boolean }>(eventIds.map((id) => [id, { rows: [], hasMore: false }]));
  if (eventIds.length === 0) return out;
  const sql = db.$client;
  const rows = await sql`
    select a.* from unnest(${eventIds}::text[]) as e(id)
      cross join lateral (
        select * from app.webhook_attempts a
         where a.event_id = e.id and a.merchant_id = ${o.merchantId} and a.environment = ${o.environment}
         order by a.created_at desc, a.id desc limit ${perEvent + 1}) a`;
  const byEvent = new Map<string, AttemptRow[]>();
  for (const r of decodeRows(AttemptSqlRow, rows)) {
    const row = attemptFromSql(r);
    byEvent.set(row.eventId, [...(byEvent.get(row.eventId) ?? []), row]);
  }
  for (const [id, list] of byEvent) out.set(id, onePage(list, perEvent));
  return out;
}

/** A raw `app.webhook_attempts` row (snake_case, from postgres.js: `a.*`). */
const AttemptSqlRow = rowShape("newest attempts of events", {
  id: col.text,
  endpoint_id: col.text,
  merchant_id: col.text,
  environment: col.oneOf(ENVIRONMENTS),
  event_id: col.text,
  kind: col.text,
  attempt_number: col.int,
  url: col.text,
  succeeded: col.bool,
  status_code: col.nullable(col.int),
  latency_ms: col.int,
  response_excerpt: col.nullable(col.text),
  error: col.nullable(col.text),
  created_at: col.time,
});

/** As drizzle would type it. */
function attemptFromSql(r: RowOf<typeof AttemptSqlRow>): AttemptRow {
  return {
    id: r.id,
    endpointId: r.endpoint_id,
    merchantId: r.merchant_id,
    environment: r.environment,
    eventId: r.event_id,
    kind: r.kind,
    attemptNumber: r.attempt_number,
    url: r.url,
    succeeded: r.succeeded,
    statusCode: r.status_code,
    latencyMs: r.latency_ms,
    responseExcerpt: r.response_excerpt,
    error: r.error,
    createdAt: r.created_at,
  };
}

export async function attemptExists(db: Db, o: Owner, id: string): Promise<boolean> {
  const [r] = await db
    .select({ id: webhookAttempts.id })
    .from(webhookAttempts)
    .where(and(eq(webhookAttempts.id, id), eq(webhookAttempts.merchantId, o.merchantId), eq(webhookAttempts.environment, o.environment)));
  return !!r;
}

export interface NewAttempt {
  id: string;
  endpointId: string;
  merchantId: string;
  environment: string;
  eventId: string;
  kind: "event" | "redelivery" | "test" | "account";
  attemptNumber: number;
  url: string;
  succeeded: boolean;
  statusCode: number | null;
  latencyMs: number;
  responseExcerpt: string | null;
  error: string | null;
  /** When the attempt started, ms since the epoch. */
  atMs: number;
}

/** Many attempts in one statement (the worker's flush, the test event). */
export async function insertAttempts(q: Query, attempts: NewAttempt[]): Promise<void> {
  if (attempts.length === 0) return;
  await q`
    insert into app.webhook_attempts
      (id, endpoint_id, merchant_id, environment, event_id, kind, attempt_number, url, succeeded, status_code, latency_ms, response_excerpt, error, created_at)
    select r.id, r."endpointId", r."merchantId", r.environment, r."eventId", r.kind, r."attemptNumber", r.url, r.succeeded,
           r."statusCode", r."latencyMs", r."responseExcerpt", r.error, to_timestamp(r."atMs" / 1000.0)
      from jsonb_to_recordset(${JSON.stringify(attempts)}::jsonb) as r(
        id text, "endpointId" text, "merchantId" text, environment text, "eventId" text, kind text, "attemptNumber" int,
        url text, succeeded boolean, "statusCode" int, "latencyMs" int, "responseExcerpt" text, error text, "atMs" float8)`;
}
