/**
 * Payment sessions in the database: reads, transitions and money events. Creation is a module of
 * its own (create/), one statement for a group of creates.
 */
import { refundedTotal } from "../../../shared/money.ts";
import { and, asc, eq, getTableColumns, inArray, type SQL } from "drizzle-orm";
import type { PendingQuery, Row, Sql, TransactionSql } from "postgres";
import { Pipeline } from "../db/pipeline.ts";
import type { Db } from "../db/client.ts";
import { after, newestFirst, onePage } from "../db/keyset.ts";
import { paymentSessions, sessionDeposits, sessionEvents } from "../db/schema.ts";
import { ENVIRONMENTS, type Environment } from "../../../shared/environment.ts";
import { newId } from "../../../shared/ids.ts";
import { EVENT_REASONS, SESSION_STATUSES, TRANSITION_REASONS, type MoneyEventReason, type SessionStatus, type TransitionReason } from "../../../shared/status.ts";
import { hashSecret } from "../credentials/format.ts";
import type { KeyCheck } from "../credentials/store.ts";
import { enqueueEventDeliveries } from "../effects/webhook-outbox.ts";
import type { MoneyReasonAndDetail, TransitionReasonAndDetail } from "./event-detail.ts";
import { merchantView, type DepositLike, type DepositRow, type EventRow, type MerchantSessionView, type SessionRow } from "./views.ts";
import { col, decodeFirst, decodeRow, rowShape } from "../db/rows.ts";
import { Type } from "@sinclair/typebox";

export type Query = Sql | TransactionSql;

export async function findSession(db: Db, merchantId: string, environment: Environment, id: string): Promise<SessionRow | undefined> {
  const [row] = await db
    .select()
    .from(paymentSessions)
    .where(and(eq(paymentSessions.id, id), eq(paymentSessions.merchantId, merchantId), eq(paymentSessions.environment, environment)));
  return row;
}

/** The deposit addresses of these sessions, grouped by session id, chain ids ascending. */
export async function depositsOf(db: Db, sessionIds: string[]): Promise<Map<string, DepositRow[]>> {
  const out = new Map<string, DepositRow[]>(sessionIds.map((id) => [id, []]));
  if (sessionIds.length === 0) return out;
  const rows = await db.select().from(sessionDeposits).where(inArray(sessionDeposits.sessionId, sessionIds)).orderBy(asc(sessionDeposits.chainId));
  for (const r of rows) out.get(r.sessionId)!.push(r);
  return out;
}

export async function findSessionById(db: Db, id: string): Promise<SessionRow | undefined> {
  const [row] = await db.select().from(paymentSessions).where(eq(paymentSessions.id, id));
  return row;
}

export async function depositsOfSession(db: Db, sessionId: string): Promise<DepositRow[]> {
  return (await depositsOf(db, [sessionId])).get(sessionId) ?? [];
}

/** The merchant's full view of one session (`row`, as read before): with its networks and its history, read afresh in one statement (readMerchantView). */
export async function loadMerchantView(db: Db, row: SessionRow, publicMerchantId: string): Promise<MerchantSessionView> {
  const { view } = await readMerchantView(db.$client, { id: row.id, merchantId: row.merchantId, environment: row.environment, publicMerchantId });
  if (!view) throw new Error(`session ${row.id} is gone`); // sessions are never deleted
  return view;
}

/**
 * A retrieve's one statement (GET /payment-sessions/{id}): the session with its deposits and its
 * history, read from one snapshot (a single statement: no transition can fall between the row and
 * its history), and whether the key the request was authenticated with still holds. `keyCheck`
 * (a lookup reused from credentials/key-memo.ts) is checked first, in the same statement: the
 * key still there, unrevoked, this merchant's in this environment — its settlement addresses do
 * not matter to a read. When it fails, `keyOk` is false and no session is read (the caller looks
 * the key up again, which refuses a revoked key). `view` is undefined for no such session.
 */
