/**
 * Webhook endpoints, events and the attempt log in the database (the API's side; the
 * worker has its own statements in worker.ts).
 */
import { and, asc, desc, eq, isNull, lt, notInArray, or, sql as dsql, type SQL } from "drizzle-orm";
import type { Sql } from "postgres";
import type { Db } from "../db/client.ts";
import { merchants, paymentSessions, sessionEvents, webhookAttempts, webhookDeliveries, webhookEndpoints } from "../db/schema.ts";
import type { Environment } from "../../../shared/environment.ts";
import { newId } from "../../../shared/ids.ts";
import type { EventReason, SessionStatus } from "../../../shared/status.ts";
import type { Query } from "../sessions/repository.ts";
import { buildEvent, eventTypeFilter, type EventType, type WebhookEvent } from "./payload.ts";
import { depositsOf } from "../sessions/repository.ts";
import type { DepositLike } from "../sessions/views.ts";
import { notifyWorkers } from "../effects/webhook-outbox.ts";
import { seal, unseal } from "./secrets.ts";
import { generateSecret } from "./signing.ts";
import { asDate } from "../db/client.ts";

export type EndpointRow = typeof webhookEndpoints.$inferSelect;
export type AttemptRow = typeof webhookAttempts.$inferSelect;

/** Endpoints per merchant and environment: every event is written once per endpoint. */
export const MAX_ENDPOINTS = 16;
export const DEFAULT_ROTATION_OVERLAP_SECONDS = 24 * 3600;
export const MAX_ROTATION_OVERLAP_SECONDS = 7 * 24 * 3600;

