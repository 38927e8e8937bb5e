/**
 * The payer's sandbox helpers' limit (payer-sandbox.ts): a token bucket per payment session kept
 * in app.rate_buckets, so it holds exactly across every API process and restart — a page
 * hitting three processes behind a load balancer gets the same three uses as hitting one. A use
 * costs two short statements (these requests then send a transaction: nothing beside that);
 * the per-key request limit, which every request pays, stays in memory (rate-limit.ts).
 */
import type { Sql } from "postgres";
import { col, decodeFirst, rowShape } from "../db/rows.ts";

const Left = rowShape("rate bucket", { tokens: col.numeric });

/**
 * Takes one token of bucket `name` (`perSecond` a second, up to `burst`); when none is left, says
 * how many whole seconds until one is. The bucket's row is made full if missing, then taken from
 * by one UPDATE: two processes taking the last token at once queue on the row, and the second
 * sees what the first left — one token, one request.
 */
export async function takeSharedToken(
  sql: Sql,
  name: string,
  perSecond: number,
  burst: number,
): Promise<{ ok: true } | { ok: false; retryAfterSeconds: number }> {
  // Rates go as text and are computed in numeric: no float rounding lets a token through twice.
  const rate = String(perSecond);
  const cap = String(burst);
  await sql`insert into app.rate_buckets (name, tokens, at) values (${name}, ${cap}::numeric, now()) on conflict (name) do nothing`;
  const refilled = sql`least(${cap}::numeric, tokens + extract(epoch from clock_timestamp() - at)::numeric * ${rate}::numeric)`;
  const taken = await sql`
    update app.rate_buckets set tokens = ${refilled} - 1, at = clock_timestamp()
    where name = ${name} and ${refilled} >= 1
    returning tokens::text as tokens`;
  if (taken.length > 0) return { ok: true };
  const left = decodeFirst(Left, await sql`select (${refilled})::text as tokens from app.rate_buckets where name = ${name}`);
  return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - Number(left?.tokens ?? "0")) / perSecond)) };
}

/** Buckets untouched for a day are full again: deleting them forgets nothing (housekeeping). */
export async function purgeFullBuckets(sql: Sql): Promise<void> {
  await sql`delete from app.rate_buckets where at < now() - interval '1 day'`;
}
