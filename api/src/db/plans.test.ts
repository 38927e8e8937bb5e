/**
 * A plan made while a table was tiny must not outlive the table's growth (shared/postgres-settings.ts):
 * the service's pools plan every statement for the table as it is; a pool that keeps plans
 * ("cached", for the grouped inserts only) would go on scanning the whole table.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Sql, TransactionSql } from "postgres";
import { createTestDatabase } from "../../../testing/database.ts";
import { connect, type Database } from "./client.ts";

let db: Awaited<ReturnType<typeof createTestDatabase>>;
beforeAll(async () => {
  db = await createTestDatabase("plans");
});
afterAll(async () => {
  await db?.drop();
});

/** Seq scans and primary-key scans one lookup by id did, on a table of 10 rows grown to 100,000 since the lookup was first run. */
async function lookupAfterGrowth(pool: Database, table: string): Promise<{ seq: number; index: number }> {
  const sql = pool.sql;
  await sql.unsafe(`create table ${table} (id text primary key, v int not null)`);
  await sql.unsafe(`insert into ${table} select 'k' || i, i from generate_series(1, 10) i`);
  await sql.unsafe(`analyze ${table}`);
  // A prepared statement run often enough for Postgres to consider keeping one plan for it.
  const lookup = (q: Sql | TransactionSql, id: string) => q`select v from ${q(table)} where id = ${id}`;
  for (let i = 1; i <= 10; i++) await lookup(sql, `k${i}`);
  await sql.unsafe(`insert into ${table} select 'k' || i, i from generate_series(11, 100000) i`);
  // The backend's scan counters not yet flushed to the statistics (they include earlier
  // statements of this connection): read before and after the one lookup.
  const counters = async (q: Sql | TransactionSql) => {
    const [r] = await q.unsafe(`select pg_stat_get_xact_numscans('${table}'::regclass)::int as seq, pg_stat_get_xact_numscans('${table}_pkey'::regclass)::int as index`);
    return { seq: r!.seq as number, index: r!.index as number };
  };
  return sql.begin(async (tx) => {
    const before = await counters(tx);
    await lookup(tx, "k77777");
    const after = await counters(tx);
    return { seq: after.seq - before.seq, index: after.index - before.index };
  }) as Promise<{ seq: number; index: number }>;
}

test("the service's pools look a row up by its index after the table grew, whatever plan they made while it was tiny", async () => {
  const pool = connect(db.url, { max: 1 });
  try {
    expect(await lookupAfterGrowth(pool, "probe_custom")).toEqual({ seq: 0, index: 1 });
  } finally {
    await pool.close();
  }
});

test("a pool that keeps plans (plans: cached) goes on scanning the whole table: why only the grouped inserts use one", async () => {
  const pool = connect(db.url, { max: 1, plans: "cached" });
  try {
    expect(await lookupAfterGrowth(pool, "probe_cached")).toEqual({ seq: 1, index: 0 });
  } finally {
    await pool.close();
  }
});
