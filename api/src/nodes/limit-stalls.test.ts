/**
 * The per-key limit shared by three real API processes (`bun api/src/main.ts`, one database)
 * while the event loop of one of them stalls, beside a CPU hog (a process burning a core for the
 * whole run). The stall is made exact — the process group stopped (SIGSTOP) for 2 s every 4 s —
 * because a hog alone stalls a loop only as long as the kernel's scheduler lets it (a quarter of a
 * second here, even with the API process at idle priority on the hog's core), and a test must be
 * able to fail. A key is hammered round-robin over the three (as a balancer spreads it, requests
 * queue at the stalled one) at 10, 50 and 1,000 requests a second, with a burst of half a second:
 * the service must admit burst + rate × seconds within ±10 %. Before the limiter knew its loop's
 * stalls (http/loop-stalls.ts), the stalled process refilled its share only up to its burst across
 * each stall and lost the rest while the other two refused: −21 %, −19 %, −14 %.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { createTestDatabase } from "../../../testing/database.ts";
import { freePort } from "../../../testing/ports.ts";
import { childEnv, groupProcess, waitHealthy, type GroupProcess } from "../../../testing/suite-processes.ts";
import { hammerFromChild } from "../../../testing/limit-hammer.ts";
import { eventually } from "../../../testing/eventually.ts";
import { connect, type Database } from "../db/client.ts";
import { createApiKey, createMerchant } from "../credentials/store.ts";
import { BEAT_MS } from "./registry.ts";
import { messageOf } from "../../../shared/describe-error.ts";

/** Bursts of half a second of the rate: a 2-s stall is four bursts long. */
const LIMITS = [
  { perSecond: 10, burst: 5 },
  { perSecond: 50, burst: 25 },
  { perSecond: 1000, burst: 500 },
];
const HAMMER_MS = 6_000;
/** Burns a core for the whole run. */
const HOG = "for (;;);";
const STALL_MS = 2_000;
const STALL_EVERY_MS = 4_000;
/** A malformed session id: the limiter counts the request, then it is answered 404 without a read. */
const PATH = "/payment-sessions/not-a-session";

interface Cluster {
  apis: GroupProcess[];
  urls: string[];
  database: Database;
  key: string;
  warmKey: string;
  drop(): Promise<void>;
}
const clusters: Cluster[] = [];
const hogs: GroupProcess[] = [];

/**
 * Stops `proc`'s process group for STALL_MS every STALL_EVERY_MS until `signal` aborts (then lets it
 * run): its event loop stalls as it does on a host that starves it — a paused VM, a throttled
 * cgroup, a neighbour holding the core — for as long as we say.
 */
async function stallRepeatedly(proc: GroupProcess, signal: AbortSignal): Promise<void> {
  const group = -proc.pid()!;
  const aborted = new Promise<void>((r) => signal.addEventListener("abort", () => r(), { once: true }));
  const sleep = (ms: number) => Promise.race([Bun.sleep(ms), aborted]);
  try {
    while (!signal.aborted) {
      process.kill(group, "SIGSTOP");
      await sleep(STALL_MS);
      process.kill(group, "SIGCONT");
      await sleep(STALL_EVERY_MS - STALL_MS);
    }
  } finally {
    process.kill(group, "SIGCONT");
  }
}