export async function readMerchantView(
  sql: Sql,
  args: { id: string; merchantId: string; environment: Environment; publicMerchantId: string; keyCheck?: KeyCheck },
): Promise<{ keyOk: boolean; view?: MerchantSessionView }> {
  const c = args.keyCheck;
  const keyOk = c
    ? sql`exists (select from app.api_keys k where k.key_hash = ${c.keyHash} and k.id = ${c.keyId} and k.revoked_at is null
                    and k.merchant_id = ${args.merchantId} and k.environment = ${args.environment})`
    : sql`true`;
  const rows = await sql`
    select k.ok as key_ok, s.id is not null as found, s.*,
           ${depositsJsonOf(sql, "s")} as deposits_json,
           (select json_agg(to_jsonb(e) - 'snapshot' order by e.sequence)::text from app.session_events e where e.session_id = s.id) as events_json,
           (select json_agg(json_build_object('held', t.held::text, 'unitDecimals', d.decimals))::text
              from app.refund_totals t join app.session_deposits d on d.session_id = t.session_id and d.chain_id = t.chain_id
             where t.session_id = s.id) as refunded_json
      from (select ${keyOk} as ok) k
      left join app.payment_sessions s on k.ok and s.id = ${args.id} and s.merchant_id = ${args.merchantId} and s.environment = ${args.environment}`;
  const r = decodeRow(RetrieveRow, rows[0]);
  if (!r.key_ok) return { keyOk: false };
  if (!r.found) return { keyOk: true };
  const refunded = refundedTotal((r.refunded_json ?? []).map((h) => ({ held: BigInt(h.held), unitDecimals: h.unitDecimals })));
  return { keyOk: true, view: merchantView(sessionFromSql(r), args.publicMerchantId, (r.deposits_json ?? []).map(depositFromJson), (r.events_json ?? []).map(eventFromJson), refunded) };
}

const jsonList = col.nullable(col.json(Type.Array(Type.Unknown())));
const RetrieveRow = rowShape("retrieve", {
  key_ok: col.bool,
  found: col.bool,
  deposits_json: jsonList,
  events_json: jsonList,
  /** What its refunds hold per network and token (app.refund_totals), each in its network's unit. */
  refunded_json: col.nullable(col.json(Type.Array(Type.Object({ held: Type.String(), unitDecimals: Type.Number() })))),
});

/**
 * The deposits of the session row `session` names in the statement, as a json array's text in
 * chain order (null: none), each its `session_deposits` row with its amount as text: a numeric in
 * json is a JSON number, which loses digits past 2^53 (an 18-decimal token's amounts).
 */
function depositsJsonOf(q: Sql, session: string): PendingQuery<Row[]> {
  return q`(select json_agg(to_jsonb(d) || jsonb_build_object('required_base_units', d.required_base_units::text) order by d.chain_id)::text
              from app.session_deposits d where d.session_id = ${q(session)}.id)`;
}

const EventJson = rowShape("session event (json)", {
  id: col.text,
  session_id: col.text,
  merchant_id: col.text,
  environment: col.oneOf(ENVIRONMENTS),
  sequence: col.int,
  status: col.oneOf(SESSION_STATUSES),
  previous_status: col.nullable(col.oneOf(SESSION_STATUSES)),
  reason: col.oneOf(EVENT_REASONS),
  detail: col.json(Type.Record(Type.String(), Type.Unknown())),
  created_at: col.time,
});

/** A `session_events` row as Postgres's row_to_json spells it (snake_case), checked. */
export function eventFromJson(json: unknown): EventRow {
  const r = decodeRow(EventJson, json);
  return {
    id: r.id,
    sessionId: r.session_id,
    merchantId: r.merchant_id,
    environment: r.environment,
    sequence: r.sequence,
    status: r.status,
    previousStatus: r.previous_status,
    reason: r.reason,
    detail: r.detail,
    createdAt: r.created_at,
  };
}

export async function sessionEventsOf(db: Db, sessionId: string): Promise<EventRow[]> {
  // Without the snapshot (what a webhook body is built from): a history does not need it.
  const { snapshot: _snapshot, ...columns } = getTableColumns(sessionEvents);
  return db.select(columns).from(sessionEvents).where(eq(sessionEvents.sessionId, sessionId)).orderBy(asc(sessionEvents.sequence));
}

/**
 * The session a token names, with its merchant's name and public ids and the session's deposits
 * (chain ids ascending): one statement, as the payer's poll reads it twice a second per open
 * checkout (http/public-sessions.ts). Undefined: no session has that token.
 */
export async function findSessionByToken(
  sql: Sql,
  token: string,
): Promise<{ session: SessionRow; merchantName: string; merchantPublicIds: { sandbox: string; production: string }; deposits: DepositLike[] } | undefined> {
  const rows = await sql`
    select s.*, m.name as merchant_name, m.sandbox_public_id, m.live_public_id,
           ${depositsJsonOf(sql, "s")} as deposits_json
      from app.payment_sessions s join app.merchants m on m.id = s.merchant_id
     where s.token_hash = ${hashSecret(token)}`;
  const r = decodeFirst(TokenRow, rows);
  if (!r) return undefined;
  return {
    session: sessionFromSql(rows[0]),
    merchantName: r.merchant_name,
    merchantPublicIds: { sandbox: r.sandbox_public_id, production: r.live_public_id },
    deposits: (r.deposits_json ?? []).map(depositFromJson),
  };
}

const TokenRow = rowShape("session by token", { merchant_name: col.text, sandbox_public_id: col.text, live_public_id: col.text, deposits_json: jsonList });

