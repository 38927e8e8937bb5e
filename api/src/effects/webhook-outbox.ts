/**
 * The durable outbox: the rows of app.webhook_deliveries that an event's own statement or
 * transaction writes, one per enabled endpoint of the session's merchant and environment,
 * and the NOTIFY that wakes the delivery worker when that transaction commits.
 *
 * Whoever records a session event calls one of these in the same transaction:
 *   - the create statement takes `newSessionDeliveries`' pieces into its single statement;
 *   - every later status change calls `enqueueEventDeliveries(tx, event)` right after
 *     inserting the event row (transitionSession does; so must the session actor);
 *   - a refund's state change writes its event (refunds/events.ts) and calls
 *     `enqueueRefundEventDeliveries`: same queue, same order, by the session's sequence.
 *
 * Ordering per (endpoint, session): a new delivery is `pending` (due now) only when no
 * earlier delivery of that session to that endpoint is still open; otherwise it is
 * `waiting`, and the worker makes it pending when the one before it ends (succeeded or
 * retries used up). The open rows are locked (in id order) before deciding, so a worker
 * finishing the head at the same moment is either seen as finished or finishes after
 * this transaction commits and then releases the new row itself. Writers do not lock the
 * endpoint row (a FOR SHARE here could deadlock with the worker, which locks deliveries
 * before disabling an endpoint on 410): a delivery written while its endpoint is being
 * disabled is canceled by the worker's claim instead of being sent when `pending`, and by
 * the re-enable (store.ts, updateEndpoint) when left `waiting` behind a head the disable
 * canceled.
 *
 * Account events (app.account_events: a settlement address changed) go through the same
 * table and worker. `enqueueAccountEvent` writes the event and its deliveries in one
 * statement inside the transaction of the change it announces; they are never `waiting`
 * (no session, so nothing to be ordered behind) and are due at once.
 */