export interface EndpointView {
  id: string;
  url: string;
  description: string | null;
  enabled: boolean;
  disabledReason: string | null;
  environment: Environment;
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export function endpointView(row: EndpointRow, now = new Date()): EndpointView {
  const prev = row.previousSecretExpiresAt && row.previousSecretSealed && row.previousSecretExpiresAt > now ? row.previousSecretExpiresAt : null;
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    enabled: row.enabled,
    disabledReason: row.disabledReason,
    environment: row.environment as Environment,
    previousSecretExpiresAt: prev ? prev.toISOString() : null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export interface Owner {
  merchantId: string;
  environment: Environment;
}

const own = (o: Owner) => and(eq(webhookEndpoints.merchantId, o.merchantId), eq(webhookEndpoints.environment, o.environment), isNull(webhookEndpoints.deletedAt));

export async function countEndpoints(db: Db, o: Owner): Promise<number> {
  const [r] = await db.select({ n: dsql<number>`count(*)::int` }).from(webhookEndpoints).where(own(o));
  return r!.n;
}

/**
 * Creates an endpoint; returns it with its secret in clear (the creation response).
 * Raw SQL so it runs inside withIdempotency's postgres.js transaction.
 */
export async function createEndpoint(
  q: Query,
  key: Buffer,
  args: Owner & { url: string; description: string | null; enabled: boolean },
): Promise<{ row: EndpointRow; secret: string }> {
  const id = newId("webhookEndpoint");
  const secret = generateSecret();
  const rows = await q`
    insert into app.webhook_endpoints (id, merchant_id, environment, url, description, enabled, secret_sealed)
    values (${id}, ${args.merchantId}, ${args.environment}, ${args.url}, ${args.description}, ${args.enabled}, ${seal(key, secret, id)})
    returning *`;
  return { row: endpointFromSql(rows[0]!), secret };
}

export async function findEndpoint(db: Db, o: Owner, id: string): Promise<EndpointRow | undefined> {
  const [row] = await db.select().from(webhookEndpoints).where(and(own(o), eq(webhookEndpoints.id, id)));
  return row;
}

export async function listEndpoints(db: Db, o: Owner): Promise<EndpointRow[]> {
  return db.select().from(webhookEndpoints).where(own(o)).orderBy(asc(webhookEndpoints.createdAt), asc(webhookEndpoints.id));
}

/** Cancels the open deliveries of endpoints (disabled or deleted), locking rows in id order like every other multi-row writer. */
async function cancelOpenDeliveries(q: Query, endpointId: string): Promise<void> {
  await q`
    update app.webhook_deliveries set state = 'canceled', next_attempt_at = null
     where id in (select id from app.webhook_deliveries
                   where endpoint_id = ${endpointId} and state in ('waiting', 'pending', 'sending')
                   order by id for update)`;
}

export async function updateEndpoint(
  sql: Sql,
  o: Owner,
  id: string,
  patch: { url?: string; description?: string | null; enabled?: boolean },
): Promise<EndpointRow | undefined> {
  return sql.begin(async (tx) => {
    const [current] = await tx`
      select enabled from app.webhook_endpoints
       where id = ${id} and merchant_id = ${o.merchantId} and environment = ${o.environment} and deleted_at is null for update`;
    if (!current) return undefined;
    const enabled = patch.enabled ?? (current.enabled as boolean);
    const rows = await tx`
      update app.webhook_endpoints
         set url = coalesce(${patch.url ?? null}, url),
             description = case when ${patch.description !== undefined} then ${patch.description ?? null} else description end,
             enabled = ${enabled},
             disabled_reason = case when ${enabled} then null else disabled_reason end,
             updated_at = now()
       where id = ${id}
      returning *`;
    if (current.enabled && !enabled) await cancelOpenDeliveries(tx, id);
    // Re-enabled: whatever is still open was written by an event whose transaction raced the
    // disable (it saw the endpoint enabled; the disable's cancel did not see its uncommitted
    // row), e.g. a delivery `waiting` behind a head the disable canceled, which nothing would
    // ever release, holding up every later event of its session. The disable meant to cancel
    // it: do so now, under the endpoint's row lock (no writer can add to it meanwhile).
    if (!current.enabled && enabled) await cancelOpenDeliveries(tx, id);
    return endpointFromSql(rows[0]!);
  });
}

export async function deleteEndpoint(sql: Sql, o: Owner, id: string): Promise<EndpointRow | undefined> {
  return sql.begin(async (tx) => {
    const rows = await tx`
      update app.webhook_endpoints set deleted_at = now(), enabled = false, updated_at = now()
       where id = ${id} and merchant_id = ${o.merchantId} and environment = ${o.environment} and deleted_at is null
      returning *`;
    if (!rows[0]) return undefined;
    await cancelOpenDeliveries(tx, id);
    return endpointFromSql(rows[0]);
  });
}

export function revealSecret(key: Buffer, row: EndpointRow): string {
  return unseal(key, row.secretSealed, row.id);
}

/**
 * A new current secret; the old one stays valid (deliveries carry both signatures) for
 * `overlapSeconds`. A rotation during an overlap drops the older previous secret.
 */
export async function rotateSecret(
  sql: Sql,
  key: Buffer,
  o: Owner,
  id: string,
  overlapSeconds: number,
): Promise<{ row: EndpointRow; secret: string } | undefined> {
  const secret = generateSecret();
  const rows = await sql`
    update app.webhook_endpoints
       set previous_secret_sealed = case when ${overlapSeconds} > 0 then secret_sealed else null end,
           previous_secret_expires_at = case when ${overlapSeconds} > 0 then now() + make_interval(secs => ${overlapSeconds}) else null end,
           secret_sealed = ${seal(key, secret, id)},
           updated_at = now()
     where id = ${id} and merchant_id = ${o.merchantId} and environment = ${o.environment} and deleted_at is null
    returning *`;
  return rows[0] ? { row: endpointFromSql(rows[0]), secret } : undefined;
}

/** The secrets a delivery is signed with now: current first, then the previous one while its overlap lasts. */
export function signingSecrets(key: Buffer, r: { id: string; secretSealed: string; previousSecretSealed: string | null; previousValid: boolean }): string[] {
  const out = [unseal(key, r.secretSealed, r.id)];
  if (r.previousSecretSealed && r.previousValid) out.push(unseal(key, r.previousSecretSealed, r.id));
  return out;
}

// ---------------------------------------------------------------- events

type EventRow = typeof sessionEvents.$inferSelect;

export interface EventWithSession {
  event: EventRow;
  session: typeof paymentSessions.$inferSelect;
  publicMerchantId: string;
  deposits: DepositLike[];
}

export function eventObject(e: EventWithSession): WebhookEvent {
  return buildEvent(e.session, e.publicMerchantId, e.deposits, {
    id: e.event.id,
    sequence: e.event.sequence,
    status: e.event.status as SessionStatus,
    previousStatus: (e.event.previousStatus as SessionStatus | null) ?? null,
    reason: e.event.reason as EventReason,
    detail: e.event.detail,
    createdAt: e.event.createdAt,
  });
}

const eventSelect = {
  event: sessionEvents,
  session: paymentSessions,
  sandboxPublicId: merchants.sandboxPublicId,
  livePublicId: merchants.livePublicId,
};

type EventJoin = { event: EventRow; session: typeof paymentSessions.$inferSelect; sandboxPublicId: string; livePublicId: string };

async function withPublicIdAndDeposits(db: Db, rows: EventJoin[]): Promise<EventWithSession[]> {
  const deposits = await depositsOf(db, [...new Set(rows.map((r) => r.session.id))]);
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
  if (o.startingAfter) {
    const cursorTime = dsql`(select created_at from app.session_events where id = ${o.startingAfter})`;
    conditions.push(or(lt(sessionEvents.createdAt, cursorTime), and(eq(sessionEvents.createdAt, cursorTime), lt(sessionEvents.id, o.startingAfter)))!);
  }
  const rows = await db
    .select(eventSelect)
    .from(sessionEvents)
    .innerJoin(paymentSessions, eq(paymentSessions.id, sessionEvents.sessionId))
    .innerJoin(merchants, eq(merchants.id, sessionEvents.merchantId))
    .where(and(...conditions))
    .orderBy(desc(sessionEvents.createdAt), desc(sessionEvents.id))
    .limit(o.limit + 1);
  return { rows: await withPublicIdAndDeposits(db, rows.slice(0, o.limit)), hasMore: rows.length > o.limit };
}

export interface DeliveryView {
  webhookEndpointId: string;
  state: string;
  ordered: boolean;
  attempts: number;
  nextAttemptAt: string | null;
  lastAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
}

export async function deliveriesOf(db: Db, eventId: string): Promise<DeliveryView[]> {
  const rows = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.eventId, eventId)).orderBy(asc(webhookDeliveries.id));
  return rows.map((d) => ({
    webhookEndpointId: d.endpointId,
    state: d.state,
    ordered: d.ordered,
    attempts: d.attempts,
    nextAttemptAt: d.state === "pending" && d.nextAttemptAt ? d.nextAttemptAt.toISOString() : null,
    lastAttemptAt: d.lastAttemptAt?.toISOString() ?? null,
    lastStatusCode: d.lastStatusCode,
    lastError: d.lastError,
  }));
}