export interface ListArgs {
  merchantId: string;
  environment: Environment;
  limit: number;
  status?: SessionStatus;
  /** Only the sessions this payment link started (docs/payment-links.md). */
  paymentLinkId?: string;
  /** Keyset cursor: the id of the last session of the previous page. */
  startingAfter?: SessionRow;
}

/** Newest first; one row more than asked tells whether another page exists. */
export async function listSessions(db: Db, args: ListArgs): Promise<{ rows: SessionRow[]; hasMore: boolean }> {
  const conditions: SQL[] = [eq(paymentSessions.merchantId, args.merchantId), eq(paymentSessions.environment, args.environment)];
  if (args.status) conditions.push(eq(paymentSessions.status, args.status));
  if (args.paymentLinkId) conditions.push(eq(paymentSessions.paymentLinkId, args.paymentLinkId));
  if (args.startingAfter) conditions.push(after(paymentSessions, args.startingAfter.id));
  const rows = await db
    .select()
    .from(paymentSessions)
    .where(and(...conditions))
    .orderBy(...newestFirst(paymentSessions))
    .limit(args.limit + 1);
  return onePage(rows, args.limit);
}

/**
 * Moves a session from one of `from` to `to`, recording the event, in one transaction: a
 * direct transition, outside the actor (tests and benchmarks drive webhooks with it).
 * Returns undefined (and changes nothing) when the session is not in one of `from`.
 */
export async function transitionSession(
  sql: Sql,
  args: { sessionId: string; from: SessionStatus[]; to: SessionStatus; reason: TransitionReason; detail?: Record<string, unknown> },
): Promise<SessionRow | undefined> {
  return sql.begin(async (tx) => {
    const [current] = await tx`
      select id, merchant_id, environment, status, status_reason, sequence from app.payment_sessions where id = ${args.sessionId} for update`;
    const locked = current && lockedSessionFromSql(current);
    if (!locked || !args.from.includes(locked.status)) return undefined;
    const writes = new Pipeline();
    // A driver, not a decision: it records the detail it is given (none by default), whatever its reason.
    const change = { reason: args.reason, detail: args.detail ?? {} } as TransitionReasonAndDetail;
    const { updated } = recordTransition(writes, tx, locked, { to: args.to, ...change });
    await writes.flush();
    return sessionFromSql((await updated)[0]!);
  });
}

/**
 * A session under its row lock, as the writes a step has queued so far leave it. The sequence
 * is counted here rather than read back from each write — exact, since nobody else can change
 * the row while the lock is held — so that the writes go out together (db/pipeline.ts).
 */
export interface LockedSession {
  id: string;
  merchantId: string;
  environment: string;
  status: SessionStatus;
  statusReason: string;
  sequence: number;
}

const LockedRow = rowShape("locked session", {
  id: col.text,
  merchant_id: col.text,
  environment: col.oneOf(ENVIRONMENTS),
  status: col.oneOf(SESSION_STATUSES),
  status_reason: col.text,
  sequence: col.int,
});

/** From a row selected `for update` with id, merchant_id, environment, status, status_reason, sequence. */
export function lockedSessionFromSql(row: unknown): LockedSession {
  const r = decodeRow(LockedRow, row);
  return { id: r.id, merchantId: r.merchant_id, environment: r.environment, status: r.status, statusReason: r.status_reason, sequence: r.sequence };
}

/**
 * In the caller's transaction, which holds the session's row lock: the new status, its event,
 * and the event's webhook deliveries (effects/webhook-outbox.ts), queued on `writes`. The one
 * place a status changes, for the actor and for transitionSession alike. `updated`: the
 * session row after it, once the writes are flushed.
 */
export function recordTransition(
  writes: Pipeline,
  tx: TransactionSql,
  session: LockedSession,
  args: TransitionReasonAndDetail & { to: SessionStatus; funding?: { chainId: number; amount: string } },
): { eventId: string; updated: Promise<Row[]> } {
  const previous = session.status;
  session.status = args.to;
  session.statusReason = args.reason;
  session.sequence += 1;
  const updated = writes.send(tx`
    update app.payment_sessions
       set status = ${args.to}, status_reason = ${args.reason}, sequence = ${session.sequence}, updated_at = now(),
           funding_chain_id = coalesce(${args.funding?.chainId ?? null}::int, funding_chain_id),
           funding_amount = coalesce(${args.funding?.amount ?? null}::numeric, funding_amount)
     where id = ${session.id}
    returning *`);
  const eventId = queueEvent(writes, tx, session, { previous, reason: args.reason, detail: args.detail });
  return { eventId, updated };
}

/**
 * In the caller's transaction (holding the session's row lock): an event that is no status
 * change — money moved (sessions/funds.ts) — with its webhook deliveries, in the session's
 * one sequence, queued on `writes`. The status and its reason stay as they are.
 */
