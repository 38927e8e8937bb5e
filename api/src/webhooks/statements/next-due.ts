/**
 * How long until the next delivery is due (ms; negative when overdue; null when none), leaving
 * out endpoints whose slots in this worker are full: the worker's timer, only a hint, since
 * the durable schedule is next_attempt_at in the table.
 */
import type { Sql } from "postgres";

export async function msUntilNextDue(sql: Sql, excludedEndpoints: readonly string[]): Promise<number | null> {
  const [next] = await sql`
    select (extract(epoch from (min(next_attempt_at) - now())) * 1000)::float8 as ms
      from app.webhook_deliveries
     where state in ('pending', 'sending') and not (endpoint_id = any(string_to_array(${excludedEndpoints.join(",")}, ',')))`;
  return next?.ms == null ? null : Number(next.ms);
}
