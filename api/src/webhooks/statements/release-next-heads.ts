/**
 * Each finished head of a per-(endpoint, session) queue lets the queue's next event go: the
 * oldest `waiting` delivery becomes `pending`, due now, unless another of that queue is
 * already pending or sending. Returns how many were released.
 */
import type { TransactionSql } from "postgres";

export async function releaseNextHeads(tx: TransactionSql, finished: readonly { endpointId: string; sessionId: string }[]): Promise<number> {
  if (finished.length === 0) return 0;
  const heads = finished.map((f) => ({ e: f.endpointId, s: f.sessionId }));
  const released = await tx`
    with f as (select * from jsonb_to_recordset(${JSON.stringify(heads)}::jsonb) as f(e text, s text)),
    nxt as (
      select distinct on (q.endpoint_id, q.session_id) q.id
        from app.webhook_deliveries q join f on q.session_id = f.s and q.endpoint_id = f.e
       where q.ordered and q.state = 'waiting'
       order by q.endpoint_id, q.session_id, q.sequence
    )
    update app.webhook_deliveries w set state = 'pending', next_attempt_at = now()
     where w.id in (select id from nxt) and w.state = 'waiting'
       and not exists (select 1 from app.webhook_deliveries o
                        where o.session_id = w.session_id and o.endpoint_id = w.endpoint_id and o.ordered
                          and o.state in ('pending', 'sending'))
    returning 1`;
  return released.length;
}
