/**
 * A plan made while a table was tiny must not outlive the table's growth (shared/postgres-settings.ts):
 * the service's pools plan every statement for the table as it is, but for the grouped statements'
 * pool (plans: "kept"), whose statements are written to probe an index per row of the batch;
 * this file counts what they read once the tables grew. Postgres's default would go on scanning.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres, { type Sql, type TransactionSql } from "postgres";
import { createTestDatabase } from "../../../testing/database.ts";
import { connect } from "./client.ts";
import { migrate } from "./migrate.ts";
import { createApiKey, createMerchant, lookupApiKeys } from "../credentials/store.ts";
import { hashSecret } from "../credentials/format.ts";
import { setSettlement } from "../sessions/settlements.ts";
import { createEndpoint } from "../webhooks/endpoints.ts";
import { insertSessions, newSessionToken, type NewSession } from "../sessions/create/statement.ts";
import { newId } from "../../../shared/ids.ts";
import { createClaim } from "../credentials/idempotency-keys.ts";

let db: Awaited<ReturnType<typeof createTestDatabase>>;
beforeAll(async () => {
  db = await createTestDatabase("plans");
});
afterAll(async () => {
  await db?.drop();
});

/** Seq scans and primary-key scans one lookup by id did, on a table of 10 rows grown to 100,000 since the lookup was first run. */
async function lookupAfterGrowth(sql: Sql, table: string): Promise<{ seq: number; index: number }> {
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
    expect(await lookupAfterGrowth(pool.sql, "probe_custom")).toEqual({ seq: 0, index: 1 });
  } finally {
    await pool.close();
  }
});

test("the pool that keeps plans (plans: kept) made its plan on a tiny table, and still looks a row up by its index after the table grew", async () => {
  const pool = connect(db.url, { max: 1, plans: "kept" });
  try {
    expect(await lookupAfterGrowth(pool.sql, "probe_kept")).toEqual({ seq: 0, index: 1 });
  } finally {
    await pool.close();
  }
});

test("Postgres's default keeps a plan made on a tiny table and goes on scanning the whole table: why no pool of the service uses it", async () => {
  const sql = postgres(db.url, { max: 1, onnotice: () => {} });
  try {
    expect(await lookupAfterGrowth(sql, "probe_default")).toEqual({ seq: 1, index: 0 });
  } finally {
    await sql.end();
  }
});