/**
 * Sends an event again to the given enabled endpoints, now, with the usual retries. These
 * deliveries stand outside the per-session order (the merchant asked for this one event).
 */
export async function redeliver(sql: Sql, event: EventRow, endpointIds: string[]): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`
      insert into app.webhook_deliveries (event_id, endpoint_id, session_id, sequence, ordered, state, next_attempt_at)
      select ${event.id}, ep.id, ${event.sessionId}, ${event.sequence}, false, 'pending', now()
        from app.webhook_endpoints ep
       where ep.id in ${tx(endpointIds)} and ep.enabled and ep.deleted_at is null`;
    await notifyWorkers(tx);
  });
}

// ---------------------------------------------------------------- attempts

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
  if (o.startingAfter) {
    const cursorTime = dsql`(select created_at from app.webhook_attempts where id = ${o.startingAfter})`;
    conditions.push(or(lt(webhookAttempts.createdAt, cursorTime), and(eq(webhookAttempts.createdAt, cursorTime), lt(webhookAttempts.id, o.startingAfter)))!);
  }
  const rows = await db
    .select()
    .from(webhookAttempts)
    .where(and(...conditions))
    .orderBy(desc(webhookAttempts.createdAt), desc(webhookAttempts.id))
    .limit(o.limit + 1);
  return { rows: rows.slice(0, o.limit), hasMore: rows.length > o.limit };
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

// ---------------------------------------------------------------- raw rows


export function endpointFromSql(r: Record<string, unknown>): EndpointRow {
  return {
    id: r.id as string,
    merchantId: r.merchant_id as string,
    environment: r.environment as string,
    url: r.url as string,
    description: (r.description as string | null) ?? null,
    enabled: r.enabled as boolean,
    disabledReason: (r.disabled_reason as string | null) ?? null,
    secretSealed: r.secret_sealed as string,
    previousSecretSealed: (r.previous_secret_sealed as string | null) ?? null,
    previousSecretExpiresAt: r.previous_secret_expires_at == null ? null : asDate(r.previous_secret_expires_at),
    createdAt: asDate(r.created_at),
    updatedAt: asDate(r.updated_at),
    deletedAt: r.deleted_at == null ? null : asDate(r.deleted_at),
  };
}

