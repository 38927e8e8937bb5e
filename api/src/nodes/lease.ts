/**
 * Leases (table app.leases): work only one node may do at a time, held by renewing it before it
 * expires. Times are the database's (`now()`), so the nodes' clocks never have to agree; the
 * holder only measures, on its own monotonic clock, how long it has gone without a renewal
 * (indexer-seat.ts stops the work well before the lease could pass to another node).
 */
import type { Sql } from "postgres";
import { col, decodeFirst, rowShape } from "../db/rows.ts";

/** The node whose index (its Ponder's schema) the service reads: the views schema `indexer` follows it. */
export const INDEXER_LEASE = "indexer";

const Acquired = rowShape("lease acquired", { holder: col.text, previous: col.nullable(col.text), previous_expired_ms: col.nullable(col.float) });

/**
 * Takes the lease if nobody holds it or its holder let it expire (or renews it if we hold it);
 * `force`: whoever holds it (the caller knows the holder is gone: indexer-seat.ts holds the
 * seat's lock). Says who held it before when it changed hands, and how long ago that one's lease
 * had expired (negative: it had not).
 */
export async function acquireLease(
  sql: Sql,
  name: string,
  holder: string,
  ttlMs: number,
  force = false,
): Promise<{ acquired: false } | { acquired: true; previous: string | null; previousExpiredMs: number | null }> {
  const rows = await sql`
    with prev as (select holder, expires_at from app.leases where name = ${name})
    insert into app.leases as l (name, holder, expires_at)
    values (${name}, ${holder}, now() + ${ttlMs} * interval '1 millisecond')
    on conflict (name) do update
      set holder = excluded.holder, expires_at = excluded.expires_at,
          acquired_at = case when l.holder = excluded.holder then l.acquired_at else now() end
      where ${force} or l.holder = excluded.holder or l.expires_at < now()
    returning l.holder,
      (select holder from prev where holder <> ${holder}) as previous,
      (select (extract(epoch from now() - expires_at) * 1000)::float8 from prev where holder <> ${holder}) as previous_expired_ms`;
  const row = decodeFirst(Acquired, rows);
  if (!row) return { acquired: false };
  return { acquired: true, previous: row.previous, previousExpiredMs: row.previous_expired_ms };
}

/**
 * Extends our lease; false when it is no longer ours (it expired and another node took it).
 * `lockKey`: only while this very session holds that advisory lock — postgres.js reconnects
 * silently, and a renewal on a new connection (after a Postgres restart, a session ended under
 * us) would keep a lease whose lock is gone, free for another node to take.
 */
export async function renewLease(sql: Sql, name: string, holder: string, ttlMs: number, lockKey?: bigint): Promise<boolean> {
  const key = lockKey?.toString() ?? null;
  const rows = await sql`
    update app.leases set expires_at = now() + ${ttlMs} * interval '1 millisecond'
    where name = ${name} and holder = ${holder}
      and (${key}::bigint is null or exists (
        select 1 from pg_locks where locktype = 'advisory' and granted and pid = pg_backend_pid()
          and classid = (${key}::bigint >> 32)::oid and objid = (${key}::bigint & 4294967295)::oid and objsubid = 1))
    returning 1`;
  return rows.length > 0;
}

/** Gives the lease up at once (a clean stop): the next node need not wait for it to expire. */
export async function releaseLease(sql: Sql, name: string, holder: string): Promise<void> {
  await sql`delete from app.leases where name = ${name} and holder = ${holder}`;
}

const LeaseRow = rowShape("indexer lease", {
  holder: col.text,
  acquired_at: col.time,
  expires_at: col.time,
  valid: col.bool,
  host: col.nullable(col.text),
  pid: col.nullable(col.int),
});

export interface IndexerLease {
  /** The node holding it (app.nodes id). */
  node: string;
  host: string | null;
  pid: number | null;
  since: Date;
  expiresAt: Date;
  /** false: its holder let it expire (died?) and no node has taken it yet. */
  valid: boolean;
}

/** Whose index the service reads, or null when no node ever has (or the last one stopped cleanly). */
export async function indexerLease(sql: Sql): Promise<IndexerLease | null> {
  const rows = await sql`
    select l.holder, l.acquired_at, l.expires_at, l.expires_at > now() as valid, n.host, n.pid
    from app.leases l left join app.nodes n on n.id = l.holder
    where l.name = ${INDEXER_LEASE}`;
  const r = decodeFirst(LeaseRow, rows);
  return r ? { node: r.holder, host: r.host, pid: r.pid, since: r.acquired_at, expiresAt: r.expires_at, valid: r.valid } : null;
}
