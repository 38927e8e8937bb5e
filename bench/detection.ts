/**
 * Payment detection under load (issue 16), on the stack an operator runs: embedded Postgres,
 * the local network as `bun run dev` runs it (a block per transaction and a heartbeat block a
 * second), the API with its session runner, and the indexer in bounded mode with its defaults
 * (head subscription, no polling override). One token transfer a second to a stranger, so that
 * blocks carry Transfers as on a main network. Prints one JSON object:
 *   - per creation rate (0, 100, 1000 sessions/s through POST /payment-sessions, sent by a
 *     driver in a process of its own): payment block available from the node → FUNDED
 *     committed, p50/p99/max, over a payment every BENCH_PAY_EVERY_MS; the indexer's lag in
 *     blocks behind the node (sampled every 200 ms); the indexer's RSS;
 *   - the merchant's view (`merchant`): a merchant's server in a process of its own
 *     (bench/detection-merchant.ts: its own key, its own payer account, its own receipt, its own
 *     polls of GET /payment-sessions/{id} every BENCH_MERCHANT_POLL_MS, 10) — receipt → FUNDED
 *     in an answer, p50/p90, idle and while another merchant's driver creates
 *     BENCH_MERCHANT_LOAD (1,000) sessions a second, alternated BENCH_MERCHANT_ROUNDS (3) times,
 *     BENCH_MERCHANT_SECONDS (30) each, with their ratio and where the time went;
 *   - the indexer's RSS and start-up (spawn → ready) with none and BENCH_STORED sessions stored
 *     (rows generated with SQL);
 *   - catch-up: BENCH_BACKLOG blocks each with a transfer, mined while the indexer was stopped,
 *     worked off at so many blocks a second (× real time for 1 s blocks).
 * BENCH_SECONDS (60) per rate — the 6 minutes: BENCH_SECONDS=360. BENCH_RATES ("0,100,1000").
 *
 * The API's per-key rate limit (SERVICE_RATE_LIMIT_PER_SECOND, default 100/s, burst 200) would
 * answer most of 1,000 creates/s with 429: an operator who expects that many creates a second
 * from one key raises it, and so does this bench (to twice the highest rate asked, burst as
 * much again; BENCH_RATE_LIMIT overrides). The driver counts answers by status code, so a
 * refusal can never pass for what the machine sustains.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { spawn } from "node:child_process";
import type { Address } from "viem";
import { startEmbeddedPostgres } from "../api/src/db/embedded.ts";
import { connect } from "../api/src/db/client.ts";
import { migrate } from "../api/src/db/migrate.ts";
import { createApiKey, createMerchant } from "../api/src/credentials/store.ts";
import { ANVIL_ACCOUNTS, startDevChain } from "../shared/devchain/index.ts";
import { devFaucetAccount, ensureDeployed } from "../shared/contracts/deploy.ts";
import { testUsdAbi } from "../shared/contracts/artifacts.ts";
import { localClients } from "../shared/devchain/clients.ts";
import { freePort } from "../testing/ports.ts";
import { startIndexer, type IndexerProcess } from "../indexer/process.ts";
import { INDEXED_HEAD_CHANNEL } from "../api/src/sessions/indexed.ts";
import { cpuSeconds, percentile, postgresCpu, round } from "./lib.ts";
import type { Payment } from "./detection-merchant.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const RATES = (process.env.BENCH_RATES ?? "0,100,1000").split(",").map(Number);
const PAY_EVERY_MS = Number(process.env.BENCH_PAY_EVERY_MS ?? 1000);
const STORED = Number(process.env.BENCH_STORED ?? 1_000_000);
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 1000);
const ROOT = resolve(import.meta.dir, "..");
/** Which parts run: "rates,merchant,startup,catchup" (all, the default); fewer while iterating. */
const PARTS = new Set((process.env.BENCH_PARTS ?? "rates,merchant,startup,catchup").split(","));
const RATE_LIMIT = Number(
  process.env.BENCH_RATE_LIMIT ?? Math.max(100, 2 * Math.max(...RATES), PARTS.has("merchant") ? 2 * Number(process.env.BENCH_MERCHANT_LOAD ?? 1000) : 0),
);