export function recordMoneyEvent(
  writes: Pipeline,
  tx: TransactionSql,
  session: LockedSession,
  args: MoneyReasonAndDetail,
): string {
  session.sequence += 1;
  writes.send(tx`update app.payment_sessions set sequence = ${session.sequence}, updated_at = now() where id = ${session.id}`);
  // The status reason of the moment goes with the event, so its payload never changes later.
  return queueEvent(writes, tx, session, { previous: session.status, reason: args.reason, detail: { ...args.detail, statusReason: session.statusReason } });
}

/**
 * The session's event at its current sequence and status (the caller has counted both), and
 * the event's webhook deliveries, queued on `writes`. Returns the event's id. Its two callers
 * above take the detail typed by its reason (event-detail.ts); here it is only stored. The
 * event's snapshot (what its webhook body is built from) is the session as the writes queued
 * before it leave the row: they run first, in the same transaction.
 */
function queueEvent(
  writes: Pipeline,
  tx: TransactionSql,
  session: LockedSession,
  event: { previous: SessionStatus; reason: TransitionReason | MoneyEventReason; detail: Record<string, unknown> },
): string {
  const eventId = newId("event");
  writes.send(tx`
    insert into app.session_events (id, session_id, merchant_id, environment, sequence, status, previous_status, reason, detail, created_at, snapshot)
    values (${eventId}, ${session.id}, ${session.merchantId}, ${session.environment}, ${session.sequence}, ${session.status},
            ${event.previous}, ${event.reason}, ${JSON.stringify(event.detail)}::jsonb, now(), app.session_event_snapshot(${session.id}))`);
  writes.send(enqueueEventDeliveries(tx, { id: eventId, sessionId: session.id, merchantId: session.merchantId, environment: session.environment, sequence: session.sequence }));
  return eventId;
}

const SessionSql = rowShape("payment session", {
  id: col.text,
  merchant_id: col.text,
  environment: col.oneOf(ENVIRONMENTS),
  status: col.oneOf(SESSION_STATUSES),
  status_reason: col.oneOf(TRANSITION_REASONS),
  amount_minor: col.wholeNumber,
  currency: col.text,
  reference_id: col.nullable(col.text),
  metadata: col.json(Type.Record(Type.String(), Type.String())),
  expires_at: col.time,
  token_hash: col.text,
  token_expires_at: col.time,
  sequence: col.int,
  wake_at: col.nullable(col.time),
  funding_chain_id: col.nullable(col.int),
  funding_amount: col.nullable(col.wholeNumber),
  force_sweep_failure: col.bool,
  created_at: col.time,
  updated_at: col.time,
  // A snapshot written before the column (0033_payment_links) has none: webhooks/events.ts fromSnapshot reads it as null.
  payment_link_id: col.nullable(col.text),
});

/**
 * An `app.payment_sessions` row read with raw SQL (snake_case; or as json inside another
 * statement), checked and typed as drizzle types it.
 */
export function sessionFromSql(row: unknown): SessionRow {
  const r = decodeRow(SessionSql, row);
  return {
    id: r.id,
    merchantId: r.merchant_id,
    environment: r.environment,
    status: r.status,
    statusReason: r.status_reason,
    amountMinor: r.amount_minor,
    currency: r.currency,
    referenceId: r.reference_id,
    metadata: r.metadata,
    expiresAt: r.expires_at,
    tokenHash: r.token_hash,
    tokenExpiresAt: r.token_expires_at,
    sequence: r.sequence,
    wakeAt: r.wake_at,
    fundingChainId: r.funding_chain_id,
    fundingAmount: r.funding_amount === null ? null : r.funding_amount.toString(),
    forceSweepFailure: r.force_sweep_failure,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    paymentLinkId: r.payment_link_id,
  };
}

const DepositJson = rowShape("session deposit (json)", {
  chain_id: col.int,
  address: col.text,
  token_address: col.text,
  decimals: col.int,
  required_base_units: col.wholeNumber,
  confirmations: col.int,
  settlement_address: col.text,
  // Absent from a row read by a build before the column (never from the table itself).
  tokens: col.nullable(col.json(Type.Array(Type.Object({ address: Type.String(), symbol: Type.String(), decimals: Type.Integer({ minimum: 0, maximum: 77 }) })))),
});

/** A `session_deposits` row as Postgres's to_jsonb spells it (snake_case), checked. */
export function depositFromJson(json: unknown): DepositLike {
  const r = decodeRow(DepositJson, json);
  return {
    chainId: r.chain_id,
    address: r.address,
    tokenAddress: r.token_address,
    decimals: r.decimals,
    requiredBaseUnits: r.required_base_units,
    confirmations: r.confirmations,
    settlementAddress: r.settlement_address,
    ...(r.tokens ? { tokens: r.tokens } : {}),
  };
}
