/**
 * How long until the next delivery is due (ms; negative when overdue; null when none), leaving
 * out endpoints whose slots in this worker are full: the worker's timer, only a hint, since
 * the durable schedule is next_attempt_at in the table.
 */
import type { Sql } from "postgres";
import { col, decodeFirst, rowShape } from "../../db/rows.ts";

/** float8: a number; null when nothing is due. */
const NextDue = rowShape("next due delivery", { ms: col.nullable(col.float) });

export async function msUntilNextDue(sql: Sql, excludedEndpoints: readonly string[]): Promise<number | null> {
  const next = decodeFirst(
    NextDue,
    await sql`
      select (extract(epoch from (min(next_attempt_at) - now())) * 1000)::float8 as ms
        from app.webhook_deliveries
       where state in ('pending', 'sending') and not (endpoint_id = any(string_to_array(${excludedEndpoints.join(",")}, ',')))`,
  );
  return next?.ms ?? null;
}
