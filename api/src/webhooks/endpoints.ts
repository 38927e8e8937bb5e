/**
 * Webhook endpoints in the database (the API's side): create, list, update, delete, and their
 * signing secrets, sealed at rest (secrets.ts) and rotated with an overlap during which
 * deliveries carry both signatures. Disabling or deleting an endpoint cancels its open
 * deliveries in the same transaction.
 */
import { and, asc, eq, isNull, sql as dsql } from "drizzle-orm";
import type { PendingQuery, Row, Sql, TransactionSql } from "postgres";
import type { Db } from "../db/client.ts";
import { webhookEndpoints } from "../db/schema.ts";
import { ENVIRONMENTS, type Environment } from "../../../shared/environment.ts";
import { newId } from "../../../shared/ids.ts";
import type { Query } from "../sessions/repository.ts";
import { openSecret, sealSecret } from "./secrets.ts";
import { generateSecret } from "./signing.ts";
import { col, decodeFirst, decodeRow, rowShape } from "../db/rows.ts";

export type EndpointRow = typeof webhookEndpoints.$inferSelect;

/**
 * A statement queued in a change's own transaction, given the endpoint as changed: its
 * security-history line (credentials/security-history.ts changeStatement), so the change and
 * its line commit together or not at all.
 */
export type WithChange = (tx: TransactionSql, row: EndpointRow) => PendingQuery<Row[]>;

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
    environment: row.environment,
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
    values (${id}, ${args.merchantId}, ${args.environment}, ${args.url}, ${args.description}, ${args.enabled}, ${sealSecret(key, secret, id)})
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

const EndpointEnabled = rowShape("endpoint enabled, for update", { enabled: col.bool });

export async function updateEndpoint(
  sql: Sql,
  o: Owner,
  id: string,
  patch: { url?: string; description?: string | null; enabled?: boolean },
  withChange?: WithChange,
): Promise<EndpointRow | undefined> {
  return sql.begin(async (tx) => {
    const current = decodeFirst(
      EndpointEnabled,
      await tx`
        select enabled from app.webhook_endpoints
         where id = ${id} and merchant_id = ${o.merchantId} and environment = ${o.environment} and deleted_at is null for update`,
    );
    if (!current) return undefined;
    const enabled = patch.enabled ?? current.enabled;
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
    const row = endpointFromSql(rows[0]!);
    if (withChange) await withChange(tx, row);
    return row;
  });
}

export async function deleteEndpoint(sql: Sql, o: Owner, id: string, withChange?: WithChange): Promise<EndpointRow | undefined> {
  return sql.begin(async (tx) => {
    const rows = await tx`
      update app.webhook_endpoints set deleted_at = now(), enabled = false, updated_at = now()
       where id = ${id} and merchant_id = ${o.merchantId} and environment = ${o.environment} and deleted_at is null
      returning *`;
    if (!rows[0]) return undefined;
    await cancelOpenDeliveries(tx, id);
    const row = endpointFromSql(rows[0]);
    if (withChange) await withChange(tx, row);
    return row;
  });
}

export function revealSecret(key: Buffer, row: EndpointRow): string {
  return openSecret(key, row.secretSealed, row.id);
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
  withChange?: WithChange,
): Promise<{ row: EndpointRow; secret: string } | undefined> {
  const secret = generateSecret();
  return sql.begin(async (tx) => {
    const rows = await tx`
      update app.webhook_endpoints
         set previous_secret_sealed = case when ${overlapSeconds} > 0 then secret_sealed else null end,
             previous_secret_expires_at = case when ${overlapSeconds} > 0 then now() + make_interval(secs => ${overlapSeconds}) else null end,
             secret_sealed = ${sealSecret(key, secret, id)},
             updated_at = now()
       where id = ${id} and merchant_id = ${o.merchantId} and environment = ${o.environment} and deleted_at is null
      returning *`;
    if (!rows[0]) return undefined;
    const row = endpointFromSql(rows[0]);
    if (withChange) await withChange(tx, row);
    return { row, secret };
  });
}

/** The secrets a delivery is signed with now: current first, then the previous one while its overlap lasts. */
export function signingSecrets(key: Buffer, r: { id: string; secretSealed: string; previousSecretSealed: string | null; previousValid: boolean }): string[] {
  const out = [openSecret(key, r.secretSealed, r.id)];
  if (r.previousSecretSealed && r.previousValid) out.push(openSecret(key, r.previousSecretSealed, r.id));
  return out;
}

/** A raw `app.webhook_endpoints` row (snake_case, from postgres.js: `returning *`). */
const EndpointSqlRow = rowShape("webhook endpoint", {
  id: col.text,
  merchant_id: col.text,
  environment: col.oneOf(ENVIRONMENTS),
  url: col.text,
  description: col.nullable(col.text),
  enabled: col.bool,
  disabled_reason: col.nullable(col.text),
  secret_sealed: col.text,
  previous_secret_sealed: col.nullable(col.text),
  previous_secret_expires_at: col.nullable(col.time),
  created_at: col.time,
  updated_at: col.time,
  deleted_at: col.nullable(col.time),
});

/** A raw `app.webhook_endpoints` row as drizzle would type it. */
export function endpointFromSql(row: unknown): EndpointRow {
  const r = decodeRow(EndpointSqlRow, row);
  return {
    id: r.id,
    merchantId: r.merchant_id,
    environment: r.environment,
    url: r.url,
    description: r.description,
    enabled: r.enabled,
    disabledReason: r.disabled_reason,
    secretSealed: r.secret_sealed,
    previousSecretSealed: r.previous_secret_sealed,
    previousSecretExpiresAt: r.previous_secret_expires_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    deletedAt: r.deleted_at,
  };
}
