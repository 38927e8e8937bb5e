/**
 * A plan made while a table was tiny must not outlive the table's growth (shared/postgres-settings.ts):
 * the service's pools plan every statement for the table as it is; the pool that keeps plans
 * (KEPT_PLANS, for the grouped creates and key lookups only) keeps index plans only.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Sql, TransactionSql } from "postgres";
import { createTestDatabase } from "../../../testing/database.ts";
import { connect, type Database } from "./client.ts";
import { migrate } from "./migrate.ts";
import { createApiKey, createMerchant, lookupApiKeys } from "../credentials/store.ts";
import { hashSecret } from "../credentials/format.ts";
import { setSettlement } from "../sessions/settlements.ts";
import { createEndpoint } from "../webhooks/endpoints.ts";
import { insertSessions, type NewSession } from "../sessions/repository.ts";
import { newId } from "../../../shared/ids.ts";
import { claimKeys, storeResponses } from "../http/idempotency.ts";

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

test("the pool that keeps plans made them on a tiny table, and still looks a row up by its index after the table grew", async () => {
  const pool = connect(db.url, { max: 1, plans: "kept" });
  try {
    expect(await lookupAfterGrowth(pool, "probe_kept")).toEqual({ seq: 0, index: 1 });
  } finally {
    await pool.close();
  }
});

test("the grouped statements keep one plan each, which reads no table whole, even made on one-row tables", async () => {
  const setup = connect(db.url, { max: 1 });
  const pool = connect(db.url, { max: 1, plans: "kept" });
  try {
    await migrate(setup.sql);
    const merchant = await createMerchant(setup.db, "Plans");
    const { secret } = await createApiKey(setup.db, merchant.id, "sandbox", "plans");
    await setSettlement(setup.db, merchant.id, "sandbox", 31337, `0x${"b".repeat(40)}`);
    const key = Buffer.alloc(32, 7);
    await createEndpoint(setup.sql, key, { merchantId: merchant.id, environment: "sandbox", url: "http://127.0.0.1:9/hook", description: null, enabled: true });
    await setup.sql`analyze`;
    const session = (): NewSession => {
      const id = newId("paymentSession");
      return {
        id,
        merchantId: merchant.id,
        environment: "sandbox",
        input: { amountMinor: 1234n, currency: "USD", metadata: {}, referenceId: null, expiresInSeconds: 900 },
        tokenGraceSeconds: 3600,
        deposits: [{ chainId: 31337, address: `0x${id.slice(-20).padStart(40, "a").toLowerCase()}`, settlementAddress: `0x${"b".repeat(40)}`, tokenAddress: `0x${"c".repeat(40)}`, decimals: 6, requiredBaseUnits: 1_234_000n, confirmations: 1 }],
      };
    };
    const tables = ["merchants", "api_keys", "merchant_settlements", "webhook_endpoints", "idempotency_keys"];
    const ctx = { secret: Buffer.alloc(32, 9), merchantId: merchant.id, environment: "sandbox" as const, endpoint: "POST /payment-sessions" };
    const seqScans = async (q: Sql | TransactionSql) =>
      Object.fromEntries(
        await Promise.all(tables.map(async (t) => [t, ((await q.unsafe(`select pg_stat_get_xact_numscans('app.${t}'::regclass)::int as n`))[0]!.n as number)] as const)),
      );
    const scanned = await pool.sql.begin(async (tx) => {
      const before = await seqScans(tx);
      for (let i = 0; i < 8; i++) {
        const [found] = await lookupApiKeys(tx as unknown as Sql, [hashSecret(secret)]);
        expect(found?.merchant.id).toBe(merchant.id);
        expect(found?.settlements.get(31337)).toBe(`0x${"b".repeat(40)}`);
        const created = await insertSessions(tx, [session(), session()]);
        expect(created).toHaveLength(2);
        // A keyed batch's statements (http/idempotent-creates.ts): claim, then store the answers.
        const claims = [0, 1].map(() => ({ ctx, key: crypto.randomUUID(), hash: "0".repeat(64) }));
        expect(await claimKeys(tx, claims)).toEqual([true, true]);
        await storeResponses(tx, claims.map((claim) => ({ claim, response: { status: 201, body: { ok: true } } })));
      }
      const after = await seqScans(tx);
      return Object.fromEntries(tables.map((t) => [t, after[t]! - before[t]!]));
    });
    // Planned once and kept (Postgres's own choice re-planned the creates and lookups on every run), …
    const [replanned] = await pool.sql`select count(*)::int as n from pg_prepared_statements where custom_plans > 0`;
    expect(replanned!.n).toBe(0);
    const kept = await pool.sql`
      select case when statement like '%insert into app.payment_sessions%' then 'create' else 'lookup' end as statement,
             generic_plans::int as generic, custom_plans::int as custom
        from pg_prepared_statements
       where (statement like '%insert into app.payment_sessions%' or statement like '%from app.api_keys k join app.merchants m%')
         and statement not like '%pg_prepared_statements%'
       order by 1`;
    expect([...kept]).toEqual([
      { statement: "create", generic: 8, custom: 0 },
      { statement: "lookup", generic: 8, custom: 0 },
    ]);
    // … and the plan kept reads every table by its index, the webhook endpoints included (the creates wrote a delivery each).
    expect(scanned).toEqual({ merchants: 0, api_keys: 0, merchant_settlements: 0, webhook_endpoints: 0, idempotency_keys: 0 });
    const [deliveries] = await setup.sql`select count(*)::int as n from app.webhook_deliveries`;
    expect(deliveries!.n).toBe(16);
  } finally {
    await pool.close();
    await setup.close();
  }
});