const dir = mkdtempSync(join(tmpdir(), "paysession-bench-detection-"));
const pg = await startEmbeddedPostgres({ dataDir: join(dir, "pg"), port: await freePort(), persistent: false });
const chain = await startDevChain({ port: await freePort(), chainId: 31337, heartbeatSeconds: 1 });
const clients = localClients(chain.rpcUrl, 31337);
const { token } = await ensureDeployed(clients);
const chainEnv = { SERVICE_RPC_URL_LOCAL: chain.rpcUrl, SERVICE_INDEX_MODE: "bounded" };
// The bench's own connections (measuring, generating rows); the service has its own pool.
const database = connect(pg.url, { max: 4, statementTimeoutMs: 0 });
await migrate(database.sql);
const sql = database.sql;
const merchant = await createMerchant(database.db, "Bench");
const { secret: apiKey } = await createApiKey(database.db, merchant.id, "sandbox", "bench");
// The API (with its session runner) in a process of its own, as `bun run start` runs it, so
// that the bench's clocks (block available, NOTIFY heard, FUNDED seen) are not late behind its
// work. The bench runs the indexer itself (SERVICE_INDEXER=false there) to restart and weigh it.
/** BENCH_RUNNER=process: the session runner as `bun run actors` beside an API without one. */
const RUNNER_APART = process.env.BENCH_RUNNER === "process";
const servicePort = await freePort();
const serviceUrl = `http://127.0.0.1:${servicePort}`;
/** BENCH_API_MAIN: another build's API (its main.ts), to alternate builds on one machine; the indexer stays this checkout's. */
const API_MAIN = process.env.BENCH_API_MAIN ?? join(ROOT, "api/src/main.ts");
const serviceProcess = Bun.spawn(["bun", API_MAIN], {
  env: {
    ...process.env,
    ...chainEnv,
    DATABASE_URL: pg.url,
    SERVICE_PORT: String(servicePort),
    SERVICE_INDEXER: "false",
    SERVICE_SWEEPER: "false",
    SERVICE_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString("base64"), // nothing written to .data/
    SERVICE_RATE_LIMIT_PER_SECOND: String(RATE_LIMIT),
    SERVICE_RATE_LIMIT_BURST: String(2 * RATE_LIMIT),
    ...(RUNNER_APART ? { SERVICE_SESSION_RUNNER: "false" } : {}),
  },
  stdout: "ignore",
  stderr: "inherit",
});
const runnerProcess = RUNNER_APART
  ? Bun.spawn(["bun", join(ROOT, "api/src/sessions/main.ts")], { env: { ...process.env, ...chainEnv, DATABASE_URL: pg.url }, stdout: "ignore", stderr: "inherit" })
  : undefined;
for (let i = 0; !(await fetch(`${serviceUrl}/healthz`).then((r) => r.ok, () => false)); i++) {
  if (i > 400) throw new Error("service did not start");
  await Bun.sleep(50);
}
const env = { ...process.env, ...chainEnv } as Record<string, string | undefined>;
delete env.SERVICE_INDEXER_POLLING_MS;
/** BENCH_BREAKDOWN=1: Ponder logs at debug level, so the bench learns when it received each head. */
const BREAKDOWN = process.env.BENCH_BREAKDOWN === "1";
if (BREAKDOWN) env.PONDER_LOG_LEVEL ??= "debug";
/** Block number → when Ponder logged "Received new head block" (BENCH_BREAKDOWN only). */
const ponderHeads = new Map<string, number>();
const indexerLogFile = process.env.BENCH_INDEXER_LOG; // every line of the indexer, to look into
const onIndexerLog = (line: string) => {
  if (indexerLogFile) appendFileSync(indexerLogFile, line + "\n");
  if (!line.includes("Received new head block")) return;
  try {
    const l = JSON.parse(line) as { number?: number; time?: number };
    if (l.number !== undefined && l.time !== undefined && !ponderHeads.has(String(l.number))) ponderHeads.set(String(l.number), l.time);
  } catch {
    // not JSON: not ours
  }
};

