/**
 * The runner's own statements (runner.ts), one function each: which sessions are due, the
 * back-off of one whose step failed, and the wake-ups a chain's reorg (or the periodic look for
 * one) calls for. What a step writes is the actor's (actor.ts); the wake-ups that read the
 * indexer are sessions/indexed.ts's.
 */
import type { Sql } from "postgres";
import { col, decodeRows, rowShape } from "../db/rows.ts";

const DueSession = rowShape("due sessions", { id: col.text });

/** The ids of up to `limit` sessions whose wake_at has come, the longest due first. */
export async function dueSessions(sql: Sql, limit: number): Promise<string[]> {
  const due = decodeRows(DueSession, await sql`select id from app.payment_sessions where wake_at <= now() order by wake_at limit ${limit}`);
  return due.map((r) => r.id);
}

/** A session whose step failed looks again in 5 seconds (the others go on meanwhile). */
export async function backOffSession(sql: Sql, id: string): Promise<void> {
  await sql`update app.payment_sessions set wake_at = now() + interval '5 seconds' where id = ${id}`;
}

/**
 * The FUNDED sessions funded on `chainId` look again for a reorg that took their funding away:
 * each at a random moment within `spreadMs` (0: at once), never later than it was due already.
 */
export async function wakeFundedOnChain(sql: Sql, chainId: number, spreadMs: number): Promise<void> {
  await sql`
    update app.payment_sessions set wake_at = least(coalesce(wake_at, 'infinity'), now() + random() * ${spreadMs} * interval '1 millisecond')
     where status = 'FUNDED' and funding_chain_id = ${chainId} and (wake_at is null or wake_at > now())`;
}

/**
 * After a reorg of `chainId`: every session past PENDING whose money moved on that chain in the
 * last hour (its ledger, not reverted) looks again at once, unless it is due already.
 */
export async function wakeMovedLatelyOnChain(sql: Sql, chainId: number): Promise<void> {
  await sql`
    update app.payment_sessions s set wake_at = now()
      from (select distinct session_id from app.session_funds
             where chain_id = ${chainId} and reverted_at is null and created_at >= now() - interval '1 hour') f
     where s.id = f.session_id and s.status <> 'PENDING' and (s.wake_at is null or s.wake_at > now())`;
}
