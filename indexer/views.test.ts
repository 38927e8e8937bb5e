/**
 * The views schema against a real Postgres, with two stand-in instance schemas (the tables Ponder
 * makes, rows of their own): a switch shows the other instance's rows through the same views (the
 * same relations: CREATE OR REPLACE), the head trigger moves with it, a rebuild of the followed
 * instance (its schema dropped) leaves no views, and the service reads the schema this module names.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { createTestDatabase } from "../testing/database.ts";
import { INDEXER_SCHEMA } from "../api/src/sessions/indexed.ts";
import { followSchema, VIEWS_SCHEMA, viewsFollow } from "./views.ts";

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: postgres.Sql;

async function instance(schema: string, txHash: string): Promise<void> {
  await sql.unsafe(`create schema "${schema}"`);
  await sql.unsafe(`create table "${schema}"._ponder_meta (key text primary key, value jsonb not null)`);
  await sql.unsafe(`create table "${schema}"._ponder_checkpoint (chain_name text primary key)`);
  await sql.unsafe(`create table "${schema}".transfers (tx_hash text)`);
  await sql.unsafe(`create table "${schema}".chain_heads (chain_id int, block_number bigint, block_timestamp bigint)`);
  await sql.unsafe(`insert into "${schema}".transfers values ('${txHash}')`);
  await sql.unsafe(`insert into "${schema}"._ponder_meta values ('app', '{"table_names": ["transfers", "chain_heads"], "is_ready": 1}')`);
}

const seen = async () => (await sql`select tx_hash from indexer.transfers`).map((r) => String(r.tx_hash));
const viewOid = async () => Number((await sql`select 'indexer.transfers'::regclass::oid::int as oid`)[0]!.oid);
const triggersOn = async () =>
  (await sql`select n.nspname from pg_trigger g join pg_class c on c.oid = g.tgrelid join pg_namespace n on n.oid = c.relnamespace where g.tgname = 'paysession_notify_indexed_head'`).map((r) => String(r.nspname));

beforeAll(async () => {
  db = await createTestDatabase("views");
  sql = postgres(db.url, { max: 2, onnotice: () => {} });
  await instance("indexer_1", "0xaa");
  await instance("indexer_2", "0xbb");
});
afterAll(async () => {
  await sql.end();
  await db.drop();
});

test("the service reads the schema the views are made in", () => {
  expect(INDEXER_SCHEMA).toBe(VIEWS_SCHEMA);
});

test("the views follow one instance, then the other: its rows through the same relations, the head trigger with them", async () => {
  expect(await viewsFollow(sql)).toBeNull();
  expect(await sql.begin((tx) => followSchema(tx, "indexer_1"))).toBe(true);
  expect(await viewsFollow(sql)).toBe("indexer_1");
  expect(await seen()).toEqual(["0xaa"]);
  expect(await triggersOn()).toEqual(["indexer_1"]);
  const oid = await viewOid();

  expect(await sql.begin((tx) => followSchema(tx, "indexer_2"))).toBe(true);
  expect(await viewsFollow(sql)).toBe("indexer_2");
  expect(await seen()).toEqual(["0xbb"]);
  expect(await viewOid()).toBe(oid);
  expect(await triggersOn()).toEqual(["indexer_2"]);
  // Ponder's readiness through the views, as sessions/indexed.ts reads it.
  expect((await sql`select value->>'is_ready' as r from indexer._ponder_meta`)[0]!.r).toBe("1");
});

test("an instance without its tables yet is not followed; the followed one dropped for a rebuild takes its views along", async () => {
  await sql`create schema indexer_3`;
  expect(await sql.begin((tx) => followSchema(tx, "indexer_3"))).toBe(false);
  expect(await viewsFollow(sql)).toBe("indexer_2");
  await sql`drop schema indexer_2 cascade`;
  expect(await viewsFollow(sql)).toBeNull();
  expect(await sql.begin((tx) => followSchema(tx, "indexer_1"))).toBe(true);
  expect(await seen()).toEqual(["0xaa"]);
});
