/** Bounded mode against real parts: only transfers touching app.watched_addresses are kept. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { createTestDatabase } from "../api/src/testing/database.ts";
import { ANVIL_ACCOUNTS } from "../shared/devchain/index.ts";
import { testUsdAbi } from "../shared/contracts/artifacts.ts";
import type { IndexerProcess } from "./process.ts";
import { eventually, startTestChain, startTestIndexer, type TestChain } from "./testing/stack.ts";

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: postgres.Sql;
let local: TestChain;
let indexer: IndexerProcess;

const addr = (n: number) => `0x${n.toString(16).padStart(40, "0")}` as `0x${string}`;
const WATCHED = addr(0xd1);
const UNWATCHED = addr(0xd2);
const signer = ANVIL_ACCOUNTS[0].address;

const watch = (a: string, kind = "deposit") => sql`insert into app.watched_addresses (address, kind) values (${a.toLowerCase()}, ${kind})`;
const count = async (where: postgres.PendingQuery<postgres.Row[]>) => Number((await where)[0]!.n);
const rowsTo = (a: string) => count(sql`select count(*) as n from indexer.transfers where "to" = ${a.toLowerCase()}`);

beforeAll(async () => {
  db = await createTestDatabase("bnd");
  sql = postgres(db.url, { max: 2, onnotice: () => {} });
  // The API owns this table; its shape is the contract between us.
  await sql`create schema app`;
  await sql`create table app.watched_addresses (address text primary key, kind text not null, created_at timestamptz not null default now())`;
  await watch(WATCHED);
  local = await startTestChain("local");
  indexer = await startTestIndexer(db.url, [local], { SERVICE_INDEX_MODE: "bounded" });
}, 60_000);

afterAll(async () => {
  await indexer?.stop();
  await local?.chain.stop();
  await sql?.end();
  await db?.drop();
}, 30_000);

test("keeps a transfer into a watched address and drops one into an unwatched address", async () => {
  await local.mint(UNWATCHED, 1n); // first, so that seeing the second proves the first was processed
  const kept = await local.mint(WATCHED, 2n);
  await eventually(async () => ((await rowsTo(WATCHED)) === 1 ? true : undefined), "watched transfer indexed");
  expect(await rowsTo(UNWATCHED)).toBe(0);
  // Ponder did see the dropped one: its head passed both blocks.
  const [head] = await sql`select block_number from indexer.chain_heads`;
  expect(BigInt(head!.block_number)).toBeGreaterThanOrEqual(kept.blockNumber);
}, 20_000);

test("keeps a transfer out of a watched address (sweeps, refunds)", async () => {
  await watch(signer, "settlement");
  await local.mint(signer, 100n); // into the watched signer
  const hash = await local.walletClient.writeContract({
    address: local.token,
    abi: testUsdAbi,
    functionName: "transfer",
    args: [addr(0xd3), 40n],
    account: local.walletClient.account!,
    chain: local.walletClient.chain,
  });
  await local.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  await eventually(async () => ((await rowsTo(addr(0xd3))) === 1 ? true : undefined), "outgoing transfer indexed");
  expect(await count(sql`select count(*) as n from indexer.transfers where "from" = ${signer.toLowerCase()}`)).toBe(1);
}, 20_000);

test("an address registered right before it is paid is never missed", async () => {
  for (let i = 0; i < 5; i++) {
    const fresh = addr(0xe000 + i);
    await watch(fresh); // committed, then paid at once: the next block forces a refresh
    await local.mint(fresh, 3n);
  }
  await eventually(async () => {
    const n = await count(sql`select count(*) as n from indexer.transfers where "to" like '0x000000000000000000000000000000000000e00%'`);
    return n === 5 ? n : undefined;
  }, "all five fresh deposits indexed");
}, 20_000);
