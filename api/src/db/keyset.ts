/**
 * Keyset pagination, the one way every list of the API pages: newest first by (created_at, id),
 * `starting_after` names the last row of the previous page, and one row more than asked says
 * whether another page exists. The cursor row's time is compared inside SQL (a subquery), not
 * through a JS Date, which would drop Postgres's microseconds and skip or repeat rows.
 */
import { and, desc, eq, lt, or, sql, type SQL } from "drizzle-orm";
import type { PgColumn, PgTable } from "drizzle-orm/pg-core";

type Keyed = PgTable & { createdAt: PgColumn; id: PgColumn };

/** Rows strictly after the cursor row in newest-first order. */
export function after(t: Keyed, cursorId: string): SQL {
  const cursorTime = sql`(select ${t.createdAt} from ${t} where ${t.id} = ${cursorId})`;
  return or(lt(t.createdAt, cursorTime), and(eq(t.createdAt, cursorTime), lt(t.id, cursorId)))!;
}

/** The order the cursor follows. */
export function newestFirst(t: Keyed): SQL[] {
  return [desc(t.createdAt), desc(t.id)];
}

/** Ask for `limit + 1` rows, then cut with this. */
export function onePage<R>(rows: R[], limit: number): { rows: R[]; hasMore: boolean } {
  return { rows: rows.slice(0, limit), hasMore: rows.length > limit };
}
