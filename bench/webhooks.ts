import { newId } from "../shared/ids.ts";
/**
 * Webhook delivery figures, against the delivery worker running as its own process
 * (api/src/webhooks/main.ts, the same code the API process runs) and a local receiver
 * (Bun.serve in this process), on an embedded Postgres of its own:
 *   1. throughput: a backlog of BENCH_BACKLOG events (one endpoint) is written first, then the
 *      worker starts; deliveries/s = deliveries between the first and the last arrival / time.
 *   2. latency: status changes committed at BENCH_RATE/s (half creations, half cancels) for
 *      BENCH_SECONDS; for each, commit (the writer's await returned) → received by the endpoint.
 * Prints one JSON line. Goal: ≥ 2,000 deliveries/s; p99 ≤ 100 ms at 200 events/s.
 *   BENCH_BACKLOG (default 20000), BENCH_RATE (200), BENCH_SECONDS (10)
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startEmbeddedPostgres } from "../api/src/db/embedded.ts";
import { connect } from "../api/src/db/client.ts";
import { migrate } from "../api/src/db/migrate.ts";
import { createMerchant } from "../api/src/credentials/store.ts";
import { transitionSession } from "../api/src/sessions/repository.ts";
import { insertSession } from "../api/src/sessions/create/statement.ts";
import { createEndpoint } from "../api/src/webhooks/endpoints.ts";
import { freePort } from "../testing/ports.ts";
import { percentile, round } from "./lib.ts";

const backlog = Number(process.env.BENCH_BACKLOG ?? 20_000);
const rate = Number(process.env.BENCH_RATE ?? 200);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);

const dir = mkdtempSync(join(tmpdir(), "paysession-bench-webhooks-"));
const pg = await startEmbeddedPostgres({ dataDir: join(dir, "pg"), port: await freePort(), persistent: false });
const database = connect(pg.url, { max: 20 });
await migrate(database.sql);
const encryptionKey = randomBytes(32);

// The merchant's endpoint: answers 200 at once, notes when each (session, sequence) arrived.
const arrivals = new Map<string, number>();
let received = 0;
let firstAt = 0;
let lastAt = 0;
const receiver = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    const body = (await req.json()) as { data: { paymentSessionId: string; sequence: number } };
    const now = performance.now();
    received++;
    if (!firstAt) firstAt = now;
    lastAt = now;
    const k = `${body.data.paymentSessionId}:${body.data.sequence}`;
    if (!arrivals.has(k)) arrivals.set(k, now);
    return new Response("ok");
  },
});

const merchant = await createMerchant(database.db, "Bench");
await createEndpoint(database.sql, encryptionKey, {
  merchantId: merchant.id,
  environment: "sandbox",
  url: `http://127.0.0.1:${receiver.port}/webhooks`,
  description: "bench",
  enabled: true,
});
const input = { amountMinor: 1234n, currency: "USD" as const, metadata: { orderId: "bench" }, referenceId: null, expiresInSeconds: 1800 };
const create = () => insertSession(database.sql, { id: newId("paymentSession"), deposits: [], merchantId: merchant.id, environment: "sandbox", input, tokenGraceSeconds: 3600 });

// 1. the backlog, written before any worker runs
const queue = Array.from({ length: backlog }, (_, i) => i);
await Promise.all(
  Array.from({ length: 20 }, async () => {
    while (queue.pop() !== undefined) await create();
  }),
);

const worker = Bun.spawn(["bun", resolve(import.meta.dir, "../api/src/webhooks/main.ts")], {
  // The receiver is on loopback, which the worker refuses unless told (as `bun run dev` tells it).
  env: { ...process.env, DATABASE_URL: pg.url, SERVICE_ENCRYPTION_KEY: encryptionKey.toString("base64"), SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: "true" },
  stdout: "ignore",
  stderr: "inherit",
});

try {
  const deadline = performance.now() + 120_000;
  while (received < backlog && performance.now() < deadline) await Bun.sleep(20);
  if (received < backlog) throw new Error(`only ${received} of ${backlog} backlog deliveries arrived`);
  const throughput = {
    deliveries: backlog,
    seconds: round((lastAt - firstAt) / 1000, 3),
    perSecond: round((backlog - 1) / ((lastAt - firstAt) / 1000), 1),
  };

  // 2. latency at a steady rate: every 1/rate s one status change (a creation, or a cancel of the previous creation)
  const commits = new Map<string, number>();
  const pending: Promise<void>[] = [];
  let lastCreated: string | undefined;
  const t0 = performance.now();
  const total = rate * seconds;
  for (let i = 0; i < total; i++) {
    const at = t0 + (i * 1000) / rate;
    const wait = at - performance.now();
    if (wait > 0) await Bun.sleep(wait);
    if (i % 2 === 0 || !lastCreated) {
      pending.push(
        create().then(({ row }) => {
          commits.set(`${row.id}:1`, performance.now());
          lastCreated = row.id;
        }),
      );
    } else {
      const id = lastCreated;
      lastCreated = undefined;
      pending.push(
        transitionSession(database.sql, { sessionId: id, from: ["PENDING"], to: "CANCELED", reason: "canceled_by_merchant" }).then((row) => {
          if (row) commits.set(`${id}:2`, performance.now());
        }),
      );
    }
  }
  await Promise.all(pending);
  const end = performance.now() + 10_000;
  while ([...commits.keys()].some((k) => !arrivals.has(k)) && performance.now() < end) await Bun.sleep(20);
  const latencies = [...commits].filter(([k]) => arrivals.has(k)).map(([k, c]) => Math.max(0, arrivals.get(k)! - c)).sort((a, b) => a - b);
  const latency = {
    ratePerSecond: rate,
    seconds,
    events: commits.size,
    missing: commits.size - latencies.length,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: round(latencies.at(-1) ?? NaN),
  };
  console.log(
    JSON.stringify({
      bench: "webhooks",
      throughput,
      latency,
      goals: { perSecond: 2000, p99Ms: 100 },
      pass: { throughput: throughput.perSecond >= 2000, p99: latency.missing === 0 && latency.p99Ms <= 100 },
    }),
  );
} finally {
  worker.kill("SIGTERM");
  await worker.exited;
  await receiver.stop(true);
  await database.close();
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
}
