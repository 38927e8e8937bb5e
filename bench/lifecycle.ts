/**
 * The payment lifecycle's figures, on a real local chain, indexer, runner and sweeper:
 *   - block mined → FUNDED committed, p50/p99 over 200 payments (goal: p50 ≤ the indexer's
 *     polling interval + 150 ms);
 *   - transitions/s of one runner (3,000 sessions expiring at once);
 *   - the runner's cost per indexed block with 100,000 open sessions ÷ with 100 (goal ≤ 1.2).
 * Prints one JSON object. BENCH_PAYMENTS (200), BENCH_EXPIRING (3000), BENCH_OPEN (100000).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmbeddedPostgres } from "../api/src/db/embedded.ts";
import { loadConfig } from "../api/src/config.ts";
import { startService } from "../api/src/server.ts";
import { createApiKey, createMerchant } from "../api/src/credentials/store.ts";
import { insertSession } from "../api/src/sessions/create/statement.ts";
import { planDeposits } from "../api/src/sessions/deposits.ts";
import { DEFAULT_SANDBOX_SETTLEMENT } from "../api/src/config.ts";
import { loadChainsConfig } from "../shared/chains/config.ts";
import { startDevChain } from "../shared/devchain/index.ts";
import { devFaucetAccount, ensureDeployed, mintTestUsd } from "../shared/contracts/deploy.ts";
import { testUsdAbi } from "../shared/contracts/artifacts.ts";
import { localClients } from "../shared/devchain/clients.ts";
import { freePort } from "../testing/ports.ts";
import { newId } from "../shared/ids.ts";
import { startIndexer } from "../indexer/process.ts";
import { percentile, round } from "./lib.ts";

const PAYMENTS = Number(process.env.BENCH_PAYMENTS ?? 200);
const EXPIRING = Number(process.env.BENCH_EXPIRING ?? 3000);
const OPEN = Number(process.env.BENCH_OPEN ?? 100_000);
const POLLING_MS = 100;

const dir = mkdtempSync(join(tmpdir(), "paysession-bench-lifecycle-"));
const pg = await startEmbeddedPostgres({ dataDir: join(dir, "pg"), port: await freePort(), persistent: false });
const chain = await startDevChain({ port: await freePort(), chainId: 31337 });
const clients = localClients(chain.rpcUrl, 31337);
await ensureDeployed(clients);
const chainEnv = { SERVICE_RPC_URL_LOCAL: chain.rpcUrl, SERVICE_INDEX_MODE: "full", SERVICE_INDEXER_POLLING_MS: String(POLLING_MS) };
const networks = loadChainsConfig(chainEnv).networks;
const config = loadConfig({
  ...chainEnv,
  DATABASE_URL: pg.url,
  SERVICE_PORT: "0",
  SERVICE_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString("base64"),
  SERVICE_RUNNER_POLL_MS: "50",
  SERVICE_RUNNER_THREAD: "false", // its stats are read here (service.runner)
  SERVICE_SWEEP_POLL_MS: "200",
});
const service = await startService(config, () => {}, { networks });
const indexer = await startIndexer({ databaseUrl: pg.url, port: await freePort(), env: { ...process.env, ...chainEnv } });
await indexer.waitUntilReady();
const sql = service.services.database.sql;
const db = service.services.database.db;
const runner = service.runner!;
const merchant = await createMerchant(db, "Bench");
await createApiKey(db, merchant.id, "sandbox", "bench");

const input = { amountMinor: 100n, currency: "USD" as const, metadata: {}, referenceId: null, expiresInSeconds: 3600 };
async function create() {
  const id = newId("paymentSession");
  const plan = planDeposits({ sessionId: id, environment: "sandbox", amountMinor: 100n, networks, settlements: new Map(), defaultSettlement: DEFAULT_SANDBOX_SETTLEMENT });
  if (!plan.ok) throw new Error(plan.problem);
  await insertSession(sql, { id, deposits: plan.deposits, merchantId: merchant.id, environment: "sandbox", input, tokenGraceSeconds: 0 });
  return { id, deposit: plan.deposits[0]!.address as `0x${string}` };
}
const mint = (to: `0x${string}`, amount: bigint) => mintTestUsd({ ...clients, to, amount });
async function waitUntil(probe: () => Promise<boolean>, what: string, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await Bun.sleep(20);
  }
}

try {
  // 1. block mined → FUNDED committed
  const sessions = [];
  for (let i = 0; i < PAYMENTS; i++) sessions.push(await create());
  const minedAt = new Map<string, number>();
  // Split the lag: when each payment became visible in the indexer's table.
  const seenAt = new Map<string, number>();
  let watching = true;
  const byAddress = new Map(sessions.map((s) => [s.deposit, s.id]));
  const watcher = (async () => {
    while (watching) {
      const rows = await sql`select "to" from indexer.transfers where "to" in ${sql([...byAddress.keys()])}`;
      for (const r of rows) {
        const id = byAddress.get(r.to as `0x${string}`);
        if (id && !seenAt.has(id)) seenAt.set(id, Date.now());
      }
      await Bun.sleep(10);
    }
  })();
  // A block every 250 ms with a few payments in each (a fast L2's pace), mined by hand so the
  // moment each payment's block was mined is known to the millisecond.
  await clients.publicClient.request({ method: "evm_setAutomine" as never, params: [false] as never });
  const PER_BLOCK = 4;
  for (let i = 0; i < sessions.length; i += PER_BLOCK) {
    const batch = sessions.slice(i, i + PER_BLOCK);
    for (const s of batch) {
      await clients.walletClient.writeContract({
        account: devFaucetAccount(),
        chain: clients.walletClient.chain,
        address: networks[0]!.stablecoin.address,
        abi: testUsdAbi,
        functionName: "mint",
        args: [s.deposit, 1_000_000n],
      });
    }
    await clients.publicClient.request({ method: "anvil_mine" as never, params: ["0x1"] as never });
    const at = Date.now();
    for (const s of batch) minedAt.set(s.id, at);
    await Bun.sleep(250);
  }
  await clients.publicClient.request({ method: "evm_setAutomine" as never, params: [true] as never });
  const ids = sessions.map((s) => s.id);
  await waitUntil(async () => (await sql`select count(*)::int as n from app.session_events where session_id in ${sql(ids)} and status = 'FUNDED'`)[0]!.n === PAYMENTS, "all FUNDED");
  const funded = await sql`select session_id, (extract(epoch from created_at) * 1000)::float8 as ms from app.session_events where session_id in ${sql(ids)} and status = 'FUNDED'`;
  watching = false;
  await watcher;
  const lags = funded.map((r) => Number(r.ms) - minedAt.get(r.session_id as string)!).sort((a, b) => a - b);
  const indexLags = ids.map((id) => seenAt.get(id)! - minedAt.get(id)!).sort((a, b) => a - b);
  await waitUntil(async () => (await sql`select count(*)::int as n from app.payment_sessions where id in ${sql(ids)} and status = 'SUCCEEDED'`)[0]!.n === PAYMENTS, "all SUCCEEDED");

  // 2. transitions/s of one runner: many sessions expiring at once
  const expiring = [];
  for (let i = 0; i < EXPIRING; i += 100) expiring.push(...(await Promise.all(Array.from({ length: Math.min(100, EXPIRING - i) }, create))));
  const expIds = expiring.map((s) => s.id);
  const before = runner.stats.transitions;
  const t0 = performance.now();
  await sql`update app.payment_sessions set expires_at = now(), wake_at = now() where id in ${sql(expIds)}`;
  runner.wake();
  await waitUntil(async () => runner.stats.transitions - before >= EXPIRING, "all expired");
  const transitionsPerSecond = round(EXPIRING / ((performance.now() - t0) / 1000), 1);

  // 3. cost per indexed block: 100 open sessions, then OPEN open sessions
  async function costPerBlock(blocks: number) {
    const busy0 = runner.stats.busyMs;
    const heads0 = runner.stats.newHeads;
    for (let i = 0; i < blocks; i++) {
      await mint(`0x${(0x1000 + i).toString(16).padStart(40, "0")}`, 1n); // traffic that is not ours
      await Bun.sleep(POLLING_MS * 2);
    }
    await Bun.sleep(500);
    return { msPerBlock: (runner.stats.busyMs - busy0) / blocks, heads: runner.stats.newHeads - heads0 };
  }
  for (let i = 0; i < 100; i++) await create();
  const small = await costPerBlock(40);
  // Bulk-insert the open sessions (with their deposit rows) straight in SQL: the runner's cost is the point, not the inserts.
  await sql.unsafe(`
    insert into app.payment_sessions (id, merchant_id, environment, status, status_reason, amount_minor, currency, metadata, expires_at, token_hash, token_expires_at, wake_at)
    select 'ps_bulk' || g, $1, 'sandbox', 'PENDING', 'created', 100, 'USD', '{}', now() + interval '1 hour', md5('t' || g) || md5('u' || g), now() + interval '2 hours', now() + interval '1 hour'
      from generate_series(1, ${OPEN}) g`, [merchant.id]);
  await sql.unsafe(`
    insert into app.session_deposits (session_id, chain_id, address, settlement_address, token_address, decimals, required_base_units, confirmations)
    select 'ps_bulk' || g, 31337, '0xcc' || lpad(to_hex(g), 38, '0'), '${DEFAULT_SANDBOX_SETTLEMENT}', '${networks[0]!.stablecoin.address.toLowerCase()}', 6, 1000000, 1
      from generate_series(1, ${OPEN}) g`);
  await sql.unsafe(`analyze app.payment_sessions; analyze app.session_deposits`);
  const large = await costPerBlock(40);
  const costRatio = round(large.msPerBlock / small.msPerBlock, 3);

  console.log(
    JSON.stringify({
      bench: "lifecycle",
      indexerPollingMs: POLLING_MS,
      minedToFunded: { payments: PAYMENTS, p50Ms: percentile(lags, 50), p99Ms: percentile(lags, 99), maxMs: round(lags.at(-1)!) },
      minedToIndexed: { p50Ms: percentile(indexLags, 50), p99Ms: percentile(indexLags, 99) },
      runner: { transitionsPerSecond, sessions: EXPIRING },
      costPerBlock: { openSmall: 100, msSmall: round(small.msPerBlock, 3), openLarge: OPEN, msLarge: round(large.msPerBlock, 3), ratio: costRatio },
      goals: { p50Ms: POLLING_MS + 150, costRatio: 1.2 },
      pass: { p50: percentile(lags, 50) <= POLLING_MS + 150, costRatio: costRatio <= 1.2 },
    }),
  );
} finally {
  await indexer.stop();
  await service.stop();
  await chain.stop();
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
}
