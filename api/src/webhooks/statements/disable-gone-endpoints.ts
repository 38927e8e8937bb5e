/**
 * Endpoints that answered 410 Gone asked to be disabled: they are, and every delivery still
 * queued for them is canceled (re-enabling an endpoint starts from new events only).
 */
import type { TransactionSql } from "postgres";

export async function disableGoneEndpoints(tx: TransactionSql, endpointIds: readonly string[]): Promise<void> {
  if (endpointIds.length === 0) return;
  await tx`
    update app.webhook_endpoints set enabled = false, disabled_reason = 'gone', updated_at = now()
     where id in ${tx(endpointIds)} and enabled`;
  await tx`
    update app.webhook_deliveries set state = 'canceled', next_attempt_at = null
     where id in (select id from app.webhook_deliveries
                   where endpoint_id in ${tx(endpointIds)} and state in ('waiting', 'pending', 'sending')
                   order by id for update)`;
}