const rssMb = (pid: number) => {
  try {
    return round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024, 1);
  } catch {
    return null;
  }
};
const postgresCpuSeconds = () => (pg.pid ? postgresCpu(pg.pid) : NaN);
/** What each process has used so far (CPU seconds), to say how many cores each had during a phase. */
const cpuNow = (driverPid?: number) => ({
  api: cpuSeconds(serviceProcess.pid),
  ...(runnerProcess ? { runner: cpuSeconds(runnerProcess.pid) } : {}),
  indexer: cpuSeconds(indexer.pid),
  postgres: postgresCpuSeconds(),
  anvil: cpuSeconds(chain.pid),
  bench: cpuSeconds(process.pid),
  driver: driverPid ? cpuSeconds(driverPid) : 0,
});

async function startMeasuredIndexer(): Promise<{ indexer: IndexerProcess; readySeconds: number }> {
  const t0 = performance.now();
  const indexer = await startIndexer({ databaseUrl: pg.url, port: await freePort(), env, onLog: BREAKDOWN ? onIndexerLog : undefined });
  await indexer.waitUntilReady(600_000);
  return { indexer, readySeconds: round((performance.now() - t0) / 1000, 2) };
}

// One sender account: its transactions go out one after another (no two with the same nonce).
let sending: Promise<unknown> = Promise.resolve();
const send = (fn: "mint", to: Address, amount: bigint): Promise<`0x${string}`> => {
  const next = sending.then(() =>
    clients.walletClient.writeContract({ account: devFaucetAccount(), chain: clients.walletClient.chain, address: token, abi: testUsdAbi, functionName: fn, args: [to, amount] }),
  );
  sending = next.catch(() => {});
  return next;
};
const stranger = () => `0x${crypto.getRandomValues(new Uint8Array(20)).reduce((s, b) => s + b.toString(16).padStart(2, "0"), "")}` as Address;

/** One token transfer a second to a stranger, as on a main network. */
let background = true;
const backgroundLoop = (async () => {
  while (background) {
    await send("mint", stranger(), 1n).catch(() => {});
    await Bun.sleep(1000);
  }
})();

let { indexer, readySeconds } = await startMeasuredIndexer();

/**
 * Ready is the end of Ponder's backfill, not yet following the head: the first seconds after it
 * work off the blocks mined meanwhile. Measure from the moment it is at the node's head.
 */
async function caughtUp(): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const [node, [h]] = await Promise.all([clients.publicClient.getBlockNumber({ cacheTime: 0 }), sql`select max(block_number)::text as b from indexer.chain_heads`]);
    if (h?.b && BigInt(h.b) >= node) return;
    await Bun.sleep(100);
  }
  throw new Error("the indexer did not reach the node's head in 60 s");
}

