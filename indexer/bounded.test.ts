/** Bounded mode against real parts: only transfers touching app.watched_addresses are kept. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { createTestDatabase } from "../testing/database.ts";
import { migrate } from "../api/src/db/migrate.ts";
import { ANVIL_ACCOUNTS } from "../shared/devchain/index.ts";
import { testUsdAbi } from "../shared/contracts/artifacts.ts";
import { startIndexer, type IndexerProcess } from "./process.ts";
import { eventually } from "../testing/eventually.ts";
import { chainEnv, isolatedEnv, startTestChain, startTestIndexer, type TestChain } from "../testing/indexer-stack.ts";
import { freePort } from "../testing/ports.ts";
import { INDEXED_HEAD_CHANNEL } from "./head-notify.ts";
import { INDEXED_HEAD_CHANNEL as RUNNERS_CHANNEL } from "../api/src/sessions/indexed.ts";

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: postgres.Sql;
let local: TestChain;
let indexer: IndexerProcess;

const addr = (n: number) => `0x${n.toString(16).padStart(40, "0")}` as `0x${string}`;
const WATCHED = addr(0xd1);
const UNWATCHED = addr(0xd2);
const signer = ANVIL_ACCOUNTS[0].address;

/**
 * Registers an address the way the API does (app.watched_addresses is a view over these rows):
 * a deposit is a row of app.session_deposits of a session; a settlement one of app.merchant_settlements.
 */
let n = 0;
async function watch(a: string, kind: "deposit" | "settlement" = "deposit") {
  const id = `t${++n}`;
  await sql.begin(async (tx) => {
    await tx`insert into app.merchants (id, name, sandbox_public_id, live_public_id) values (${`acct_${id}`}, 'Bounded', ${`mch_test_${id}`}, ${`mch_live_${id}`})`;
    if (kind === "settlement") {
      await tx`insert into app.merchant_settlements (merchant_id, environment, chain_id, address) values (${`acct_${id}`}, 'sandbox', 31337, ${a.toLowerCase()})`;
      return;
    }
    await tx`
      insert into app.payment_sessions (id, merchant_id, environment, status, status_reason, amount_minor, currency, expires_at, token_hash, token_expires_at)
      values (${`ps_${id}`}, ${`acct_${id}`}, 'sandbox', 'PENDING', 'created', 100, 'USD', now() + interval '1 hour', ${`hash_${id}`}, now() + interval '2 hours')`;
    await tx`
      insert into app.session_deposits (session_id, chain_id, address, settlement_address, token_address, decimals, required_base_units, confirmations)
      values (${`ps_${id}`}, 31337, ${a.toLowerCase()}, ${"0x" + "11".repeat(20)}, ${local?.token?.toLowerCase() ?? "0x" + "22".repeat(20)}, 6, 1000000, 1)`;
  });
}
const count = async (where: postgres.PendingQuery<postgres.Row[]>) => Number((await where)[0]!.n);
const rowsTo = (a: string) => count(sql`select count(*) as n from indexer.transfers where "to" = ${a.toLowerCase()}`);

beforeAll(async () => {
  db = await createTestDatabase("bnd");
  sql = postgres(db.url, { max: 2, onnotice: () => {} });
  // The API's own schema, migrations and all: app.watched_addresses is the view production has.
  await migrate(sql);
  local = await startTestChain("local");
  await watch(WATCHED);
  indexer = await startTestIndexer(db.url, [local], { SERVICE_INDEX_MODE: "bounded", SERVICE_WS_URL_LOCAL: "auto" });
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

test("a live block is announced on INDEXED_HEAD_CHANNEL with its commit, on the channel the runners listen on", async () => {
  expect(INDEXED_HEAD_CHANNEL).toBe(RUNNERS_CHANNEL);
  const fresh = addr(0xbeef);
  await watch(fresh);
  const seen: { payload: string; rows: number }[] = [];
  const listener = await sql.listen(INDEXED_HEAD_CHANNEL, async (payload) => {
    seen.push({ payload, rows: await rowsTo(fresh) });
  });
  try {
    const paid = await local.mint(fresh, 5n);
    await eventually(async () => (seen.length > 0 ? true : undefined), "a notification");
    // Sent from the block's transaction: when it arrives, the block's rows are there.
    expect(seen[0]).toEqual({ payload: `31337:${paid.blockNumber}`, rows: 1 });
  } finally {
    await listener.unlisten();
  }
}, 20_000);

test("a re-index keeps everything it kept, and a transfer to an address registered while it runs", async () => {
  const keptBefore = await sql`select tx_hash, log_index from indexer.transfers order by 1, 2`;
  expect(keptBefore.length).toBeGreaterThanOrEqual(8); // the tests above
  await indexer.stop();
  // A long re-index: the schema and Ponder's RPC cache gone, a thousand blocks to work through
  // again (Ponder fetches each block for the ChainHead source).
  await sql`drop schema indexer cascade`;
  await sql`drop schema if exists ponder_sync cascade`;
  await local.rpc("anvil_mine", ["0x3e8"]);
  indexer = await startIndexer({
    databaseUrl: db.url,
    port: await freePort(),
    env: isolatedEnv({ SERVICE_INDEXER_POLLING_MS: "100", ...chainEnv([local]), SERVICE_INDEX_MODE: "bounded", SERVICE_WS_URL_LOCAL: "auto" }),
    onLog: process.env.INDEXER_TEST_LOGS ? (l) => console.log(l) : undefined,
  });
  const ready = async () => (await fetch(`${indexer.url}/ready`).catch(() => null))?.status === 200;
  expect(await ready()).toBe(false);
  const fresh = addr(0xf00d);
  await watch(fresh); // registered during the re-index…
  const paid = await local.mint(fresh, 7n); // …and paid at once
  expect(await ready()).toBe(false); // both happened while the re-index was still running
  await indexer.waitUntilReady(60_000);
  // Live indexing follows the head subscription: the blocks after the backfill are taken with
  // the next head, as on any live chain (this test chain mines only on demand).
  // A head every look, as a live chain keeps making them: on a loaded machine the subscription can
  // come up after the first one (seen once in CI), and then only a later head brings the block.
  let lastHead = 0;
  await eventually(async () => {
    if ((await rowsTo(fresh)) === 1) return true;
    if (Date.now() - lastHead >= 500) {
      lastHead = Date.now();
      await local.rpc("anvil_mine", ["0x1"]);
    }
    return undefined;
  }, "the fresh address's transfer indexed");
  const keptAfter = await sql`select tx_hash, log_index from indexer.transfers where block_number < ${paid.blockNumber.toString()} order by 1, 2`;
  expect(keptAfter).toEqual(keptBefore);
}, 90_000);
