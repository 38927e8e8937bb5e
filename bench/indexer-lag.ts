/**
 * Indexer figures, against real parts started here (embedded Postgres, anvil, Ponder):
 *  - backfill: 20,000 stablecoin transfers already on chain (and final) when the indexer starts;
 *    transfers/s from spawning the indexer until every row is visible in indexer.transfers.
 *  - lag: 200 transfers, one at a time; from the moment anvil returns the mined transaction's
 *    hash (automine) until its row is visible to a SQL reader. p50/p99.
 * Prints one JSON object and stops everything it started. Run: bun bench/indexer-lag.ts
 * Env: BENCH_POLLING_MS (indexer polling interval, default 100), BENCH_BACKFILL (default 20000).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { startEmbeddedPostgres } from "../api/src/db/embedded.ts";
import { freePort } from "../testing/ports.ts";
import { startDevChain } from "../shared/devchain/index.ts";
import { localClients } from "../shared/devchain/clients.ts";
import { deployThrowawayToken, throwawayTokenAbi } from "../testing/throwaway-token.ts";
import { startIndexer } from "../indexer/process.ts";
import { isolatedEnv } from "../testing/indexer-stack.ts";

const POLLING_MS = Number(process.env.BENCH_POLLING_MS ?? 100);
const BACKFILL = Number(process.env.BENCH_BACKFILL ?? 20_000);
const PER_TX = 400; // recipients per batchTransfer: ~11M gas, under the 16.7M per-transaction cap
const LAG_SAMPLES = 200;

const cleanup: (() => Promise<unknown>)[] = [];
const deadline = setTimeout(() => {
  console.error("bench: over 170 s, giving up");
  void shutdown(1);
}, 170_000);

async function shutdown(code: number): Promise<never> {
  clearTimeout(deadline);
  for (const f of cleanup.reverse()) await f().catch(() => {});
  process.exit(code);
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const round = (x: number) => Math.round(x * 10) / 10;

try {
  const dir = mkdtempSync(join(tmpdir(), "bench-indexer-"));
  cleanup.push(async () => rmSync(dir, { recursive: true, force: true }));
  const pg = await startEmbeddedPostgres({ dataDir: join(dir, "pg"), port: await freePort(), persistent: false });
  cleanup.push(() => pg.stop());
  const chain = await startDevChain({ port: await freePort(), chainId: 31337, extraArgs: ["--disable-block-gas-limit"] });
  cleanup.push(() => chain.stop());

  const { publicClient, walletClient } = localClients(chain.rpcUrl, 31337);
  const account = walletClient.account!;
  // TestUSD has no batch transfer; the throwaway token's batchTransfer emits PER_TX Transfer logs per tx.
  const token = await deployThrowawayToken(publicClient, walletClient, 6);
  const send = async (functionName: "mint" | "batchTransfer", args: readonly unknown[]) =>
    walletClient.writeContract({ address: token, abi: throwawayTokenAbi, functionName, args: args as never, account, chain: walletClient.chain });
  await publicClient.waitForTransactionReceipt({ hash: await send("mint", [account.address, 10n ** 30n]) });
  const startBlock = Number(await publicClient.getBlockNumber()) + 1;

  // Backfill data: all batches in as few blocks as possible (automine off), then 40 empty blocks
  // so they are past anvil's 30-block finality window and Ponder takes its backfill path.
  const recipients = Array.from({ length: PER_TX }, (_, i) => `0x${(0x100000 + i).toString(16).padStart(40, "0")}` as const);
  await publicClient.request({ method: "evm_setAutomine" as never, params: [false] as never });
  const hashes: `0x${string}`[] = [];
  for (let sent = 0; sent < BACKFILL; sent += PER_TX) {
    hashes.push(await send("batchTransfer", [recipients.slice(0, Math.min(PER_TX, BACKFILL - sent)), 1n]));
    if (hashes.length % 10 === 0) await publicClient.request({ method: "anvil_mine" as never, params: ["0x1"] as never });
  }
  await publicClient.request({ method: "anvil_mine" as never, params: ["0x1"] as never });
  for (const hash of hashes) {
    const r = await publicClient.getTransactionReceipt({ hash });
    if (r.status !== "success") throw new Error(`batch ${hash} reverted`);
  }
  await publicClient.request({ method: "anvil_mine" as never, params: ["0x28"] as never });
  await publicClient.request({ method: "evm_setAutomine" as never, params: [true] as never });
  const backfillBlocks = Number(await publicClient.getBlockNumber()) - startBlock + 1;

  const sql = postgres(pg.url, { max: 2, onnotice: () => {} });
  cleanup.push(() => sql.end());
  const count = async () => {
    try {
      return Number((await sql`select count(*)::int as n from indexer.transfers where value = 1`)[0]!.n);
    } catch {
      return 0; // table not created yet
    }
  };

  const t0 = performance.now();
  const indexer = await startIndexer({
    databaseUrl: pg.url,
    port: await freePort(),
    env: isolatedEnv({
      SERVICE_RPC_URL_LOCAL: chain.rpcUrl,
      SERVICE_STABLECOIN_ADDRESS_LOCAL: token,
      SERVICE_START_BLOCK_LOCAL: String(startBlock),
      SERVICE_INDEX_MODE: "full",
      SERVICE_INDEXER_POLLING_MS: String(POLLING_MS),
    }),
  });
  cleanup.push(() => indexer.stop());
  await indexer.waitUntilReady(120_000);
  const tReady = performance.now();
  while ((await count()) < BACKFILL) await Bun.sleep(20);
  const tBackfilled = performance.now();

  // Lag: one transfer at a time, at random phases of the polling cycle.
  const lags: number[] = [];
  for (let i = 0; i < LAG_SAMPLES; i++) {
    await Bun.sleep(Math.random() * POLLING_MS);
    const hash = await send("mint", [`0x${(0x200000 + i).toString(16).padStart(40, "0")}`, 2n]);
    const mined = performance.now(); // automine: the hash comes back once the block is mined
    for (;;) {
      const [row] = await sql`select 1 from indexer.transfers where tx_hash = ${hash}`;
      if (row) break;
      if (performance.now() - mined > 10_000) throw new Error(`transfer ${hash} not indexed within 10 s`);
      await Bun.sleep(2);
    }
    lags.push(performance.now() - mined);
  }
  lags.sort((a, b) => a - b);

  // Storage per indexed transfer (heap + indexes), and Ponder's raw-log cache per transfer.
  const [sizes] = await sql`select
      pg_total_relation_size('indexer.transfers')::float8 / (select count(*) from indexer.transfers) as table_bytes,
      pg_total_relation_size('ponder_sync.logs')::float8 / (select count(*) from ponder_sync.logs) as sync_log_bytes`;
  const backfillSeconds = (tBackfilled - t0) / 1000;
  console.log(
    JSON.stringify({
      figure: "indexer-lag",
      polling_interval_ms: POLLING_MS,
      lag_ms: {
        samples: lags.length,
        p50: round(percentile(lags, 50)),
        p99: round(percentile(lags, 99)),
        max: round(lags[lags.length - 1]!),
        mean: round(lags.reduce((a, b) => a + b, 0) / lags.length),
      },
      backfill: {
        transfers: BACKFILL,
        blocks: backfillBlocks,
        seconds_from_spawn: round(backfillSeconds),
        seconds_to_ready: round((tReady - t0) / 1000),
        transfers_per_s: Math.round(BACKFILL / backfillSeconds),
      },
      storage_bytes_per_transfer: {
        indexer_transfers_with_indexes: Math.round(sizes!.table_bytes),
        ponder_sync_logs_cache: Math.round(sizes!.sync_log_bytes),
      },
      runtime: "ponder 0.16.10 under bun --bun; anvil automine; embedded Postgres 17; full mode",
    }),
  );
  await shutdown(0);
} catch (err) {
  console.error(err);
  await shutdown(1);
}