import type { PendingQuery, Row, Sql, TransactionSql } from "postgres";
import { sql as dsql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { col, decodeRow, rowShape } from "../db/rows.ts";
import type { AccountEventType } from "../db/column-values.ts";

export const WEBHOOK_CHANNEL = "paysession_webhooks";

export interface EventRef {
  id: string;
  sessionId: string;
  merchantId: string;
  environment: string;
  sequence: number;
}

/**
 * The deliveries of new sessions' first events, for a statement that writes them in the same
 * statement (the create statement: sessions/create/statement.ts), as its own pieces:
 *
 *   - `ctes`, to place after the CTE that inserted the events: `events` names that CTE, which
 *     must return (id, session_id, merchant_id, environment, sequence). It adds the CTEs `wd`
 *     (the deliveries) and `wn` (the NOTIFY, when any was written).
 *   - `notified`, an expression for the statement's final select: how many NOTIFYs were sent.
 *     It is what makes the NOTIFY happen — a CTE that only selects is run only when something
 *     reads it, so a statement that left it out would write deliveries and wake no worker.
 *
 * The endpoints are probed by index once per event (LATERAL, `offset 0`): the grouped creates keep
 * one plan per statement (shared/postgres-settings.ts, KEPT_PLANS), which must stay right as the
 * table grows. outbox.test.ts runs the create statement and checks both rules.
 */
export function newSessionDeliveries(q: Sql | TransactionSql, events: string): { ctes: PendingQuery<Row[]>; notified: PendingQuery<Row[]> } {
  const e = q(events);
  return {
    ctes: q`
  wd as (
    insert into app.webhook_deliveries (event_id, endpoint_id, session_id, sequence, ordered, state, next_attempt_at)
    select e.id, ep.id, e.session_id, e.sequence, true, 'pending', now()
      from ${e} e cross join lateral (
        select ep.id from app.webhook_endpoints ep
         where ep.merchant_id = e.merchant_id and ep.environment = e.environment and ep.enabled and ep.deleted_at is null
        offset 0) ep
    returning 1
  ), wn as (
    select pg_notify(${WEBHOOK_CHANNEL}, '') from (select 1 from wd limit 1) x
  )`,
    notified: q`(select count(*) from wn)`,
  };
}

/**
 * In the transaction that inserted `event`: its deliveries, and a NOTIFY on commit. The
 * statement, to await or to send in a Pipeline after the event's insert (one row: `n`, how many).
 */
export function enqueueEventDeliveries(tx: TransactionSql | Sql, event: EventRef): PendingQuery<Row[]> {
  return enqueueOrdered(tx, event, "event_id");
}

/**
 * As `enqueueEventDeliveries`, for a refund's event (app.refund_events): its session and its
 * sequence, taken from the session's counter, put it in the same per-(endpoint, session) queue as
 * the session's own events, so it is sent after every earlier one of them and before every later.
 */
export function enqueueRefundEventDeliveries(tx: TransactionSql | Sql, event: EventRef): PendingQuery<Row[]> {
  return enqueueOrdered(tx, event, "refund_event_id");
}

function enqueueOrdered(tx: TransactionSql | Sql, event: EventRef, eventColumn: "event_id" | "refund_event_id"): PendingQuery<Row[]> {
  return tx`
    with open as (
      select id, endpoint_id from app.webhook_deliveries
       where session_id = ${event.sessionId} and ordered and state in ('waiting', 'pending', 'sending')
       order by id
       for update
    ), wd as (
      insert into app.webhook_deliveries (${tx(eventColumn)}, endpoint_id, session_id, sequence, ordered, state, next_attempt_at)
      select ${event.id}, ep.id, ${event.sessionId}, ${event.sequence}, true,
             case when exists (select 1 from open where open.endpoint_id = ep.id) then 'waiting' else 'pending' end,
             case when exists (select 1 from open where open.endpoint_id = ep.id) then null else now() end
        from app.webhook_endpoints ep
       where ep.merchant_id = ${event.merchantId} and ep.environment = ${event.environment} and ep.enabled and ep.deleted_at is null
      returning state
    )
    select count(*)::int as n,
           (select count(*) from (select pg_notify(${WEBHOOK_CHANNEL}, '') from (select 1 from wd where state = 'pending' limit 1) x) y)::int as notified
      from wd`;
}

/** Wakes every delivery worker (after redeliveries and the like). */
export async function notifyWorkers(q: TransactionSql | Sql): Promise<void> {
  await q`select pg_notify(${WEBHOOK_CHANNEL}, '')`;
}

export interface NewAccountEvent {
  id: string;
  merchantId: string;
  environment: string;
  type: AccountEventType;
  data: Record<string, unknown>;
}

/**
 * In the transaction of the change it announces (a drizzle transaction: the settlement writer
 * and the security history are drizzle's): the account event, one delivery per enabled endpoint
 * of its merchant and environment, and a NOTIFY on commit. Returns how many deliveries.
 */
const AccountEventDeliveries = rowShape("enqueue account event", { n: col.int });

export async function enqueueAccountEvent(tx: Pick<Db, "execute">, event: NewAccountEvent): Promise<number> {
  const rows = await tx.execute(dsql`
    with a as (
      insert into app.account_events (id, merchant_id, environment, type, data)
      values (${event.id}, ${event.merchantId}, ${event.environment}, ${event.type}, ${JSON.stringify(event.data)}::jsonb)
      returning id, merchant_id, environment
    ), wd as (
      insert into app.webhook_deliveries (account_event_id, endpoint_id, ordered, state, next_attempt_at)
      select a.id, ep.id, true, 'pending', now()
        from a join app.webhook_endpoints ep
          on ep.merchant_id = a.merchant_id and ep.environment = a.environment and ep.enabled and ep.deleted_at is null
      returning 1
    )
    select (select count(*) from wd)::int as n,
           (select count(*) from (select pg_notify(${WEBHOOK_CHANNEL}, '') from (select 1 from wd limit 1) x) y)::int as notified`);
  return decodeRow(AccountEventDeliveries, rows[0]).n;
}