/** The payer's session; under load a create may be refused (429, or 503 with Retry-After): counted by status, tried again. */
let payerCreateRefusals: Record<string, number> = {};
async function createSession(): Promise<{ id: string; deposit: Address }> {
  for (;;) {
    const r = await fetch(`${serviceUrl}/payment-sessions`, { method: "POST", headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" }, body: JSON.stringify({ amount: "1.00", currency: "USD" }) });
    const b = (await r.json()) as { paymentSessionId: string; networks: { depositAddress: Address }[] };
    if (r.status === 201) return { id: b.paymentSessionId, deposit: b.networks[0]!.depositAddress };
    payerCreateRefusals[r.status] = (payerCreateRefusals[r.status] ?? 0) + 1;
    await Bun.sleep(50);
  }
}

async function phase(rate: number) {
  await caughtUp();
  const driver = spawn("bun", [join(ROOT, "bench/detection-driver.ts"), serviceUrl, apiKey, String(rate), String(SECONDS)], { stdio: ["ignore", "pipe", "inherit"] });
  const cpu0 = cpuNow(driver.pid);
  const tCpu0 = performance.now();
  let cpu1 = cpu0;
  let tCpu1 = tCpu0;
  let driverOut = "";
  driver.stdout.on("data", (d) => (driverOut += d));
  const driverDone = new Promise((r) => driver.once("exit", r));
  const lags: number[] = [];
  const rss: number[] = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const [node, [h]] = await Promise.all([clients.publicClient.getBlockNumber({ cacheTime: 0 }), sql`select max(block_number)::text as b from indexer.chain_heads`]);
      lags.push(Math.max(0, Number(node) - Number(h?.b ?? 0)));
      const m = rssMb(indexer.pid);
      if (m !== null) rss.push(m);
      await Bun.sleep(200);
    }
  })();
  // Block number → when the indexer's NOTIFY for it reached us (it is sent with the block's commit).
  const notified = new Map<string, number>();
  const listener = await sql.listen(INDEXED_HEAD_CHANNEL, (payload) => {
    const block = payload.split(":")[1];
    if (block && !notified.has(block)) notified.set(block, Date.now());
  });
  const available = new Map<string, number>();
  const blockOf = new Map<string, string>();
  const visible = new Map<string, number>();
  const t0 = Date.now();
  while (Date.now() - t0 < SECONDS * 1000 - 3000) {
    const s = await createSession();
    const hash = await send("mint", s.deposit, 1_000_000n);
    const receipt = await clients.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 2 });
    available.set(s.id, Date.now()); // the payment's block is available from the node
    if (indexerLogFile) appendFileSync(indexerLogFile, JSON.stringify({ bench: "available", time: available.get(s.id), number: Number(receipt.blockNumber) }) + "\n");
    blockOf.set(s.id, receipt.blockNumber.toString());
    // FUNDED as a reader sees it: its commit, found within a 5 ms poll (the event's created_at
    // is its transaction's start, a few ms earlier).
    const until = Date.now() + 5000;
    while (Date.now() < until) {
      const [row] = await sql`select 1 from app.session_events where session_id = ${s.id} and status = 'FUNDED'`;
      if (row) {
        visible.set(s.id, Date.now());
        break;
      }
      await Bun.sleep(5);
    }
    await Bun.sleep(PAY_EVERY_MS);
  }
  cpu1 = cpuNow(driver.pid); // while the driver still runs (its figures vanish with it)
  tCpu1 = performance.now();
  await driverDone;
  const ids = [...available.keys()];
  const deadline = Date.now() + 300_000;
  let funded: { session_id: string; ms: number }[] = [];
  while (Date.now() < deadline) {
    funded = (await sql`select session_id, (extract(epoch from created_at) * 1000)::float8 as ms from app.session_events where session_id in ${sql(ids)} and status = 'FUNDED'`) as never;
    if (funded.length === ids.length) break;
    await Bun.sleep(200);
  }
  sampling = false;
  await sampler;
  await listener.unlisten();
  // Committed and seen within 5 s: that moment; else (late) the event's own time.
  const ms = funded.map((r) => (visible.get(r.session_id) ?? Number(r.ms)) - available.get(r.session_id)!).sort((a, b) => a - b);
  // Where the time goes: block available → Ponder received the head (BENCH_BREAKDOWN) →
  // the block committed (its NOTIFY arrives) → FUNDED committed by the runner.
  const split = (from: (id: string) => number | undefined, to: (id: string) => number | undefined) => {
    const xs = funded.flatMap((r) => {
      const a = from(r.session_id);
      const b = to(r.session_id);
      return a === undefined || b === undefined ? [] : [b - a];
    });
    xs.sort((a, b) => a - b);
    return xs.length ? { n: xs.length, p50: round(percentile(xs, 50), 1), p99: round(percentile(xs, 99), 1) } : null;
  };
  const fundedAt = new Map(funded.map((r) => [r.session_id, Number(r.ms)]));
  const avail = (id: string) => available.get(id);
  const head = (id: string) => ponderHeads.get(blockOf.get(id)!);
  const commit = (id: string) => notified.get(blockOf.get(id)!);
  const stepStart = (id: string) => fundedAt.get(id);
  const seen = (id: string) => visible.get(id);
  const breakdownMs = {
    availableToNotify: split(avail, commit),
    notifyToFundingStepStart: split(commit, stepStart),
    fundingStepStartToCommitSeen: split(stepStart, seen),
    ...(BREAKDOWN ? { availableToPonderHead: split(avail, head), ponderHeadToNotify: split(head, commit) } : {}),
  };
  const sortedLags = [...lags].sort((a, b) => a - b);
  return {
    createsPerSecond: rate,
    driver: JSON.parse(driverOut.trim().split("\n").at(-1) || "{}"),
    payments: ids.length,
    funded: funded.length,
    blockToFundedMs: { p50: round(percentile(ms, 50), 1), p99: round(percentile(ms, 99), 1), max: round(ms.at(-1) ?? NaN, 1) },
    breakdownMs,
    lagBlocks: { p50: percentile(sortedLags, 50), max: sortedLags.at(-1) ?? null },
    indexerRssMb: { max: rss.length ? Math.max(...rss) : null, last: rss.at(-1) ?? null },
    apiRssMb: rssMb(serviceProcess.pid),
    // Cores each process used on average over the phase (CPU seconds ÷ wall seconds).
    coresUsed: Object.fromEntries(Object.entries(cpu0).map(([k, v]) => [k, round(((cpu1 as Record<string, number>)[k]! - v) / ((tCpu1 - tCpu0) / 1000), 2)])),
  };
}

