/**
 * Writes a batch of delivery outcomes: each delivery's new state, fenced by its claim number
 * (a delivery claimed again meanwhile, after its lease ran out, is left to that claim), with
 * the wait before its next attempt; an attempt handed back by a stopping worker (`undo`) does
 * not count. Returns the deliveries it finished or rescheduled, for the queue's next head.
 */
import type { TransactionSql } from "postgres";
import { col, decodeRows, rowShape } from "../../db/rows.ts";

/** The states an outcome writes. */
const OUTCOME_STATES = ["succeeded", "failed", "pending"] as const;

export interface OutcomeRow {
  id: number;
  claim: number;
  state: (typeof OUTCOME_STATES)[number];
  delayMs: number;
  atMs: number;
  statusCode: number | null;
  error: string | null;
  /** 1: the attempt was handed back and does not count. */
  undo: 0 | 1;
}

export interface RecordedDelivery {
  endpointId: string;
  sessionId: string | null;
  ordered: boolean;
  state: OutcomeRow["state"];
}

const RecordedOutcome = rowShape("record outcomes", {
  endpoint_id: col.text,
  session_id: col.nullable(col.text),
  ordered: col.bool,
  state: col.oneOf(OUTCOME_STATES),
});

export async function recordOutcomes(tx: TransactionSql, rows: readonly OutcomeRow[]): Promise<RecordedDelivery[]> {
  const recorded = await tx`
    with r as (
      select * from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as r(
        id bigint, claim int, state text, "delayMs" float8, "atMs" float8, "statusCode" int, error text, undo int)
    ), locked as (
      select d.id from app.webhook_deliveries d join r on r.id = d.id
       where d.state = 'sending' and d.attempts = r.claim
       order by d.id
       for update of d
    )
    update app.webhook_deliveries d
       set state = r.state,
           next_attempt_at = case when r.state = 'pending' then now() + r."delayMs" * interval '1 millisecond' else null end,
           attempts = d.attempts - r.undo,
           last_attempt_at = case when r.undo = 1 then d.last_attempt_at else to_timestamp(r."atMs" / 1000.0) end,
           last_status_code = case when r.undo = 1 then d.last_status_code else r."statusCode" end,
           last_error = case when r.undo = 1 then d.last_error else r.error end
      from r
     where d.id = r.id and d.id in (select id from locked) and d.state = 'sending' and d.attempts = r.claim
    returning d.endpoint_id, d.session_id, d.ordered, d.state`;
  return decodeRows(RecordedOutcome, recorded).map((f) => ({ endpointId: f.endpoint_id, sessionId: f.session_id, ordered: f.ordered, state: f.state }));
}
