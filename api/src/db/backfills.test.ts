/**
 * The code step of 0021_session_nonces (backfills.ts), on a real database migrated up to the
 * migration before it: the sessions that can still be paid by authorization get their nonce row,
 * those past their expiry none, and a second run adds nothing.
 */
import { afterAll, expect, test } from "bun:test";
import postgres from "postgres";
import { createTestDatabase } from "../../../testing/database.ts";
import { authorizationNonce } from "../../../shared/contracts/eip3009.ts";
import { migrate, readMigrations } from "./migrate.ts";

const dbs: { drop(): Promise<void> }[] = [];
afterAll(async () => {
  for (const d of dbs) await d.drop();
});

test("0021 gives every session not yet past its expiry its EIP-3009 nonce, and none to the others", async () => {
  const tdb = await createTestDatabase();
  dbs.push(tdb);
  const sql = postgres(tdb.url, { max: 1, onnotice: () => {} });
  const all = readMigrations();
  const at = all.findIndex((m) => m.tag === "0021_session_nonces");
  expect(at).toBeGreaterThan(0);
  await migrate(sql, all.slice(0, at));
  await sql`insert into app.merchants (id, name, sandbox_public_id, live_public_id) values ('mch_1', 'Shop', 'mch_test_1', 'mch_live_1')`;
  const session = (id: string, expires: string) => sql`
    insert into app.payment_sessions (id, merchant_id, environment, status, status_reason, amount_minor, currency, expires_at, token_hash, token_expires_at)
    values (${id}, 'mch_1', 'sandbox', 'PENDING', 'created', 100, 'USD', now() + ${expires}::interval, ${`hash_${id}`}, now() + interval '1 day')`;
  await session("ps_open", "20 minutes");
  await session("ps_open_too", "1 minute");
  await session("ps_past", "-1 minute");
  expect(await migrate(sql, all)).toEqual(all.slice(at).map((m) => m.tag));
  const rows = await sql`select nonce, session_id from app.session_nonces order by session_id`;
  expect(rows.map((r) => ({ ...r }))).toEqual([
    { nonce: authorizationNonce("ps_open"), session_id: "ps_open" },
    { nonce: authorizationNonce("ps_open_too"), session_id: "ps_open_too" },
  ]);
  expect(await migrate(sql, all)).toEqual([]);
  expect((await sql`select count(*)::int as n from app.session_nonces`)[0]!.n).toBe(2);
  await sql.end();
});