/** The merchant's own payer (anvil's second account: its own nonces, apart from the bench's sender). */
const MERCHANT_PAYER = ANVIL_ACCOUNTS[1];
const MERCHANT_SECONDS = Number(process.env.BENCH_MERCHANT_SECONDS ?? 30);
const MERCHANT_ROUNDS = Number(process.env.BENCH_MERCHANT_ROUNDS ?? 3);
const MERCHANT_POLL_MS = Number(process.env.BENCH_MERCHANT_POLL_MS ?? 10);
const MERCHANT_LOAD = Number(process.env.BENCH_MERCHANT_LOAD ?? 1000);

/**
 * Detection as a merchant's server sees it: bench/detection-merchant.ts in a process of its own
 * (its own key, its own payer account and receipt, its own polls of GET /payment-sessions/{id}),
 * for MERCHANT_SECONDS, while another merchant's driver creates `rate` sessions a second. Where
 * the time went, from the clocks of the processes (one machine, one wall clock): receipt → the
 * indexer's NOTIFY for the payment's block heard here → the FUNDED step's transaction start (its
 * event's created_at) → the first poll answering FUNDED.
 */
async function merchantPhase(rate: number, merchantKey: string, otherKey: string) {
  await caughtUp();
  const notified = new Map<string, number>();
  const listener = await sql.listen(INDEXED_HEAD_CHANNEL, (payload) => {
    const block = payload.split(":")[1];
    if (block && !notified.has(block)) notified.set(block, Date.now());
  });
  const driver = rate > 0 ? spawn("bun", [join(ROOT, "bench/detection-driver.ts"), serviceUrl, otherKey, String(rate), String(MERCHANT_SECONDS + 3)], { stdio: ["ignore", "pipe", "inherit"] }) : undefined;
  let driverOut = "";
  driver?.stdout.on("data", (d) => (driverOut += d));
  const driverDone = driver ? new Promise((r) => driver.once("exit", r)) : Promise.resolve();
  await Bun.sleep(rate > 0 ? 2000 : 0); // the load running before the first payment
  const lags: number[] = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const [node, [h]] = await Promise.all([clients.publicClient.getBlockNumber({ cacheTime: 0 }), sql`select max(block_number)::text as b from indexer.chain_heads`]);
      lags.push(Math.max(0, Number(node) - Number(h?.b ?? 0)));
      await Bun.sleep(200);
    }
  })();
  const client = spawn(
    "bun",
    [join(ROOT, "bench/detection-merchant.ts"), serviceUrl, merchantKey, chain.rpcUrl, token, MERCHANT_PAYER.privateKey, String(MERCHANT_SECONDS), String(PAY_EVERY_MS), String(MERCHANT_POLL_MS)],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let clientOut = "";
  client.stdout.on("data", (d) => (clientOut += d));
  await new Promise((r) => client.once("exit", r));
  await driverDone;
  sampling = false;
  await sampler;
  await listener.unlisten();
  const { payments, failures } = JSON.parse(clientOut.trim().split("\n").at(-1) || "{}") as { payments: Payment[]; failures: Record<string, number> };
  if (indexerLogFile) for (const p of payments) appendFileSync(indexerLogFile, JSON.stringify({ bench: "merchant", rate, ...p, notifyHeard: notified.get(p.block) }) + "\n");
  const ids = payments.map((p) => p.id);
  const events = ids.length
    ? ((await sql`select session_id, (extract(epoch from created_at) * 1000)::float8 as ms from app.session_events where session_id in ${sql(ids)} and status = 'FUNDED'`) as unknown as { session_id: string; ms: number }[])
    : [];
  const stepAt = new Map(events.map((e) => [e.session_id, Number(e.ms)]));
  const stats = (xs: number[]) => {
    const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
    return s.length ? { n: s.length, p50: round(percentile(s, 50), 1), p90: round(percentile(s, 90), 1), max: round(s.at(-1)!, 1) } : null;
  };
  const part = (f: (p: Payment) => number | undefined) => stats(payments.map((p) => f(p) ?? NaN));
  const sortedLags = [...lags].sort((a, b) => a - b);
  return {
    createsPerSecond: rate,
    driver: driver ? JSON.parse(driverOut.trim().split("\n").at(-1) || "{}") : null,
    payments: payments.length,
    clientFailures: failures,
    receiptToFundedSeenMs: part((p) => p.fundedSeenAt - p.receiptAt),
    breakdownMs: {
      receiptToNotify: part((p) => (notified.has(p.block) ? notified.get(p.block)! - p.receiptAt : undefined)),
      notifyToFundingStepStart: part((p) => (notified.has(p.block) && stepAt.has(p.id) ? stepAt.get(p.id)! - notified.get(p.block)! : undefined)),
      fundingStepStartToFundedPollSent: part((p) => (stepAt.has(p.id) ? p.fundedPollSentAt - stepAt.get(p.id)! : undefined)),
      fundedPollAnswerMs: part((p) => p.fundedSeenAt - p.fundedPollSentAt),
    },
    pollAnswerMs: stats(payments.flatMap((p) => p.answerMs)),
    pollsPerPayment: stats(payments.map((p) => p.polls)),
    lagBlocks: { p50: percentile(sortedLags, 50), max: sortedLags.at(-1) ?? null },
    /** The machine's 1-minute load average at the phase's end: other work on a shared machine shows here. */
    loadAverage: round(loadavg()[0]!, 1),
  };
}

