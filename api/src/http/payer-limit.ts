/**
 * The payer's sandbox helpers' limit (payer-sandbox.ts): a token bucket per payment session kept
 * in app.rate_buckets, so it holds exactly across every API process and restart — a page
 * hitting three processes behind a load balancer gets the same three uses as hitting one. Each
 * use is one statement (these requests then send a transaction, so it is nothing beside them);
 * the per-key request limit, which every request pays, stays in memory (rate-limit.ts).
 */
import type { Sql } from "postgres";
import { col, decodeFirst, rowShape } from "../db/rows.ts";

const Verdict = rowShape("rate bucket take", { ok: col.bool, tokens: col.numeric });

/**
 * Takes one token of bucket `name` (`perSecond` a second, up to `burst`); when none is left, says
 * how many whole seconds until one is. The row is locked while it is read and written, so two
 * processes taking the last token at once get one each of what there is, never both.
 */
export async function takeSharedToken(
  sql: Sql,
  name: string,
  perSecond: number,
  burst: number,
): Promise<{ ok: true } | { ok: false; retryAfterSeconds: number }> {
  // Rates are passed as text and computed in numeric: no float rounding lets a token through twice.
  const rate = String(perSecond);
  const cap = String(burst);
  const rows = await sql`
    with now_ as (select now() as t),
    cur as (
      select least(${cap}::numeric, b.tokens + extract(epoch from (select t from now_) - b.at)::numeric * ${rate}::numeric) as tokens
      from app.rate_buckets b where b.name = ${name} for update
    ),
    taken as (
      insert into app.rate_buckets as b (name, tokens, at)
      values (${name}, ${cap}::numeric - 1, (select t from now_))
      on conflict (name) do update
        set tokens = (select tokens from cur) - 1, at = (select t from now_)
        where (select tokens from cur) >= 1
      returning tokens
    )
    select exists (select 1 from taken) as ok, coalesce((select tokens from cur), ${cap}::numeric)::text as tokens`;
  const v = decodeFirst(Verdict, rows);
  if (v?.ok) return { ok: true };
  const left = Number(v?.tokens ?? "0");
  return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - left) / perSecond)) };
}

/** Buckets untouched for a day are full again: deleting them forgets nothing (housekeeping). */
export async function purgeFullBuckets(sql: Sql): Promise<void> {
  await sql`delete from app.rate_buckets where at < now() - interval '1 day'`;
}
