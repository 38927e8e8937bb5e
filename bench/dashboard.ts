/**
 * Dashboard figures: the Transactions page of a merchant with 100,000 sessions (inserted with
 * SQL, with their deposit addresses; another merchant's 50,000 beside them), served by the
 * real service in this process on an embedded Postgres of its own, signed in through the form.
 * For each case, BENCH_REQUESTS sequential GETs of the whole page (query, deposits, HTML), timed
 * as the loopback round trip (an upper bound of server time). Prints one JSON line.
 * Goal: first page and filtered search p95 ≤ 100 ms.
 *   BENCH_SESSIONS (default 100000), BENCH_REQUESTS (200)
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmbeddedPostgres } from "../api/src/db/embedded.ts";
import { loadConfig } from "../api/src/config.ts";
import { startService } from "../api/src/server.ts";
import { createMerchant } from "../api/src/credentials/store.ts";
import { createUser } from "../api/src/dashboard/users.ts";
import { loadChainsConfig } from "../shared/chains/config.ts";
import { NetworkReadiness } from "../api/src/onchain/network-status.ts";
import { freePort } from "../testing/ports.ts";
import { percentile, round } from "./lib.ts";
import { signInAttemptAt } from "../testing/dashboard.ts";

const sessions = Number(process.env.BENCH_SESSIONS ?? 100_000);
const requests = Number(process.env.BENCH_REQUESTS ?? 200);

const dir = mkdtempSync(join(tmpdir(), "paysession-bench-dashboard-"));
const pg = await startEmbeddedPostgres({ dataDir: join(dir, "pg"), port: await freePort(), persistent: false });
const chainEnv = { SERVICE_RPC_URL_LOCAL: "http://127.0.0.1:9", SERVICE_RPC_URL_BASE: "http://127.0.0.1:9", SERVICE_INDEX_MODE: "full" };
const config = loadConfig({
  ...chainEnv,
  DATABASE_URL: pg.url,
  SERVICE_PORT: "0",
  SERVICE_SESSION_RUNNER: "false",
  SERVICE_SWEEPER: "false",
  SERVICE_WEBHOOK_WORKER: "false",
  SERVICE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
});
const networks = loadChainsConfig(chainEnv).networks;
const svc = await startService(config, () => {}, { networks, readiness: NetworkReadiness.trusted(networks) });
const { sql, db } = svc.services.database;

try {
  const merchant = await createMerchant(db, "Bench shop");
  const other = await createMerchant(db, "Other shop");
  const t0 = performance.now();
  // Sessions over the last 100 days, newest last; a status mix like a real shop's; a deposit address each.
  const fill = async (merchantId: string, n: number, tag: string) => {
    await sql`
      insert into app.payment_sessions (id, merchant_id, environment, status, status_reason, amount_minor, currency, reference_id, metadata,
                                        expires_at, token_hash, token_expires_at, sequence, created_at, updated_at)
      select 'ps_' || ${tag} || lpad(i::text, 21, '0'), ${merchantId}, 'sandbox',
             (array['SUCCEEDED','SUCCEEDED','SUCCEEDED','CANCELED','PENDING','ERROR','FUNDED'])[1 + i % 7],
             'created', 100 + i % 100000, 'USD', 'order-' || ${tag} || i, '{}'::jsonb,
             t + interval '30 minutes', md5(${tag} || i::text) || md5(i::text), t + interval '90 minutes', 1, t, t
        from (select i, now() - make_interval(secs => (${n} - i) * (8640000.0 / ${n})) as t from generate_series(1, ${n}) i) g`;
    await sql`
      insert into app.session_deposits (session_id, chain_id, address, settlement_address, token_address, decimals, required_base_units, confirmations)
      select 'ps_' || ${tag} || lpad(i::text, 21, '0'), 31337, '0x' || lpad(to_hex(i), 8, '0') || md5(${tag} || 'd' || i::text),
             '0x70997970c51812dc3a010c7d01b50e0d17dc79c8', '0x6561a51f16f2de644622257b74b05773d450b47c', 6, (100 + i % 100000) * 10000, 1
        from generate_series(1, ${n}) i`;
  };
  await fill(merchant.id, sessions, "A");
  await fill(other.id, Math.round(sessions / 2), "B");
  await sql`analyze`;
  const insertSeconds = round((performance.now() - t0) / 1000, 1);

  await createUser(db, merchant.id, "bench@shop.example", "bench password 123");
  const base = svc.url;
  const signedIn = await signInAttemptAt(base, "bench@shop.example", "bench password 123");
  const cookie = signedIn.headers.getSetCookie().find((c) => c.startsWith("ps_dashboard="))!.split(";")[0]!;

  const rowsIn = (html: string) => (html.match(/<tr>\s*<td><a href="\/dashboard\/sandbox\/transactions\/ps_/g) ?? []).length;
  async function measure(path: (i: number) => string, expectRows: (n: number) => boolean) {
    const ms: number[] = [];
    for (let i = 0; i < requests + 10; i++) {
      const t = performance.now();
      const res = await fetch(`${base}${path(i)}`, { headers: { cookie } });
      const html = await res.text();
      const took = performance.now() - t;
      if (res.status !== 200 || !expectRows(rowsIn(html))) throw new Error(`${path(i)}: ${res.status}, ${rowsIn(html)} rows`);
      if (i >= 10) ms.push(took); // the first ten warm the pool and the caches
    }
    ms.sort((a, b) => a - b);
    return { p50Ms: percentile(ms, 50), p95Ms: percentile(ms, 95), p99Ms: percentile(ms, 99) };
  }
  const day = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);
  const mid = `ps_A${String(Math.round(sessions / 2)).padStart(21, "0")}`;
  const result = {
    bench: "dashboard",
    sessions,
    otherMerchantSessions: Math.round(sessions / 2),
    insertSeconds,
    requests,
    firstPage: await measure(() => "/dashboard/sandbox/transactions", (n) => n === 25),
    statusAndDateFilter: await measure(() => `/dashboard/sandbox/transactions?status=ERROR&from=${day(60)}&to=${day(30)}`, (n) => n === 25),
    // A reference is matched by prefix: order-A12 also finds order-A120…; order-A1 finds a page of them.
    searchByReference: await measure((i) => `/dashboard/sandbox/transactions?q=order-A${1 + ((i * 7919) % sessions)}`, (n) => n >= 1),
    searchByReferencePrefix: await measure(() => `/dashboard/sandbox/transactions?q=order-A1`, (n) => n === 25),
    searchByDepositAddress: await measure((i) => {
      const k = 1 + ((i * 104729) % sessions);
      return `/dashboard/sandbox/transactions?q=0x${k.toString(16).padStart(8, "0")}${new Bun.CryptoHasher("md5").update(`Ad${k}`).digest("hex")}`;
    }, (n) => n === 1),
    deepPage: await measure(() => `/dashboard/sandbox/transactions?after=${mid}`, (n) => n === 25),
    goalP95Ms: 100,
  };
  console.log(JSON.stringify(result));
} finally {
  await svc.stop();
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
}