/** MERCHANT_ROUNDS rounds of idle then loaded (alternated: the shared machine's drift touches both alike), and the ratio of their p50s. */
async function measureMerchantView() {
  const other = await createMerchant(database.db, "Other merchants");
  const { secret: otherKey } = await createApiKey(database.db, other.id, "sandbox", "bench load");
  const shop = await createMerchant(database.db, "Merchant");
  const { secret: merchantKey } = await createApiKey(database.db, shop.id, "sandbox", "bench merchant");
  await clients.publicClient.waitForTransactionReceipt({ hash: await send("mint", MERCHANT_PAYER.address, 10n ** 15n), pollingInterval: 2 });
  const rounds: { idle: Awaited<ReturnType<typeof merchantPhase>>; loaded: Awaited<ReturnType<typeof merchantPhase>> }[] = [];
  for (let i = 0; i < MERCHANT_ROUNDS; i++) {
    const idle = await merchantPhase(0, merchantKey, otherKey);
    console.error(JSON.stringify({ merchantRound: i + 1, idle }));
    const loaded = await merchantPhase(MERCHANT_LOAD, merchantKey, otherKey);
    console.error(JSON.stringify({ merchantRound: i + 1, loaded }));
    rounds.push({ idle, loaded });
  }
  const ratios = rounds.map((r) => round((r.loaded.receiptToFundedSeenMs?.p50 ?? NaN) / (r.idle.receiptToFundedSeenMs?.p50 ?? NaN), 2));
  return {
    settings: { secondsPerPhase: MERCHANT_SECONDS, rounds: MERCHANT_ROUNDS, pollMs: MERCHANT_POLL_MS, payEveryMs: PAY_EVERY_MS, loadCreatesPerSecond: MERCHANT_LOAD },
    rounds: rounds.map((r, i) => ({
      idle: { p50: r.idle.receiptToFundedSeenMs?.p50, p90: r.idle.receiptToFundedSeenMs?.p90, loadAverage: r.idle.loadAverage },
      loaded: { p50: r.loaded.receiptToFundedSeenMs?.p50, p90: r.loaded.receiptToFundedSeenMs?.p90, createdPerSecond: r.loaded.driver?.createdPerSecond, loadAverage: r.loaded.loadAverage },
      ratioP50: ratios[i],
      ratioP90: round((r.loaded.receiptToFundedSeenMs?.p90 ?? NaN) / (r.idle.receiptToFundedSeenMs?.p90 ?? NaN), 2),
    })),
    ratioP50: { min: Math.min(...ratios), max: Math.max(...ratios) },
    goal: { ratioP50: 1.5 },
    pass: ratios.every((x) => x <= 1.5),
    detail: rounds,
  };
}

