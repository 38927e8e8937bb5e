/**
 * What the session side reads from the indexer's tables, against a real Postgres with the API's
 * migrations and tables shaped like Ponder's (schema `indexer`): nothing when no indexer ever
 * ran, "not_ready" while one (re)builds, transfers with confirmations when ready — and the
 * remembered "tables exist" never answers for a schema dropped and rebuilt since.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect, type Database } from "../db/client.ts";
import { migrate } from "../db/migrate.ts";
import { createTestDatabase } from "../../../testing/database.ts";
import { readIndexedAlone } from "./indexed.ts";
import { stepSession } from "./actor.ts";

let db: Database;
let drop: () => Promise<void>;
const SESSION = "ps_indexedtest0000000000001";
const DEPOSIT = "0x00000000000000000000000000000000000000d1";

beforeAll(async () => {
  const tdb = await createTestDatabase("indexed");
  drop = tdb.drop;
  db = connect(tdb.url, { max: 4 });
  await migrate(db.sql);
  await db.sql`insert into app.merchants (id, name, sandbox_public_id, live_public_id) values ('acct_indexed', 'Indexed', 'mch_test_indexed', 'mch_live_indexed')`;
  await db.sql`
    insert into app.payment_sessions (id, merchant_id, environment, status, status_reason, amount_minor, currency, expires_at, token_hash, token_expires_at)
    values (${SESSION}, 'acct_indexed', 'sandbox', 'PENDING', 'created', 100, 'USD', now() + interval '1 hour', 'hash_indexed', now() + interval '2 hours')`;
  await db.sql`
    insert into app.session_deposits (session_id, chain_id, address, settlement_address, token_address, decimals, required_base_units, confirmations)
    values (${SESSION}, 31337, ${DEPOSIT}, ${"0x" + "11".repeat(20)}, ${"0x" + "22".repeat(20)}, 6, 1000000, 1)`;
});

afterAll(async () => {
  await db.close();
  await drop();
});

/** The indexer's tables as Ponder makes them, with `is_ready` as given. */
async function buildIndexerSchema(ready: 0 | 1) {
  await db.sql.unsafe(`
    create schema indexer;
    create table indexer._ponder_meta (key text primary key, value jsonb not null);
    create table indexer.transfers (chain_id integer not null, block_number numeric(78,0) not null, block_hash text not null, block_timestamp numeric(78,0) not null,
      tx_hash text not null, log_index integer not null, token text not null, "from" text not null, "to" text not null, value numeric(78,0) not null, primary key (chain_id, tx_hash, log_index));
    create table indexer.authorized_transfers (chain_id integer not null, block_number numeric(78,0) not null, block_hash text not null, block_timestamp numeric(78,0) not null,
      tx_hash text not null, log_index integer not null, nonce text not null, token text not null, "from" text not null, "to" text not null, value numeric(78,0) not null, primary key (chain_id, tx_hash, log_index));
    create table indexer.chain_heads (chain_id integer primary key, block_number numeric(78,0) not null, block_hash text not null, block_timestamp numeric(78,0) not null);`);
  await db.sql`insert into indexer._ponder_meta (key, value) values ('app', ${JSON.stringify({ is_ready: ready, is_locked: 1 })}::jsonb)`;
}

test("no indexer ever ran: nothing indexed; launched but its tables missing: not ready", async () => {
  expect(await readIndexedAlone(db.sql, SESSION)).toEqual({ transfers: [], outflows: [], authorized: [], strays: [] });
  await db.sql`create schema indexer_meta`;
  await db.sql`create table indexer_meta.settings (key text primary key, value text not null)`;
  expect(await readIndexedAlone(db.sql, SESSION)).toBe("not_ready");
});

test("tables being built (is_ready 0): not ready; once ready, the payment with its confirmations", async () => {
  await buildIndexerSchema(0);
  await db.sql`insert into indexer.transfers values (31337, 10, '0xb10', ${Math.floor(Date.now() / 1000)}, '0xaa01', 0, ${"0x" + "22".repeat(20)}, ${"0x" + "33".repeat(20)}, ${DEPOSIT}, 1000000)`;
  // Another stablecoin of the network into the same deposit: not this session's token, not counted here.
  await db.sql`insert into indexer.transfers values (31337, 10, '0xb10', ${Math.floor(Date.now() / 1000)}, '0xaa02', 1, ${"0x" + "44".repeat(20)}, ${"0x" + "33".repeat(20)}, ${DEPOSIT}, 7000000)`;
  await db.sql`insert into indexer.chain_heads values (31337, 12, '0xb12', ${Math.floor(Date.now() / 1000)})`;
  expect(await readIndexedAlone(db.sql, SESSION)).toBe("not_ready");
  await db.sql`update indexer._ponder_meta set value = jsonb_set(value, '{is_ready}', '1')`;
  const read = await readIndexedAlone(db.sql, SESSION);
  expect(read).not.toBe("not_ready");
  expect(read === "not_ready" ? null : read.transfers.map((t) => ({ tx: t.txHash, value: t.value, confirmations: t.confirmations }))).toEqual([
    { tx: "0xaa01", value: 1_000_000n, confirmations: 3 },
  ]);
});

test("the schema dropped and rebuilt after it was seen: not ready (never the remembered 'ready'), and a step waits instead of failing", async () => {
  expect(await readIndexedAlone(db.sql, SESSION)).not.toBe("not_ready"); // tables seen and remembered
  await db.sql`drop schema indexer cascade`;
  expect(await readIndexedAlone(db.sql, SESSION)).toBe("not_ready"); // launched, tables gone
  await buildIndexerSchema(0); // rebuilt, empty, not ready: the payment row is not there yet
  expect(await readIndexedAlone(db.sql, SESSION)).toBe("not_ready");
  await db.sql`drop schema indexer cascade`;
  await buildIndexerSchema(1);
  expect(await readIndexedAlone(db.sql, SESSION)).toEqual({ transfers: [], outflows: [], authorized: [], strays: [] }); // seen again
  await db.sql`drop schema indexer cascade`;
  const r = await stepSession(db.sql, SESSION, {}, { skipLocked: true });
  expect(r).toEqual({ found: true, status: "PENDING" });
  const [s] = await db.sql`select status, wake_at > now() as later from app.payment_sessions where id = ${SESSION}`;
  expect(s).toEqual({ status: "PENDING", later: true });
});
