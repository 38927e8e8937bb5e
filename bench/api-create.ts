/**
 * POST /payment-sessions at 50 concurrent connections for ~10 s, against the service
 * running as its own process; then, in the same run and on the same database, the floor:
 * the same rows (a session and its first event) inserted with postgres.js directly, no
 * HTTP, at the same concurrency, one statement per create; and a bare single-row insert
 * (autocommit) at the same concurrency; and creates with an Idempotency-Key each (as sdk/server
 * sends them), held to the same bare-floor goal. Prints JSON, with how many creates shared a statement under group commit
 * (api/src/db/group.ts; from the service's /metrics), how many key lookups a create made
 * (none once its key was looked up: api/src/credentials/key-memo.ts), and the CPU
 * each process spent per create (cpuPerCreateUs: service, Postgres, and this driver). Goals: ≥ 0.5× the same-rows floor, ≥ 0.35× the bare floor, p99 ≤ 25 ms.
 *   BENCH_SECONDS (default 10), BENCH_CONCURRENCY (default 50); SERVICE_DB_POOL_SIZE is passed
 *   on to the service (its Postgres pool; default 20) and printed as servicePool.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmbeddedPostgres } from "../api/src/db/embedded.ts";
import { connect } from "../api/src/db/client.ts";
import { migrate } from "../api/src/db/migrate.ts";
import { createApiKey, createMerchant } from "../api/src/credentials/store.ts";
import { insertSession } from "../api/src/sessions/create/statement.ts";
import { newId } from "../shared/ids.ts";
import { planDeposits } from "../api/src/sessions/deposits.ts";
import { DEFAULT_SANDBOX_SETTLEMENT } from "../api/src/config.ts";
import { loadChainsConfig } from "../shared/chains/config.ts";
import { freePort } from "../testing/ports.ts";
import { startTestChain } from "../testing/indexer-stack.ts";
import { closedLoop, cpuSeconds, postgresCpu, round, startServiceProcess } from "./lib.ts";

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 50);
const dir = mkdtempSync(join(tmpdir(), "paysession-bench-"));
const pg = await startEmbeddedPostgres({ dataDir: join(dir, "pg"), port: await freePort(), persistent: false });
const database = connect(pg.url, { max: 20 });
await migrate(database.sql);
const merchant = await createMerchant(database.db, "Bench");
const { secret } = await createApiKey(database.db, merchant.id, "sandbox", "bench");

// Sessions need a ready network (the service checks it at start: RPC, token, factory), so a
// local chain with them deployed; creating a session never contacts it, and no indexer, sweeper
// or runner is started.
const chain = await startTestChain("local");
const CHAIN_ENV = { SERVICE_RPC_URL_LOCAL: chain.chain.rpcUrl, SERVICE_INDEXER: "false", SERVICE_SWEEPER: "false", SERVICE_SESSION_RUNNER: "false" };
const networks = loadChainsConfig(CHAIN_ENV).networks;

let service: Awaited<ReturnType<typeof startServiceProcess>> | undefined;
try {
  service = await startServiceProcess(pg.url, { ...CHAIN_ENV, SERVICE_METRICS_TOKEN: "bench-metrics-token" });
  const { proc: server, url } = service;
  const body = JSON.stringify({ amount: "12.34", currency: "USD", metadata: { orderId: "bench" } });
  const headers = { authorization: `Bearer ${secret}`, "content-type": "application/json" };
  const post = async () => {
    const r = await fetch(`${url}/payment-sessions`, { method: "POST", headers, body });
    await r.arrayBuffer();
    return r.status === 201;
  };
  await closedLoop(concurrency, 1, post); // warm-up: JIT, prepared statements, connections
  const grouped = async () => {
    const text = await fetch(`${url}/metrics`, { headers: { authorization: "Bearer bench-metrics-token" } }).then((r) => r.text());
    const read = (name: string, group: string) => Number(new RegExp(`${name}\\{group="${group}"\\} (\\d+)`).exec(text)?.[1] ?? NaN);
    return (group: string) => ({ batches: read("paysession_group_batches_total", group), items: read("paysession_group_items_total", group) });
  };
  const g0 = await grouped();
  // CPU per create by process: steadier than the rate on a shared machine, where what else runs
  // moves the rate by a quarter from run to run.
  const cpu = () => ({ service: cpuSeconds(server.pid), postgres: pg.pid ? postgresCpu(pg.pid) : NaN, driver: cpuSeconds(process.pid) });
  const c0 = cpu();
  const http = await closedLoop(concurrency, seconds, post);
  const c1 = cpu();
  const g1 = await grouped();
  const cpuPerCreateUs = Object.fromEntries(Object.entries(c0).map(([k, v]) => [k, Math.round((((c1 as Record<string, number>)[k]! - v) / http.ops) * 1e6)]));
  // The same with an Idempotency-Key on every create, as the typed server client (sdk/server)
  // sends: the same group and statement, which also writes each key's record.
  const keyed = async () => {
    const r = await fetch(`${url}/payment-sessions`, { method: "POST", headers: { ...headers, "idempotency-key": crypto.randomUUID() }, body });
    await r.arrayBuffer();
    return r.status === 201;
  };
  await closedLoop(concurrency, 1, keyed);
  const k0 = await grouped();
  const httpIdempotent = await closedLoop(concurrency, seconds, keyed);
  const k1 = await grouped();
  const keyedPerStatement = round((k1("creates").items - k0("creates").items) / (k1("creates").batches - k0("creates").batches), 1);
  const keyedLookups = k1("api_key_lookups").items - k0("api_key_lookups").items;
  // Group commit (api/src/db/group.ts): how many requests shared a statement, on average.
  const perStatement = (group: string) => round((g1(group).items - g0(group).items) / (g1(group).batches - g0(group).batches), 1);
  // Creates reuse their key's last lookup (api/src/credentials/key-memo.ts): ≈ 0 lookups a create.
  const keyLookups = g1("api_key_lookups").items - g0("api_key_lookups").items;
  const grouping = { createsPerStatement: perStatement("creates"), keyLookupsPerCreate: round(keyLookups / http.ops, 4) };

  const input = { amountMinor: 1234n, currency: "USD" as const, metadata: { orderId: "bench" }, referenceId: null, expiresInSeconds: 1800 };
  // The floor writes the same rows as the API: the session, its first event, its deposit
  // addresses (computed the same way) and their watched-address registrations.
  const direct = () => {
    const id = newId("paymentSession");
    const plan = planDeposits({ sessionId: id, environment: "sandbox", amountMinor: input.amountMinor, networks, settlements: new Map(), defaultSettlement: DEFAULT_SANDBOX_SETTLEMENT });
    if (!plan.ok) throw new Error(plan.problem);
    return insertSession(database.sql, { id, deposits: plan.deposits, merchantId: merchant.id, environment: "sandbox", input, tokenGraceSeconds: 3600 }).then(() => true);
  };
  await closedLoop(concurrency, 1, direct);
  const floor = await closedLoop(concurrency, seconds, direct);

  // The bare floor: one single-row insert per call (autocommit), same connections.
  await database.sql`create table if not exists public.bench_bare (id text primary key, amount bigint not null, created_at timestamptz not null default now())`;
  const bare = () => database.sql`insert into public.bench_bare (id, amount) values (${newId("paymentSession")}, 1234)`.then(() => true);
  await closedLoop(concurrency, 1, bare);
  const bareFloor = await closedLoop(concurrency, seconds, bare);

  const ratio = round(http.perSecond / floor.perSecond, 3);
  const bareRatio = round(http.perSecond / bareFloor.perSecond, 3);
  const keyedBareRatio = round(httpIdempotent.perSecond / bareFloor.perSecond, 3);
  console.log(
    JSON.stringify({
      bench: "api-create",
      concurrency,
      seconds,
      servicePool: Number(process.env.SERVICE_DB_POOL_SIZE ?? 20),
      http,
      cpuPerCreateUs,
      grouping,
      httpIdempotent: { ...httpIdempotent, createsPerStatement: keyedPerStatement, keyLookupsPerCreate: round(keyedLookups / httpIdempotent.ops, 4), bareRatio: keyedBareRatio },
      floor,
      bareFloor,
      ratio,
      bareRatio,
      cores: navigator.hardwareConcurrency,
      goals: { ratio: 0.5, bareRatio: 0.35, p99Ms: 25 },
      pass: { ratio: ratio >= 0.5, bareRatio: bareRatio >= 0.35, keyedBareRatio: keyedBareRatio >= 0.35, p99: http.p99Ms <= 25 },
    }),
  );
} finally {
  service?.proc.kill("SIGTERM");
  await service?.proc.exited;
  await database.close();
  await pg.stop();
  await chain.chain.stop();
  rmSync(dir, { recursive: true, force: true });
}