test("the grouped statements keep one plan each, made on one-row tables, which reads an index entry or two per row after the tables grew without ANALYZE", async () => {
  const setup = connect(db.url, { max: 1 });
  const pool = connect(db.url, { max: 1, plans: "kept" });
  try {
    await migrate(setup.sql);
    const tables = ["merchants", "api_keys", "merchant_settlements", "webhook_endpoints", "idempotency_keys"];
    // Statistics left as they were on the tiny tables for the test's length, as in the minute
    // after a fresh install's first burst of sign-ups, before autovacuum analyzes.
    for (const t of tables) await setup.sql.unsafe(`alter table app.${t} set (autovacuum_enabled = false)`);
    const merchant = await createMerchant(setup.db, "Plans");
    const { secret } = await createApiKey(setup.db, merchant.id, "sandbox", "plans");
    const settlement = `0x${"b".repeat(40)}`;
    await setSettlement(setup.db, merchant.id, "sandbox", 31337, settlement);
    await createEndpoint(setup.sql, Buffer.alloc(32, 7), { merchantId: merchant.id, environment: "sandbox", url: "http://127.0.0.1:9/hook", description: null, enabled: true });
    await setup.sql`analyze`;
    const session = (): NewSession => {
      const id = newId("paymentSession");
      return {
        id,
        merchantId: merchant.id,
        environment: "sandbox",
        input: { amountMinor: 1234n, currency: "USD", metadata: {}, referenceId: null, expiresInSeconds: 900 },
        tokenGraceSeconds: 3600,
        deposits: [{ chainId: 31337, address: `0x${id.slice(-20).padStart(40, "a").toLowerCase()}`, settlementAddress: settlement, tokenAddress: `0x${"c".repeat(40)}`, decimals: 6, requiredBaseUnits: 1_234_000n, confirmations: 1, tokens: [{ address: `0x${"c".repeat(40)}`, symbol: "TUSD", decimals: 6 }] }],
        token: newSessionToken("sandbox"),
      };
    };
    const ctx = { secret: Buffer.alloc(32, 9), merchantId: merchant.id, environment: "sandbox" as const, endpoint: "POST /payment-sessions" };
    // What creates send: a key lookup, then the create statement — for creates carrying their
    // key's check, with an Idempotency-Key or not.
    const run = async (tx: TransactionSql) => {
      const [found, unknown] = await lookupApiKeys(tx as unknown as Sql, [hashSecret(secret)]);
      expect(found?.merchant.id).toBe(merchant.id);
      expect(found?.settlements.get(31337)).toBe(settlement);
      expect(unknown).toBeUndefined();
      // One probe of the key, one of the settlements per distinct check; one of the keys' records per Idempotency-Key.
      const plain = [session(), session()].map((s) => ({ ...s, keyCheck: found!.check }));
      const keyed = [session(), session()].map((s) => ({
        ...s,
        keyCheck: found!.check,
        claim: createClaim({ ctx, key: crypto.randomUUID(), hash: "0".repeat(64) }, { sessionId: s.id, token: s.token.clear }),
      }));
      const written = await insertSessions(tx, [...plain, ...keyed]);
      expect(written.every((c) => c.written)).toBe(true);
    };
    const answersStored = async () => (await setup.sql`select count(*)::int as n from app.idempotency_keys where response_status = 201`)[0]!.n as number;
    // Planned while every table holds a row or two.
    for (let i = 0; i < 8; i++) {
      await pool.sql.begin((tx) => run(tx));
      expect(await answersStored()).toBe(2 * (i + 1));
    }
    // 20,000 more merchants, each with a key, a settlement address and a webhook endpoint.
    await setup.sql`insert into app.merchants (id, name, sandbox_public_id, live_public_id) select 'mer_g' || i, 'm', 'pk_test_g' || i, 'pk_live_g' || i from generate_series(1, 20000) i`;
    await setup.sql`insert into app.api_keys (id, merchant_id, environment, name, prefix, key_hash) select 'key_g' || i, 'mer_g' || i, 'sandbox', 'k', 'sk_test_g', md5(i::text) || md5(i::text) from generate_series(1, 20000) i`;
    await setup.sql`insert into app.merchant_settlements (merchant_id, environment, chain_id, address) select 'mer_g' || i, 'sandbox', 31337, '0x' || lpad(to_hex(i), 40, '0') from generate_series(1, 20000) i`;
    await setup.sql`insert into app.webhook_endpoints (id, merchant_id, environment, url, secret_sealed) select 'we_g' || i, 'mer_g' || i, 'sandbox', 'http://127.0.0.1:9/g', 'x' from generate_series(1, 20000) i`;
    // And 20,000 more idempotency keys of this merchant, the primary key's worst case (one prefix).
    await setup.sql`insert into app.idempotency_keys (merchant_id, environment, key_hash, endpoint, request_hash, response_status, response_sealed) select ${merchant.id}, 'sandbox', md5(i::text) || md5(i::text), 'POST /payment-sessions', 'x', 200, 'x' from generate_series(1, 20000) i`;
    // What one more run reads, from the backend's counters of its own transaction: sequential
    // scans of the four tables, and index entries returned by each of their indexes.
    const counters = async (q: TransactionSql) => {
      const rows = await q`
        select c.relname as name, pg_stat_get_xact_tuples_returned(c.oid)::int as entries, pg_stat_get_xact_numscans(c.oid)::int as scans, c.relkind as kind
          from pg_class c join pg_namespace n on n.oid = c.relnamespace
         where n.nspname = 'app' and (c.relname = any(${tables}) or c.oid in (select indexrelid from pg_index where indrelid in (select oid from pg_class where relname = any(${tables}) and relnamespace = n.oid)))`;
      return new Map(rows.map((r) => [r.name as string, r]));
    };
    const read = await pool.sql.begin(async (tx) => {
      const before = await counters(tx);
      await run(tx);
      const after = await counters(tx);
      const seqScans = tables.reduce((n, t) => n + after.get(t)!.scans - before.get(t)!.scans, 0);
      const entries = Object.fromEntries(
        [...after].filter(([, r]) => r.kind === "i").map(([name, r]) => [name, r.entries - before.get(name)!.entries]).filter(([, n]) => n !== 0),
      );
      return { seqScans, entries };
    });
    expect(read.seqScans).toBe(0);
    // Two hashes looked up (one unknown), four sessions created, two of them claiming a key:
    // each row probes an index once (the merchant once more per session: its foreign-key check;
    // each endpoint once more: the delivery's foreign-key check; the creates' one distinct key
    // check, once more the key and its settlements; the keys' claims and the probes for their v1
    // forms find nothing).
    expect(read.entries).toEqual({
      api_keys_key_hash_unique: 2,
      merchants_pkey: 5,
      merchant_settlements_merchant_id_environment_chain_id_pk: 2,
      webhook_endpoints_merchant_idx: 4,
      webhook_endpoints_pkey: 4,
    });
    // Planned once and kept (Postgres's default re-planned the creates and lookups on every run).
    const prepared = await pool.sql`
      select statement, generic_plans::int as generic, custom_plans::int as custom from pg_prepared_statements
       where statement like any(array['%app.payment_sessions%', '%app.api_keys%', '%app.idempotency_keys%']) and statement not like '%pg_prepared_statements%'`;
    const kept = prepared.map((r) => ({ statement: (r.statement as string).trim().replace(/\s+/g, " ").slice(0, 30), generic: r.generic, custom: r.custom })).sort((a, b) => a.statement.localeCompare(b.statement));
    expect(kept).toEqual([
      { statement: "select k.id, k.merchant_id, k.", generic: 9, custom: 0 },
      { statement: "with c as ( -- 1. Each distinc", generic: 9, custom: 0 },
    ]);
    expect(await answersStored()).toBe(18);
    const [deliveries] = await setup.sql`select count(*)::int as n from app.webhook_deliveries`;
    expect(deliveries!.n).toBe(36);
  } finally {
    await pool.close();
    await setup.close();
  }
}, 30_000); // 20,000 rows in each of five tables: ≈ 5 s on a busy 2-core machine
