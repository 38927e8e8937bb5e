/**
 * The bounded-mode lookup against the API's own schema: right answers, and a cost that does not
 * grow with the sessions stored — even right after a burst of creates, before autoanalyze has
 * statistics for the new rows (the view's first form then hashed every session per lookup).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { createTestDatabase } from "../testing/database.ts";
import { migrate } from "../api/src/db/migrate.ts";
import { AUTHORIZATION_LOOKUP_SQL, postgresAuthorizationLookup, postgresWatchedLookup, WATCHED_LOOKUP_SQL } from "./watched-db.ts";
import { authorizationNonce } from "../shared/contracts/eip3009.ts";

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: postgres.Sql;
const SESSIONS = 50_000;
const deposit = (i: number) => `0xee${i.toString(16).padStart(38, "0")}`;
const SETTLEMENT = `0x${"5e".repeat(20)}`;

beforeAll(async () => {
  db = await createTestDatabase("wdb");
  sql = postgres(db.url, { max: 2, onnotice: () => {} });
  await migrate(sql);
  await sql`insert into app.merchants (id, name, sandbox_public_id, live_public_id) values ('acct_w', 'Watched', 'mch_test_w', 'mch_live_w')`;
  await sql`insert into app.merchant_settlements (merchant_id, environment, chain_id, address) values ('acct_w', 'sandbox', 31337, ${SETTLEMENT})`;
  // As a burst of creates leaves them: many rows, no ANALYZE since.
  await sql`
    insert into app.payment_sessions (id, merchant_id, environment, status, status_reason, amount_minor, currency, expires_at, token_hash, token_expires_at)
    select 'ps_w' || i, 'acct_w', 'sandbox', 'PENDING', 'created', 100, 'USD', now() + interval '1 hour', 'h' || i, now() + interval '2 hours'
      from generate_series(1, ${SESSIONS}) i`;
  await sql`
    insert into app.session_deposits (session_id, chain_id, address, settlement_address, token_address, decimals, required_base_units, confirmations)
    select 'ps_w' || i, 31337, '0xee' || lpad(to_hex(i), 38, '0'), ${SETTLEMENT}, ${"0x" + "22".repeat(20)}, 6, 1000000, 1
      from generate_series(1, ${SESSIONS}) i`;
}, 60_000);

afterAll(async () => {
  await sql?.end();
  await db?.drop();
}, 30_000);

test("answers which of the addresses are deposit or settlement addresses", async () => {
  const lookup = postgresWatchedLookup(db.url);
  try {
    const stranger = `0x${"ab".repeat(20)}`;
    const got = await lookup([deposit(7), stranger, SETTLEMENT, deposit(SESSIONS)]);
    expect([...got].sort()).toEqual([deposit(7), deposit(SESSIONS), SETTLEMENT].sort());
    expect((await lookup([stranger])).size).toBe(0);
  } finally {
    await lookup.end();
  }
});

test("a lookup reads a handful of index and heap pages, not the sessions (no statistics yet, generic plan)", async () => {
  const plan = await sql.begin(async (tx) => {
    // The indexer's prepared statement goes generic after a few executions: plan it that way.
    await tx`set local plan_cache_mode = force_generic_plan`;
    await tx.unsafe(`prepare watched_lookup(text[]) as ${WATCHED_LOOKUP_SQL.replace("$1::text[]", "$1")}`);
    const [row] = await tx.unsafe(`explain (analyze, buffers, format json) execute watched_lookup('{${deposit(12_345)},${`0x${"cd".repeat(20)}`}}')`);
    await tx.unsafe("deallocate watched_lookup");
    return (row as Record<string, unknown>)["QUERY PLAN"] as [{ Plan: Record<string, unknown> }];
  });
  const text = JSON.stringify(plan);
  expect(text).not.toContain("payment_sessions");
  const top = plan[0].Plan as { "Shared Hit Blocks": number; "Shared Read Blocks": number; "Actual Rows": number };
  expect(top["Actual Rows"]).toBe(1);
  // 50,000 sessions fill several hundred pages; an index lookup of two addresses touches ≈ 10.
  expect(top["Shared Hit Blocks"] + top["Shared Read Blocks"]).toBeLessThan(40);
});

test("answers whether a nonce is that of a recorded authorization", async () => {
  const lookup = postgresAuthorizationLookup(db.url);
  try {
    const nonce = `0x${"4e".repeat(32)}`;
    expect(await lookup(nonce)).toBe(false);
    await sql`
      insert into app.payment_authorizations (session_id, chain_id, token_address, from_address, to_address, value, valid_after, valid_before, nonce, signature)
      values ('ps_w1', 31337, ${"0x" + "22".repeat(20)}, ${"0x" + "aa".repeat(20)}, ${SETTLEMENT}, 100, 0, 9999999999, ${nonce}, '0x00')`;
    expect(await lookup(nonce.toUpperCase().replace("0X", "0x"))).toBe(true);
    expect(await lookup(`0x${"4f".repeat(32)}`)).toBe(false);
  } finally {
    await lookup.end();
  }
});

test("answers whether a nonce is one of our sessions' (app.session_nonces), no authorization recorded, by an index probe", async () => {
  const lookup = postgresAuthorizationLookup(db.url);
  try {
    const nonce = authorizationNonce("ps_w2");
    expect(await lookup(nonce)).toBe(false);
    // As the create statement writes it, for every session (here the 50,000 of this file and one more).
    await sql`insert into app.session_nonces (nonce, session_id) select 'n' || i, 'ps_w' || i from generate_series(3, ${SESSIONS}) i`;
    await sql`insert into app.session_nonces (nonce, session_id) values (${nonce}, 'ps_w2')`;
    expect(await lookup(nonce)).toBe(true);
    expect(await lookup(authorizationNonce("ps_w_none"))).toBe(false);
    const [{ "QUERY PLAN": plan }] = (await sql.unsafe(`explain (analyze, buffers, format json) ${AUTHORIZATION_LOOKUP_SQL}`, [nonce])) as unknown as [{ "QUERY PLAN": { Plan: { "Shared Hit Blocks": number; "Shared Read Blocks": number } }[] }];
    expect(plan[0]!.Plan["Shared Hit Blocks"] + plan[0]!.Plan["Shared Read Blocks"]).toBeLessThan(20);
  } finally {
    await lookup.end();
  }
});
