/**
 * The claim: takes due deliveries (`pending` whose next_attempt_at has come, or `sending` whose
 * lease ran out because a process died mid-delivery) with FOR UPDATE SKIP LOCKED, at most
 * `endpointConcurrency` per endpoint, none of the excluded (full) endpoints; each becomes
 * `sending`, attempts + 1 (the claim's fencing token), next_attempt_at = now + lease. A due
 * delivery of an endpoint disabled meanwhile is canceled instead. Returns each claimed
 * delivery with what its body is built from: the session event (with the session and its
 * deposits as of the event: its stored snapshot), the account event or the refund's event (their
 * frozen data), and the endpoint's sealed secrets.
 */
import { Type } from "@sinclair/typebox";
import type { Sql, TransactionSql } from "postgres";
import { ENVIRONMENTS } from "../../../../shared/environment.ts";
import { EVENT_REASONS, SESSION_STATUSES } from "../../../../shared/status.ts";
import { ACCOUNT_EVENT_TYPES, REFUND_EVENT_TYPES } from "../../db/column-values.ts";
import { col, decodeRow, rowShape, type RowOf } from "../../db/rows.ts";

export interface ClaimLimits {
  limit: number;
  excludedEndpoints: readonly string[];
  endpointConcurrency: number;
  leaseMs: number;
}

/**
 * A json object, checked as one: its fields are read by what builds the body (sessionFromSql,
 * depositFromJson, the event's detail by its reason), and a per-key check here would cost the
 * claim loop more than all the rest of the decoding.
 */
const JsonObject = Type.Unsafe<Record<string, unknown>>(Type.Object({}));

/** What every claimed delivery carries: the claim, and the endpoint with its sealed secrets. */
const claimedColumns = {
  delivery_id: col.bigint,
  claim: col.int,
  ordered: col.bool,
  endpoint_id: col.text,
  url: col.text,
  environment: col.oneOf(ENVIRONMENTS),
  merchant_id: col.text,
  secret_sealed: col.text,
  previous_secret_sealed: col.nullable(col.text),
  previous_valid: col.bool,
};

/** A claimed delivery of a session event: the event, and the session and its deposits as json, as of the event. */
const ClaimedSessionDelivery = rowShape("claim deliveries (session event)", {
  ...claimedColumns,
  account_event_id: col.null,
  refund_event_id: col.null,
  event_id: col.text,
  sequence: col.int,
  status: col.oneOf(SESSION_STATUSES),
  previous_status: col.nullable(col.oneOf(SESSION_STATUSES)),
  reason: col.oneOf(EVENT_REASONS),
  detail: col.json(JsonObject),
  event_created_at: col.time,
  session: col.json(JsonObject),
  deposits: col.json(Type.Array(JsonObject)),
  public_merchant_id: col.text,
});

/** A claimed delivery of an account event (a settlement change): its type and frozen data. */
const ClaimedAccountDelivery = rowShape("claim deliveries (account event)", {
  ...claimedColumns,
  account_event_id: col.text,
  refund_event_id: col.null,
  account_type: col.oneOf(ACCOUNT_EVENT_TYPES),
  account_data: col.json(JsonObject),
  account_created_at: col.time,
});

/** A claimed delivery of a refund's event: its type and frozen data (refunds/events.ts). */
const ClaimedRefundDelivery = rowShape("claim deliveries (refund event)", {
  ...claimedColumns,
  account_event_id: col.null,
  refund_event_id: col.text,
  refund_type: col.oneOf(REFUND_EVENT_TYPES),
  refund_data: col.json(JsonObject),
  refund_created_at: col.time,
});

/** Any kind; `account_event_id` and `refund_event_id` tell them apart (both null: a session event). */
export type ClaimedDelivery = RowOf<typeof ClaimedSessionDelivery> | RowOf<typeof ClaimedAccountDelivery> | RowOf<typeof ClaimedRefundDelivery>;

export async function claimDeliveries(sql: Sql | TransactionSql, c: ClaimLimits): Promise<ClaimedDelivery[]> {
  const rows = await sql`
    with due as (
      select d.id, d.endpoint_id, d.next_attempt_at, (ep.enabled and ep.deleted_at is null) as live
        from app.webhook_deliveries d join app.webhook_endpoints ep on ep.id = d.endpoint_id
       where d.state in ('pending', 'sending') and d.next_attempt_at <= now()
         and not (d.endpoint_id = any(string_to_array(${c.excludedEndpoints.join(",")}, ',')))
       order by d.next_attempt_at
       limit ${c.limit * 4}
       for update of d skip locked
    ), stray as (
      -- written while its endpoint was being disabled (a race the writers do not lock against)
      update app.webhook_deliveries d set state = 'canceled', next_attempt_at = null
        from due where d.id = due.id and not due.live
    ), pick as (
      select id from (
        select id, next_attempt_at, row_number() over (partition by endpoint_id order by next_attempt_at, id) as rn from due where live
      ) x where rn <= ${c.endpointConcurrency}
      order by next_attempt_at limit ${c.limit}
    ), claimed as (
      update app.webhook_deliveries d
         set state = 'sending', attempts = d.attempts + 1,
             next_attempt_at = now() + ${c.leaseMs} * interval '1 millisecond'
        from pick where d.id = pick.id
      returning d.id, d.event_id, d.account_event_id, d.refund_event_id, d.endpoint_id, d.attempts, d.ordered
    ), frozen as (
      -- An event written without its snapshot (before 0023, or by an older build during a rolling
      -- upgrade) takes it at its first claim, so its later attempts send the same bytes as this one.
      update app.session_events e set snapshot = app.session_event_snapshot(e.session_id)
        from claimed c where e.id = c.event_id and e.snapshot is null
      returning e.id, e.snapshot
    )
    select c.id as delivery_id, c.attempts as claim, c.ordered,
           a.id as account_event_id, a.type as account_type, a.data as account_data, a.created_at as account_created_at,
           re.id as refund_event_id, re.type as refund_type, re.data as refund_data, re.created_at as refund_created_at,
           ep.id as endpoint_id, ep.url, ep.environment, ep.merchant_id, ep.secret_sealed, ep.previous_secret_sealed,
           coalesce(ep.previous_secret_expires_at > now(), false) as previous_valid,
           e.id as event_id, e.sequence, e.status, e.previous_status, e.reason, e.detail, e.created_at as event_created_at,
           snap.s->'session' as session, snap.s->'deposits' as deposits,
           case when ep.environment = 'sandbox' then m.sandbox_public_id else m.live_public_id end as public_merchant_id
      from claimed c
      join app.webhook_endpoints ep on ep.id = c.endpoint_id
      left join app.session_events e on e.id = c.event_id
      left join frozen f on f.id = e.id
      -- The stored snapshot; the one just taken; or, when another claim took it a moment after this
      -- statement's view of the table began, the session as it stands (what that claim just stored,
      -- unless the session moved on within that moment).
      left join lateral (select coalesce(e.snapshot, f.snapshot, app.session_event_snapshot(e.session_id)) as s where e.id is not null) snap on true
      left join app.account_events a on a.id = c.account_event_id
      left join app.refund_events re on re.id = c.refund_event_id
      join app.merchants m on m.id = ep.merchant_id`;
  return rows.map((r) =>
    r.account_event_id !== null ? decodeRow(ClaimedAccountDelivery, r) : r.refund_event_id !== null ? decodeRow(ClaimedRefundDelivery, r) : decodeRow(ClaimedSessionDelivery, r),
  );
}
