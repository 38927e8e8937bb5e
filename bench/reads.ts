/**
 * The two reads that poll: a merchant's retrieve (GET /payment-sessions/{id}, API key) and the
 * payer's read (GET /api/payment-sessions, session token; the checkout polls it twice a second
 * per open checkout). Against the service in its own process (as bench/api-create.ts starts it),
 * N sequential requests of each, one at a time, idle and then while bench/detection-driver.ts
 * (a process of its own) creates sessions at a steady rate; `GET /healthz` the same way in the
 * same run as the floor (the HTTP stack and a loopback round trip, no database). Prints one JSON
 * line with p50/p99 of each. Goal: retrieve and payer read p50 ≤ 3 ms idle.
 *   BENCH_READS (default 2,000 per figure), BENCH_LOAD_RATE (creates/s, default 1,000),
 *   BENCH_API_MAIN (the service's main.ts to run: another build, for before/after pairs).
 * The service runs without indexer, so the payer read finds no indexed transfers (the indexer's
 * tables absent): the statement that reads them is not part of this figure.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { spawn } from "node:child_process";
import { startEmbeddedPostgres } from "../api/src/db/embedded.ts";
import { connect } from "../api/src/db/client.ts";
import { migrate } from "../api/src/db/migrate.ts";
import { createApiKey, createMerchant } from "../api/src/credentials/store.ts";
import { freePort } from "../testing/ports.ts";
import { startTestChain } from "../testing/indexer-stack.ts";
import { percentile, round, startServiceProcess } from "./lib.ts";

const N = Number(process.env.BENCH_READS ?? 2000);
const LOAD_RATE = Number(process.env.BENCH_LOAD_RATE ?? 1000);
const MAIN = resolve(process.env.BENCH_API_MAIN ?? resolve(import.meta.dir, "../api/src/main.ts"));
const dir = mkdtempSync(join(tmpdir(), "paysession-bench-"));
const pg = await startEmbeddedPostgres({ dataDir: join(dir, "pg"), port: await freePort(), persistent: false });
const database = connect(pg.url, { max: 4 });
await migrate(database.sql);
const merchant = await createMerchant(database.db, "Bench");
const { secret } = await createApiKey(database.db, merchant.id, "sandbox", "bench");
// The load's creates use a key of their own: its rate limit and lookups are not the reader's.
const { secret: loadSecret } = await createApiKey(database.db, merchant.id, "sandbox", "bench load");

const chain = await startTestChain("local");
const CHAIN_ENV = { SERVICE_RPC_URL_LOCAL: chain.chain.rpcUrl, SERVICE_INDEXER: "false", SERVICE_SWEEPER: "false", SERVICE_SESSION_RUNNER: "false" };

/** `count` requests one after another: each one's time, for the answers with `status`. */
async function timeSequential(count: number, request: (i: number) => Promise<Response>, status: number) {
  const ms: number[] = [];
  let failures = 0;
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    const r = await request(i);
    await r.arrayBuffer();
    const t = performance.now() - t0;
    if (r.status === status) ms.push(t);
    else failures++;
  }
  return { ms, failures };
}

let service: Awaited<ReturnType<typeof startServiceProcess>> | undefined;
try {
  service = await startServiceProcess(pg.url, CHAIN_ENV, MAIN);
  const { url } = service;
  const keyHeaders = { authorization: `Bearer ${secret}` };
  // Sessions to read, each with its token; the retrieves and payer reads go round them.
  const sessions: { id: string; token: string }[] = [];
  for (let i = 0; i < 50; i++) {
    const r = await fetch(`${url}/payment-sessions`, {
      method: "POST",
      headers: { ...keyHeaders, "content-type": "application/json" },
      body: JSON.stringify({ amount: "12.34", currency: "USD", metadata: { orderId: `bench-${i}` } }),
    });
    const s = (await r.json()) as { paymentSessionId: string; paymentSessionToken: string };
    if (r.status !== 201) throw new Error(`create: ${r.status} ${JSON.stringify(s)}`);
    sessions.push({ id: s.paymentSessionId, token: s.paymentSessionToken });
  }
  const at = (i: number) => sessions[i % sessions.length]!;
  const figures = (count: number) => ({
    healthz: () => timeSequential(count, () => fetch(`${url}/healthz`), 200),
    retrieve: () => timeSequential(count, (i) => fetch(`${url}/payment-sessions/${at(i).id}`, { headers: keyHeaders }), 200),
    // As the checkout polls: unconditional (a first read; a 304 costs the same work in the service).
    payerRead: () => timeSequential(count, (i) => fetch(`${url}/api/payment-sessions`, { headers: { authorization: `Bearer ${at(i).token}` } }), 200),
    notFound: () => timeSequential(count, () => fetch(`${url}/payment-sessions/ps_${"0".repeat(24)}`, { headers: keyHeaders }), 404),
  });
  /** Every figure, `count` requests each, interleaved in rounds so that drift touches each alike. */
  const measureAll = async (count: number) => {
    const rounds = 4;
    const all: Record<string, { ms: number[]; failures: number }> = {};
    for (let r = 0; r < rounds; r++) {
      for (const [name, run] of Object.entries(figures(Math.ceil(count / rounds)))) {
        const res = await run();
        (all[name] ??= { ms: [], failures: 0 }).ms.push(...res.ms);
        all[name]!.failures += res.failures;
      }
    }
    const out: Record<string, { n: number; failures: number; p50Ms: number; p99Ms: number }> = {};
    for (const [name, { ms, failures }] of Object.entries(all)) {
      ms.sort((a, b) => a - b);
      out[name] = { n: ms.length, failures, p50Ms: percentile(ms, 50), p99Ms: percentile(ms, 99) };
    }
    return out;
  };
  await measureAll(400); // warm-up: JIT, prepared statements, connections
  const idle = await measureAll(N);

  const driver = spawn("bun", [resolve(import.meta.dir, "detection-driver.ts"), url, loadSecret, String(LOAD_RATE), "600"], { stdio: ["ignore", "pipe", "inherit"] });
  let driverOut = "";
  driver.stdout.on("data", (d) => (driverOut += d));
  const driverDone = new Promise((r) => driver.once("exit", r));
  await Bun.sleep(2000); // the load settles
  const t0 = performance.now();
  const c0 = await createdCount();
  const loaded = await measureAll(N);
  const createdPerSecond = round(((await createdCount()) - c0) / ((performance.now() - t0) / 1000), 0);
  driver.kill("SIGTERM");
  await driverDone;
  void driverOut;

  const goal = 3;
  console.log(
    JSON.stringify({
      bench: "reads",
      n: N,
      idle,
      underLoad: { loadRate: LOAD_RATE, createdPerSecond, ...loaded },
      cores: navigator.hardwareConcurrency,
      goals: { idleP50Ms: goal },
      pass: { retrieve: idle.retrieve!.p50Ms <= goal, payerRead: idle.payerRead!.p50Ms <= goal },
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

/** The sessions stored so far (the load's creates among them). */
async function createdCount(): Promise<number> {
  const [r] = await database.sql`select count(*)::int as n from app.payment_sessions`;
  return r!.n as number;
}