const out: Record<string, unknown> = {
  cores: { machine: availableParallelism(), note: "the driver, the API (with its runner), the bench (payer and clocks), Postgres, anvil and the indexer each run in processes of their own and share the machine's cores" },
  settings: { secondsPerRate: SECONDS, payEveryMs: PAY_EVERY_MS, indexMode: "bounded", chain: "block per transaction + 1 s heartbeat, one stranger transfer a second", indexer: "defaults (head subscription on the local network)", runner: RUNNER_APART ? "its own process (bun run actors)" : "in the API process, on its own thread (the default)", apiRateLimitPerKey: { perSecond: RATE_LIMIT, burst: 2 * RATE_LIMIT } },
};

/** Start-up and memory with none stored vs STORED stored (rows generated with SQL). */
async function measureStartup(rssIdle: number | null) {
  await indexer.stop();
  const [{ n: before }] = (await sql`select count(*)::int as n from app.session_deposits`) as unknown as [{ n: number }];
  ({ indexer, readySeconds } = await startMeasuredIndexer());
  await Bun.sleep(5000);
  const empty = { sessionsStored: before, startToReadySeconds: readySeconds, rssMbAfter5s: rssMb(indexer.pid) };
  await indexer.stop();
  const tGen = performance.now();
  await sql.begin(async (tx) => {
    await tx`set local synchronous_commit = off`;
    await tx`set local statement_timeout = 0`; // the service pool bounds statements to a request's length
    await tx`insert into app.payment_sessions (id, merchant_id, environment, status, status_reason, amount_minor, currency, expires_at, token_hash, token_expires_at)
             select 'ps_gen' || i, ${merchant.id}, 'sandbox', 'PENDING', 'created', 100, 'USD', now() + interval '1 day', 'gen' || i, now() + interval '1 day' from generate_series(1, ${STORED}) i`;
    await tx`insert into app.session_deposits (session_id, chain_id, address, settlement_address, token_address, decimals, required_base_units, confirmations)
             select 'ps_gen' || i, 31337, '0xee' || lpad(to_hex(i), 38, '0'), ${"0x" + "11".repeat(20)}, ${token.toLowerCase()}, 6, 1000000, 1 from generate_series(1, ${STORED}) i`;
  });
  const generateSeconds = round((performance.now() - tGen) / 1000, 1);
  ({ indexer, readySeconds } = await startMeasuredIndexer());
  await Bun.sleep(5000);
  const [{ n: after }] = (await sql`select count(*)::int as n from app.session_deposits`) as unknown as [{ n: number }];
  const full = { sessionsStored: after, startToReadySeconds: readySeconds, rssMbAfter5s: rssMb(indexer.pid), rowsGeneratedInSeconds: generateSeconds };
  return { rssMbIdleAtStart: rssIdle, empty, full, rssDifferenceMb: full.rssMbAfter5s !== null && empty.rssMbAfter5s !== null ? round(full.rssMbAfter5s - empty.rssMbAfter5s, 1) : null };
}

