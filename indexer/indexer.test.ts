/**
 * The real thing: two anvil chains, the test Postgres, and Ponder as a child process
 * (full mode). Covers indexing, reorgs, the analysts' endpoints and restarts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { createTestDatabase } from "../testing/database.ts";
import type { IndexerProcess } from "./process.ts";
import { eventually } from "../testing/eventually.ts";
import { startTestChain, startTestIndexer, type TestChain } from "../testing/indexer-stack.ts";

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: postgres.Sql;
let local: TestChain;
let local2: TestChain;
let indexer: IndexerProcess;
const RELAYER_KEY = `0x${"5e".repeat(32)}`;
const ENCRYPTION_KEY = Buffer.alloc(32, 7).toString("base64");

beforeAll(async () => {
  db = await createTestDatabase("idx");
  sql = postgres(db.url, { max: 2, onnotice: () => {} });
  [local, local2] = await Promise.all([startTestChain("local"), startTestChain("local2")]);
  // The service's secrets are in the environment it starts the indexer from: they must stay out of the child's.
  indexer = await startTestIndexer(db.url, [local, local2], { SERVICE_RELAYER_PRIVATE_KEY: RELAYER_KEY, SERVICE_ENCRYPTION_KEY: ENCRYPTION_KEY });
}, 60_000);

afterAll(async () => {
  await indexer?.stop();
  await Promise.all([local?.chain.stop(), local2?.chain.stop()]);
  await sql?.end();
  await db?.drop();
}, 30_000);

const rowsTo = (to: string) =>
  sql<{ chain_id: number; block_number: string; block_hash: string; tx_hash: string; from: string; value: string }[]>`
    select chain_id, block_number, block_hash, tx_hash, "from", value from indexer.transfers where "to" = ${to.toLowerCase()}`;

const addr = (n: number) => `0x${n.toString(16).padStart(40, "0")}` as `0x${string}`;

test("a transfer on each chain appears in indexer.transfers with its chain id", async () => {
  const [r1, r2] = await Promise.all([local.mint(addr(0xa1), 12_340_000n), local2.mint(addr(0xa1), 7n)]);
  const rows = await eventually(async () => {
    const r = await rowsTo(addr(0xa1));
    return r.length === 2 ? r : undefined;
  }, "both transfers indexed");
  const byChain = Object.fromEntries(rows.map((r) => [r.chain_id, r]));
  expect(byChain[31337]).toMatchObject({ block_number: String(r1.blockNumber), tx_hash: r1.transactionHash, value: "12340000", from: addr(0) });
  expect(byChain[31338]).toMatchObject({ block_number: String(r2.blockNumber), tx_hash: r2.transactionHash, value: "7" });

  // chain_heads follows each chain's newest processed block.
  const heads = await eventually(async () => {
    const h = await sql<{ chain_id: number; block_number: string }[]>`select chain_id, block_number from indexer.chain_heads order by chain_id`;
    return h.length === 2 && BigInt(h[0]!.block_number) >= r1.blockNumber ? h : undefined;
  }, "chain heads");
  expect(heads.map((h) => h.chain_id)).toEqual([31337, 31338]);
}, 20_000);

test("a reorg that drops a transfer removes its row", async () => {
  await local.rpc("anvil_mine", ["0x3"]); // keep the first test's transfer out of the reorg's reach
  const r = await local.mint(addr(0xb2), 5_000_000n);
  await eventually(async () => ((await rowsTo(addr(0xb2))).length === 1 ? true : undefined), "transfer indexed before the reorg");

  // Replace the last 2 blocks (the transfer's among them) with empty ones, then extend the chain.
  await local.rpc("anvil_reorg", [2, []]);
  await local.rpc("anvil_mine", ["0x2"]);
  const block = await local.publicClient.getBlock({ blockNumber: r.blockNumber });
  expect(block.transactions).toHaveLength(0); // the chain really lost it

  await eventually(async () => ((await rowsTo(addr(0xb2))).length === 0 ? true : undefined), "row removed after the reorg");
  // …and the head row moved to the new canonical block.
  const head = await eventually(async () => {
    const [h] = await sql<{ block_hash: string; block_number: string }[]>`select block_hash, block_number from indexer.chain_heads where chain_id = 31337`;
    return h && BigInt(h.block_number) >= r.blockNumber + 1n ? h : undefined;
  }, "head after reorg");
  const canonical = await local.publicClient.getBlock({ blockNumber: BigInt(head.block_number) });
  expect(head.block_hash).toBe(canonical.hash);
  // The first test's transfer, older than the reorg depth, is untouched.
  expect((await rowsTo(addr(0xa1))).length).toBe(2);
}, 20_000);

test("analysts: SQL over HTTP and GraphQL answer, read-only", async () => {
  const q = (s: string) => `${indexer.url}/sql/db?sql=${encodeURIComponent(JSON.stringify({ json: { sql: s, params: [] } }))}`;
  const res = await fetch(q(`select chain_id, value from transfers where "to" = '${addr(0xa1)}' order by chain_id`));
  expect(res.status).toBe(200);
  expect(((await res.json()) as { rows: unknown[] }).rows).toEqual([
    { chain_id: 31337, value: "12340000" },
    { chain_id: 31338, value: "7" },
  ]);
  const write = await fetch(q("delete from transfers"));
  expect(write.status).not.toBe(200);
  expect((await rowsTo(addr(0xa1))).length).toBe(2);

  const gql = await fetch(`${indexer.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query: `{ transfers(where: { to: "${addr(0xa1)}" }, orderBy: "chainId") { items { chainId value } } }` }),
  });
  expect(await gql.json()).toEqual({ data: { transfers: { items: [{ chainId: 31337, value: "12340000" }, { chainId: 31338, value: "7" }] } } });
}, 20_000);

test("a restart keeps its start block and indexes what was mined while it was down", async () => {
  const [before] = await sql<{ start_block: string }[]>`select start_block from indexer_meta.start_blocks where chain_id = 31337`;
  await indexer.stop();
  await local.mint(addr(0xc3), 1n); // mined while the indexer is stopped
  await local.rpc("anvil_mine", ["0x3"]);
  indexer = await startTestIndexer(db.url, [local, local2], { SERVICE_RELAYER_PRIVATE_KEY: RELAYER_KEY, SERVICE_ENCRYPTION_KEY: ENCRYPTION_KEY });
  const [after] = await sql<{ start_block: string }[]>`select start_block from indexer_meta.start_blocks where chain_id = 31337`;
  expect(after!.start_block).toBe(before!.start_block);
  await eventually(async () => ((await rowsTo(addr(0xc3))).length === 1 ? true : undefined), "transfer mined during downtime");
  expect((await rowsTo(addr(0xa1))).length).toBe(2); // nothing lost, nothing duplicated
}, 60_000);

test("the running indexer's environment holds its chain settings and no service secret", async () => {
  const environ = await Bun.file(`/proc/${indexer.pid}/environ`).text();
  const names = environ.split("\0").map((kv) => kv.slice(0, kv.indexOf("=")));
  expect(names).toContain("SERVICE_RPC_URL_LOCAL");
  expect(names).toContain("DATABASE_URL");
  expect(names).not.toContain("SERVICE_RELAYER_PRIVATE_KEY");
  expect(names).not.toContain("SERVICE_ENCRYPTION_KEY");
  expect(environ).not.toContain(RELAYER_KEY.slice(2));
  expect(environ).not.toContain(ENCRYPTION_KEY);
});
