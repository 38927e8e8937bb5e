/**
 * Postgres killed (-9, the server and its backends) under steady create traffic: every
 * request answers within a bound with 201 or 503 + Retry-After (never a 500, never a hang),
 * /readyz says 503 within a second, the supervised embedded Postgres comes back, requests
 * succeed again within about two seconds, and nothing acknowledged is lost — nor anything
 * answered 503 committed behind the client's back.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "./embedded.ts";
import { freePort } from "../../../testing/ports.ts";
import { loadConfig } from "../config.ts";
import { startService, type RunningService } from "../server.ts";
import { TEST_CHAIN_ENV } from "../../../testing/service.ts";
import { loadChainsConfig } from "../../../shared/chains/config.ts";
import { NetworkReadiness } from "../onchain/network-status.ts";
import { createApiKey, createMerchant } from "../credentials/store.ts";
import { isDatabaseUnavailable, Outage } from "./outage.ts";

const REQUEST_TIMEOUT_MS = 1500;
const dir = mkdtempSync(join(tmpdir(), "paysession-outage-"));
let pg: EmbeddedDatabase | undefined;
let service: RunningService | undefined;
afterAll(async () => {
  await service?.stop().catch(() => {});
  await pg?.stop().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
}, 30_000); // a loaded machine stops a service and a Postgres slowly

/** kill -9 the postmaster and its children (the backends), as an OOM killer or a crash would. */
function killServer(pid: number): void {
  const children: number[] = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid) children.push(Number(d));
    } catch {
      // gone already
    }
  }
  process.kill(pid, "SIGKILL");
  for (const c of children) {
    try {
      process.kill(c, "SIGKILL");
    } catch {
      // gone already
    }
  }
}

interface Shot {
  i: number;
  key: string;
  ref: string;
  sentAt: number;
  ms: number;
  status: number | "timeout" | "error";
  retryAfter: string | null;
  code?: string;
  id?: string;
}