async function startCluster(limit: (typeof LIMITS)[number], name: string): Promise<Cluster> {
  const tdb = await createTestDatabase();
  const ports = [await freePort(), await freePort(), await freePort()];
  const env = childEnv({
    DATABASE_URL: tdb.url,
    SERVICE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
    SERVICE_RATE_LIMIT_PER_SECOND: String(limit.perSecond),
    SERVICE_RATE_LIMIT_BURST: String(limit.burst),
    SERVICE_SESSION_RUNNER: "false",
    SERVICE_SWEEPER: "false",
    SERVICE_WEBHOOK_WORKER: "false",
    SERVICE_INDEXER: "false",
    SERVICE_RPC_URL_LOCAL: "",
  });
  const apis = ports.map((port, i) => groupProcess(`${name}-api-${i + 1}`, ["api/src/main.ts"], { ...env, SERVICE_PORT: String(port), SERVICE_PUBLIC_URL: `http://127.0.0.1:${port}` }));
  for (const p of apis) p.start();
  const urls = ports.map((p) => `http://127.0.0.1:${p}`);
  await Promise.all(apis.map((p, i) => waitHealthy(p, `${urls[i]}/healthz`, 60_000)));
  const database = connect(tdb.url, { max: 1 });
  const merchant = await createMerchant(database.db, `Limit ${name}`);
  const key = (await createApiKey(database.db, merchant.id, "sandbox", "hammered")).secret;
  const warmKey = (await createApiKey(database.db, merchant.id, "sandbox", "warm-up")).secret;
  return { apis, urls, database, key, warmKey, drop: tdb.drop };
}

beforeAll(async () => {
  // The three clusters start together (each on its own database: N counts a database's API processes).
  clusters.push(...(await Promise.all(LIMITS.map((l) => startCluster(l, `${l.perSecond}/s`)))));
  // Every process has counted the other two at a beat of its own.
  for (const c of clusters) {
    const count = async () => (await c.database.sql`select count(*)::int as n from app.nodes where 'api' = any(roles)`)[0]?.n;
    await eventually(async () => (await count()) === 3, "three API nodes registered", 30_000).catch(async (e) => {
      throw new Error(`${messageOf(e)} (${await count()} registered):\n${c.apis.map((p) => p.log()).join("\n")}`, { cause: e });
    });
  }
  await Bun.sleep(BEAT_MS + 500);
}, 120_000);

afterAll(async () => {
  await Promise.all([...hogs, ...clusters.flatMap((c) => c.apis)].map((p) => p.stop()));
  for (const c of clusters) {
    await c.database.close();
    await c.drop().catch(() => {});
  }
}, 30_000);

for (const [i, limit] of LIMITS.entries()) {
  test(`${limit.perSecond}/s, burst ${limit.burst}, one of three API processes stalled by a CPU hog: burst + rate × seconds admitted (±10 %)`, async () => {
    const c = clusters[i]!;
    // Connections open before the clock starts (with another key): opening them on a loaded host
    // would delay the first requests, and the limiter would be blamed for the hammer's slow start.
    await Promise.all(c.urls.flatMap((u) => Array.from({ length: 20 }, () => fetch(`${u}${PATH}`, { headers: { authorization: `Bearer ${c.warmKey}` } }).then((r) => r.arrayBuffer()))));
    const hog = groupProcess("cpu-hog", ["-e", HOG], childEnv({}));
    hogs.push(hog);
    hog.start();
    await eventually(() => hog.pid() !== undefined, "the hog started");
    const stalls = new AbortController();
    const stalling = stallRepeatedly(c.apis[0]!, stalls.signal);
    let result;
    try {
      // Offered well over the limit (at 1,000/s, a quarter over: what this machine can send and serve).
      result = await hammerFromChild({ urls: c.urls, path: PATH, key: c.key, rate: limit.perSecond * (limit.perSecond >= 1000 ? 1.25 : 3), ms: HAMMER_MS, admittedStatus: 404 });
    } finally {
      stalls.abort();
      await stalling;
      await hog.stop(0);
    }
    const expected = limit.burst + limit.perSecond * result.seconds;
    const summary = `${result.admitted} admitted (by process: ${result.admittedBy.join(", ")}) of ${result.sent} sent, ${result.refused} refused, other answers ${JSON.stringify(result.odd)} ${JSON.stringify(result.firstOdd)}, expected ${expected.toFixed(0)} ± 10 %`;
    expect(result.odd, summary).toEqual({});
    expect(result.refused, summary).toBeGreaterThan(0);
    expect(result.admitted, summary).toBeGreaterThanOrEqual(Math.floor(expected * 0.9));
    expect(result.admitted, summary).toBeLessThanOrEqual(Math.ceil(expected * 1.1));
  }, 60_000);
}