/** Catch-up: BACKLOG blocks, each with a transfer, mined while the indexer is stopped. */
async function measureCatchUp() {
  await indexer.stop();
  background = false;
  await backgroundLoop;
  const [{ b: from }] = (await sql`select max(block_number)::text as b from indexer.chain_heads`) as unknown as [{ b: string }];
  for (let i = 0; i < BACKLOG; i++) await send("mint", stranger(), 1n); // automine: a block each
  const target = await clients.publicClient.getBlockNumber({ cacheTime: 0 });
  const t0 = performance.now();
  const restarted = await startIndexer({ databaseUrl: pg.url, port: await freePort(), env, onLog: BREAKDOWN || indexerLogFile ? onIndexerLog : undefined });
  indexer = restarted;
  for (;;) {
    const [{ b }] = (await sql`select coalesce(max(block_number), 0)::text as b from indexer.chain_heads`) as unknown as [{ b: string }];
    if (BigInt(b) >= target) break;
    await Bun.sleep(50);
  }
  const seconds = (performance.now() - t0) / 1000;
  const blocks = Number(target) - Number(from);
  return { blocksBehind: blocks, transfersPerBlock: 1, secondsFromSpawn: round(seconds, 2), blocksPerSecond: round(blocks / seconds, 1), timesRealTimeAt1sBlocks: round(blocks / seconds, 1) };
}

try {
  const rssIdle = rssMb(indexer.pid);
  out.rates = [];
  for (const rate of PARTS.has("rates") ? RATES : []) {
    const r = await phase(rate);
    (out.rates as unknown[]).push({ ...r, payerCreateRefusals });
    payerCreateRefusals = {};
    console.error(JSON.stringify(r)); // progress, should a later step fail
  }
  if (PARTS.has("merchant")) out.merchantView = await measureMerchantView();
  if (PARTS.has("startup")) out.startup = await measureStartup(rssIdle);
  if (PARTS.has("catchup")) out.catchUp = await measureCatchUp();
} finally {
  background = false;
  await backgroundLoop.catch(() => {});
  await indexer.stop().catch(() => {});
  serviceProcess.kill("SIGTERM");
  runnerProcess?.kill("SIGTERM");
  await serviceProcess.exited;
  await runnerProcess?.exited;
  await database.close();
  await chain.stop();
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
}
console.log(JSON.stringify(out));
