/**
 * The security history (app.security_events, append-only): who did what, when, from which
 * address. Also the source of the sign-in throttle's failure counts.
 */
import { and, desc, eq, lt, or, sql as dsql } from "drizzle-orm";
import type { PendingQuery, Row, Sql, TransactionSql } from "postgres";
import type { Db } from "../db/client.ts";
import { securityEvents } from "../db/schema.ts";
import { newId } from "../../../shared/ids.ts";
import type { Environment } from "../../../shared/environment.ts";
import { WINDOW_SECONDS, type FailureCount } from "./sign-in-throttle.ts";
import { col, decodeFirst, rowShape } from "../db/rows.ts";

export type SecurityAction =
  | "sign_in"
  | "sign_in_failed"
  | "sign_out"
  | "password_changed"
  | "password_reset_requested"
  | "password_reset"
  | "signed_out_others"
  | "member_invited"
  | "two_factor_enabled"
  | "two_factor_disabled"
  | "two_factor_verified"
  | "two_factor_failed"
  | "two_factor_required_changed"
  | "invitation_revoked"
  | "member_joined"
  | "member_role_changed"
  | "member_removed"
  | "ownership_transferred"
  | "api_key_created"
  | "api_key_revoked"
  | "webhook_endpoint_created"
  | "webhook_endpoint_updated"
  | "webhook_endpoint_deleted"
  | "webhook_secret_revealed"
  | "webhook_secret_rotated"
  | "settlement_address_changed"
  | "settlement_address_change_refused"
  | "payment_session_canceled"
  | "refund_created"
  | "refund_canceled"
  | "refund_refused"
  | "refund_approved"
  | "automatic_returns_kept"
  | "webhook_event_redelivered"
  | "refund_settings_changed";

export type SecurityEventRow = typeof securityEvents.$inferSelect;

export interface Actor {
  merchantId: string | null;
  userId: string | null;
  email: string | null;
  ip: string | null;
}

export async function recordSecurityEvent(
  db: Pick<Db, "insert">,
  actor: Actor,
  action: SecurityAction,
  detail: Record<string, unknown> = {},
  environment: Environment | null = null,
): Promise<void> {
  await db.insert(securityEvents).values({ id: newId("securityEvent"), ...actor, action, environment, detail });
}

/**
 * Who made a change, as its line names them, whichever door it came through: a signed-in
 * person (the dashboard: `detail.via` "dashboard") or an API key (`via` "api", with the key's
 * id and `keyPrefix`, which the Security history page shows as "API key <prefix>…"). Built for
 * a request by http/auth.ts `changedBy`.
 */
export interface ChangedBy {
  actor: Actor;
  environment: Environment;
  /** Facts of the door, merged into the line's detail. */
  detail: Record<string, unknown>;
}

/** A change by the signed-in person: the dashboard's door (http/auth.ts `changedBy` builds the API's). */
export function byPerson(actor: Actor, environment: Environment): ChangedBy {
  return { actor, environment, detail: { via: "dashboard" } };
}

/** Who made a change, in words (an announcement's `changedBy`): the person's email, or "API key <prefix>…". */
export function changedByName(by: ChangedBy): string {
  return by.actor.email ?? `API key ${String(by.detail.keyPrefix ?? "")}…`;
}

/**
 * The same line as a postgres.js statement, for a transaction written that way: a change and
 * its line commit together or not at all (a cancel, sessions/cancel.ts; webhook endpoints,
 * webhooks/endpoints.ts; redeliveries, webhooks/events.ts).
 */
export function securityEventStatement(
  tx: TransactionSql | Sql,
  actor: Actor,
  action: SecurityAction,
  detail: Record<string, unknown> = {},
  environment: Environment | null = null,
): PendingQuery<Row[]> {
  return tx`
    insert into app.security_events (id, merchant_id, user_id, email, ip, action, environment, detail)
    values (${newId("securityEvent")}, ${actor.merchantId}, ${actor.userId}, ${actor.email}, ${actor.ip}, ${action}, ${environment}, ${JSON.stringify(detail)}::jsonb)`;
}

/** The line of a change made by `by`, for its transaction to queue. */
export function changeStatement(tx: TransactionSql, by: ChangedBy, action: SecurityAction, detail: Record<string, unknown>): PendingQuery<Row[]> {
  return securityEventStatement(tx, by.actor, action, { ...detail, ...by.detail }, by.environment);
}

/** Newest first, keyset by (created_at, id). */
export async function listSecurityEvents(db: Db, merchantId: string, limit: number, before?: string): Promise<{ rows: SecurityEventRow[]; hasMore: boolean }> {
  const conditions = [eq(securityEvents.merchantId, merchantId)];
  if (before) {
    const t = dsql`(select created_at from app.security_events where id = ${before})`;
    conditions.push(or(lt(securityEvents.createdAt, t), and(eq(securityEvents.createdAt, t), lt(securityEvents.id, before)))!);
  }
  const rows = await db
    .select()
    .from(securityEvents)
    .where(and(...conditions))
    .orderBy(desc(securityEvents.createdAt), desc(securityEvents.id))
    .limit(limit + 1);
  return { rows: rows.slice(0, limit), hasMore: rows.length > limit };
}

const Failures = rowShape("failed sign-ins", { n: col.int, last: col.nullable(col.time) });

/** Failed sign-ins of an email since its last successful one, and of an address, within the window. */
export async function recentFailures(db: Db, email: string, ip: string | null): Promise<{ byEmail: FailureCount; byIp: FailureCount }> {
  const sql = db.$client;
  const byEmail = decodeFirst(
    Failures,
    await sql`
      select count(*)::int as n, max(created_at) as last from app.security_events
       where action = 'sign_in_failed' and email = ${email}
         and created_at > now() - make_interval(secs => ${WINDOW_SECONDS})
         and created_at > coalesce((select max(created_at) from app.security_events where action = 'sign_in' and email = ${email}), '-infinity')`,
  )!;
  const byIp = ip
    ? decodeFirst(
        Failures,
        await sql`
          select count(*)::int as n, max(created_at) as last from app.security_events
           where action = 'sign_in_failed' and ip = ${ip} and created_at > now() - make_interval(secs => ${WINDOW_SECONDS})`,
      )!
    : { n: 0, last: null };
  return { byEmail: { count: byEmail.n, lastAt: byEmail.last }, byIp: { count: byIp.n, lastAt: byIp.last } };
}