test("a database killed mid-traffic: bounded answers (201 or 503), readyz 503 fast, recovery, nothing lost", async () => {
  const lines: string[] = [];
  const log = (l: string) => lines.push(l);
  pg = await startEmbeddedPostgres({ dataDir: join(dir, "pg"), port: await freePort(), persistent: false, restartDelayMs: 1500, log });
  const env = {
    ...TEST_CHAIN_ENV,
    SERVICE_PORT: "0",
    SERVICE_RATE_LIMIT_PER_SECOND: "100000",
    SERVICE_RATE_LIMIT_BURST: "100000",
    SERVICE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
    SERVICE_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    SERVICE_DB_POOL_SIZE: "8",
    DATABASE_URL: pg.url,
  };
  const config = loadConfig(env);
  const networks = loadChainsConfig(env).networks;
  service = await startService(config, log, { networks, readiness: NetworkReadiness.trusted(networks) });
  const { db, sql } = service.services.database;
  const merchant = await createMerchant(db, "Outage merchant");
  const key = (await createApiKey(db, merchant.id, "sandbox", "test")).secret;
  const url = service.url;

  const shots: Shot[] = [];
  const t0 = performance.now();
  const fire = async (i: number) => {
    const shot: Shot = { i, key: `outage-${i}`, ref: `order_${i}`, sentAt: performance.now() - t0, ms: 0, status: "error", retryAfter: null };
    shots.push(shot);
    const start = performance.now();
    try {
      const res = await fetch(`${url}/payment-sessions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": shot.key },
        body: JSON.stringify({ amount: "1.00", currency: "USD", referenceId: shot.ref }),
        signal: AbortSignal.timeout(8000),
      });
      const body = (await res.json()) as { paymentSessionId?: string; error?: { code: string } };
      shot.status = res.status;
      shot.retryAfter = res.headers.get("retry-after");
      shot.code = body.error?.code;
      shot.id = body.paymentSessionId;
    } catch (e) {
      shot.status = e instanceof Error && e.name === "TimeoutError" ? "timeout" : "error";
    }
    shot.ms = performance.now() - start;
  };

  // 20 requests a second for 7 s; the server dies at 1.5 s and is back about 1.5 s later.
  const inflight: Promise<void>[] = [];
  let killedAt = 0;
  let readyz: { status: number; ms: number } | undefined;
  for (let i = 0; i < 140; i++) {
    inflight.push(fire(i));
    if (i === 30) {
      killedAt = performance.now() - t0;
      const restarted = pg.restarted();
      killServer(pg.pid!);
      void restarted;
      await Bun.sleep(100);
      const r0 = performance.now();
      const r = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5000) });
      readyz = { status: r.status, ms: performance.now() - r0 };
    }
    await Bun.sleep(50);
  }
  await Promise.all(inflight);

  // Every request answered within the deadline (plus a COMMIT's grace, and slack for a busy machine).
  const bad = shots.filter((s) => s.status !== 201 && !(s.status === 503 && s.retryAfter && s.code === "service_unavailable"));
  expect(bad).toEqual([]);
  expect(Math.max(...shots.map((s) => s.ms))).toBeLessThan(REQUEST_TIMEOUT_MS + 2000 + 1000);
  expect(readyz!.status).toBe(503);
  expect(readyz!.ms).toBeLessThan(1000);
  const failed = shots.filter((s) => s.status === 503);
  expect(failed.length).toBeGreaterThan(0);
  // Recovery: every request sent from 2 s after the server came back succeeded.
  const back = lines.find((l) => l.includes("embedded Postgres is back"));
  expect(back).toBeDefined();
  const lastFailureSentAt = Math.max(...failed.map((s) => s.sentAt));
  expect(lastFailureSentAt - killedAt).toBeLessThan(1500 + 2000 + 1500);
  const tail = shots.filter((s) => s.sentAt > lastFailureSentAt);
  expect(tail.length).toBeGreaterThan(20);
  expect(tail.every((s) => s.status === 201)).toBe(true);
  expect((await fetch(`${url}/readyz`)).status).toBe(200);

  // Nothing acknowledged was lost: every 201 is in the database.
  const rows = await sql`select id, reference_id from app.payment_sessions`;
  const byRef = new Map(rows.map((r) => [r.reference_id as string, r.id as string]));
  for (const s of shots.filter((x) => x.status === 201)) expect(byRef.get(s.ref)).toBe(s.id!);
  // A 503 committed nothing — except a COMMIT cut by the crash itself, which the
  // Idempotency-Key then replays; retried, every 503 yields exactly one session.
  for (const s of failed) {
    const res = await fetch(`${url}/payment-sessions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": s.key },
      body: JSON.stringify({ amount: "1.00", currency: "USD", referenceId: s.ref }),
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { paymentSessionId: string };
    if (byRef.has(s.ref)) expect(body.paymentSessionId).toBe(byRef.get(s.ref)!);
  }
  const [count] = await sql`select count(*)::int as n from app.payment_sessions`;
  expect(count!.n).toBe(shots.length);
  // The outage was logged once by the supervisor (died, back), not per request.
  expect(lines.filter((l) => l.includes("embedded Postgres exited")).length).toBe(1);
}, 40_000);

test("Outage: logs once per outage, backs off doubling, ignores errors that are not outages", () => {
  const lines: string[] = [];
  const o = new Outage("loop", (l) => lines.push(l), { minDelayMs: 100, maxDelayMs: 1000, random: () => 0.5 });
  const refused = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
  expect(o.failed(new Error("syntax"))).toBeUndefined();
  expect(o.failed(Object.assign(new Error("x"), { code: "23505" }))).toBeUndefined();
  expect([o.failed(refused), o.failed(refused), o.failed(refused), o.failed(refused), o.failed(refused)]).toEqual([100, 200, 400, 800, 1000]);
  expect(o.down).toBe(true);
  o.ok();
  o.ok();
  expect(o.failed(Object.assign(new Error("x"), { code: "57P01" }))).toBe(100);
  expect(lines.length).toBe(3);
  expect(lines[0]).toContain("database unavailable (ECONNREFUSED)");
  expect(lines[1]).toContain("database answers again");
});

test("isDatabaseUnavailable looks through the cause chain (drizzle wraps postgres.js's error)", () => {
  const shuttingDown = Object.assign(new Error("the database system is shutting down"), { code: "57P03" });
  const wrapped = new Error("Failed query: select 1", { cause: shuttingDown });
  expect(isDatabaseUnavailable(wrapped)).toBe(true);
  expect(isDatabaseUnavailable(new Error("outer", { cause: wrapped }))).toBe(true);
  expect(isDatabaseUnavailable(new Error("Failed query", { cause: Object.assign(new Error("dup"), { code: "23505" }) }))).toBe(false);
  expect(isDatabaseUnavailable(new Error("plain"))).toBe(false);
});
