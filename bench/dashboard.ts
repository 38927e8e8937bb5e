/**
 * Dashboard figures: the Transactions page of a merchant with 100,000 sessions (inserted with
 * SQL, with their deposit addresses; another merchant's 50,000 beside them), served by the
 * real service in this process on an embedded Postgres of its own, signed in through the form.
 * For each case, BENCH_REQUESTS sequential GETs of the whole page (query, deposits, HTML), timed
 * as the loopback round trip (an upper bound of server time). Prints one JSON line.
 * Goal: first page and filtered search p95 ≤ 100 ms.
 *
 * Then the home page (`home`) of a third merchant with 1,000,000 sessions over 100 UTC days
 * (10,000 a day, today's between midnight and now; 85 % SUCCEEDED, 12 % CANCELED, 1 % ERROR,
 * 0.1 % FUNDED for hours, the rest PENDING; paid on two networks), per period (7, 30, 90 days):
 * the first view (`coldMs`: it counts the past days and keeps them), then p50/p95/p99 of
 * BENCH_REQUESTS views, each checked to show the period's session count; beside them, in the same
 * run, the floor: the API keys page (sign-in check, layout, one small query) — `p95Ratio` is the
 * home's p95 ÷ the floor's. Goal: home p95 ≤ 150 ms at 1M sessions.
 *   BENCH_SESSIONS (default 100000), BENCH_REQUESTS (200), BENCH_HOME_SESSIONS (1000000),
 *   BENCH_EXPLAIN=1 (the home's statements' plans on stderr)
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
import { connect } from "../api/src/db/client.ts";

const sessions = Number(process.env.BENCH_SESSIONS ?? 100_000);
const requests = Number(process.env.BENCH_REQUESTS ?? 200);
const homeSessions = Number(process.env.BENCH_HOME_SESSIONS ?? 1_000_000);

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
// The seeding's own connection, without the service's 5 s statement limit (100,000 rows a statement).
const seedDb = connect(pg.url, { max: 1, statementTimeoutMs: 0 });

try {
  const merchant = await createMerchant(db, "Bench shop");
  const other = await createMerchant(db, "Other shop");
  const t0 = performance.now();
  // Sessions over the last 100 days, newest last; a status mix like a real shop's; a deposit address each.
  const fill = async (merchantId: string, n: number, tag: string) => {
    await seedDb.sql`
      insert into app.payment_sessions (id, merchant_id, environment, status, status_reason, amount_minor, currency, reference_id, metadata,
                                        expires_at, token_hash, token_expires_at, sequence, created_at, updated_at)
      select 'ps_' || ${tag} || lpad(i::text, 21, '0'), ${merchantId}, 'sandbox',
             (array['SUCCEEDED','SUCCEEDED','SUCCEEDED','CANCELED','PENDING','ERROR','FUNDED'])[1 + i % 7],
             'created', 100 + i % 100000, 'USD', 'order-' || ${tag} || i, '{}'::jsonb,
             t + interval '30 minutes', md5(${tag} || i::text) || md5(i::text), t + interval '90 minutes', 1, t, t
        from (select i, now() - make_interval(secs => (${n} - i) * (8640000.0 / ${n})) as t from generate_series(1, ${n}) i) g`;
    await seedDb.sql`
      insert into app.session_deposits (session_id, chain_id, address, settlement_address, token_address, decimals, required_base_units, confirmations)
      select 'ps_' || ${tag} || lpad(i::text, 21, '0'), 31337, '0x' || lpad(to_hex(i), 8, '0') || md5(${tag} || 'd' || i::text),
             '0x70997970c51812dc3a010c7d01b50e0d17dc79c8', '0xe2b4152e3b6cc732b52df67f42b2cbdbaee385a5', 6, (100 + i % 100000) * 10000, 1
        from generate_series(1, ${n}) i`;
  };
  await fill(merchant.id, sessions, "A");
  await fill(other.id, Math.round(sessions / 2), "B");
  await seedDb.sql`analyze`;
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
    home: await homeFigures(),
  };
  console.log(JSON.stringify(result));

  /** The home page at 1M sessions of one merchant (see the header). */
  async function homeFigures() {
    const home = await createMerchant(db, "Home shop");
    const t1 = performance.now();
    const perDay = Math.ceil(homeSessions / 100);
    const tusd = "0xe2b4152e3b6cc732b52df67f42b2cbdbaee385a5";
    for (let from = 1; from <= homeSessions; from += 100_000) {
      const to = Math.min(homeSessions, from + 99_999);
      await seedDb.sql`
        with g as (
          select i, st, t, case when st in ('SUCCEEDED', 'FUNDED', 'ERROR') then 31337 + i % 2 end as chain
            from (select i,
                         case when i % 1000 < 850 then 'SUCCEEDED' when i % 1000 < 970 then 'CANCELED' when i % 1000 < 980 then 'ERROR'
                              when i % 1000 < 981 then 'FUNDED' else 'PENDING' end as st,
                         case when (i - 1) / ${perDay} = 0
                              then d0 + (now() - d0) * (((i - 1) % ${perDay})::float8 / ${perDay})
                              else d0 - make_interval(days => (i - 1) / ${perDay}) + make_interval(secs => 86400.0 * ((i - 1) % ${perDay}) / ${perDay}) end as t
                    from generate_series(${from}::int, ${to}::int) i,
                         lateral (select ((now() at time zone 'UTC')::date::timestamp at time zone 'UTC') as d0) z) x),
        s as (
          insert into app.payment_sessions (id, merchant_id, environment, status, status_reason, amount_minor, currency, metadata, expires_at,
                                            token_hash, token_expires_at, sequence, funding_chain_id, funding_amount, created_at, updated_at)
          select 'ps_H' || lpad(i::text, 21, '0'), ${home.id}, 'sandbox', st, 'created', 100 + i % 100000, 'USD', '{}'::jsonb, t + interval '30 minutes',
                 md5('H' || i::text) || md5(i::text), t + interval '90 minutes', 2, chain, case when chain is not null then (100 + i % 100000)::numeric * 10000 end, t, t
            from g),
        d as (
          insert into app.session_deposits (session_id, chain_id, address, settlement_address, token_address, decimals, required_base_units, confirmations)
          select 'ps_H' || lpad(i::text, 21, '0'), coalesce(chain, 31337), '0x' || lpad(to_hex(i), 8, '0') || md5('Hd' || i::text),
                 '0x70997970c51812dc3a010c7d01b50e0d17dc79c8', ${tusd}, 6, (100 + i % 100000)::numeric * 10000, 1
            from g)
        insert into app.session_events (id, session_id, merchant_id, environment, sequence, status, previous_status, reason, detail, created_at)
        select 'evt_H' || lpad(i::text, 21, '0'), 'ps_H' || lpad(i::text, 21, '0'), ${home.id}, 'sandbox', 2, 'FUNDED', 'PENDING', 'paid', '{}'::jsonb, t + interval '1 minute'
          from g where st = 'FUNDED'`;
    }
    await seedDb.sql`vacuum analyze app.payment_sessions, app.session_deposits, app.session_events`;
    const seedSeconds = round((performance.now() - t1) / 1000, 1);
    await createUser(db, home.id, "home@shop.example", "bench password 123");
    const signed = await signInAttemptAt(base, "home@shop.example", "bench password 123");
    const homeCookie = signed.headers.getSetCookie().find((c) => c.startsWith("ps_dashboard="))!.split(";")[0]!;
    const get = async (path: string) => {
      const t = performance.now();
      const res = await fetch(`${base}${path}`, { headers: { cookie: homeCookie } });
      const html = await res.text();
      return { ms: performance.now() - t, status: res.status, html };
    };
    const series = async (path: string, ok: (html: string) => boolean) => {
      const ms: number[] = [];
      for (let i = 0; i < requests + 10; i++) {
        const r = await get(path);
        if (r.status !== 200 || !ok(r.html)) throw new Error(`${path}: ${r.status}`);
        if (i >= 10) ms.push(r.ms);
      }
      ms.sort((a, b) => a - b);
      return { p50Ms: percentile(ms, 50), p95Ms: percentile(ms, 95), p99Ms: percentile(ms, 99) };
    };
    const floor = await series("/dashboard/sandbox/settings/api-keys", (h) => h.includes("API keys"));
    const created = (html: string) => Number(/<dt>Sessions created<\/dt><dd class="figure">([\d,]+)</.exec(html)?.[1]?.replace(/,/g, ""));
    const periods: Record<string, unknown> = {};
    for (const days of [7, 30, 90]) {
      const [{ n }] = (await sql`
        select count(*)::int as n from app.payment_sessions where merchant_id = ${home.id} and environment = 'sandbox'
           and created_at >= ((now() at time zone 'UTC')::date - ${days - 1}::int)::timestamp at time zone 'UTC'`) as unknown as [{ n: number }];
      const cold = await get(`/dashboard/sandbox?days=${days}`);
      if (created(cold.html) !== n) throw new Error(`home ${days} days: ${created(cold.html)} sessions shown, ${n} created`);
      const warm = await series(`/dashboard/sandbox?days=${days}`, (h) => created(h) === n);
      periods[`days${days}`] = { sessionsInPeriod: n, coldMs: round(cold.ms), ...warm, p95Ratio: round(warm.p95Ms / floor.p95Ms) };
    }
    if (process.env.BENCH_EXPLAIN) await explainHome(home.id);
    return { sessions: homeSessions, seedSeconds, requests, floorApiKeysPage: floor, ...periods, goalP95Ms: 150 };
  }

  /** The plans of the home's statements at this size (stderr), to see each uses its index. */
  async function explainHome(merchantId: string) {
    const plan = async (label: string, q: string, on: { unsafe: typeof sql.unsafe } = sql) => {
      const rows = await on.unsafe(`explain (analyze, buffers) ${q}`);
      console.error(`--- ${label}\n${rows.map((r) => r["QUERY PLAN"]).join("\n")}`);
    };
    const owner = `s.merchant_id = '${merchantId}' and s.environment = 'sandbox'`;
    // As home.ts counts today: no parallel plan, each deposit by one probe.
    await sql.begin(async (tx) => {
      await tx`set local max_parallel_workers_per_gather = 0`;
      await plan("today, counted", `
      select s.status, s.funding_chain_id, dep.token_address, dep.decimals, count(*), coalesce(sum(s.funding_amount), 0)
        from app.payment_sessions s
        left join lateral (select token_address, decimals from app.session_deposits where session_id = s.id and chain_id = s.funding_chain_id offset 0) dep on true
       where ${owner} and s.created_at >= ((now() at time zone 'UTC')::date::timestamp at time zone 'UTC')
       group by 1, 2, 3, 4`, tx);
    });
    await plan("kept days", `select day, groups from app.dashboard_days where merchant_id = '${merchantId}' and environment = 'sandbox' and day >= current_date - 89`);
    await plan("changed days since the last look", `
      select (s.created_at at time zone 'UTC')::date, max(ev.created_at) from app.session_events ev join app.payment_sessions s on s.id = ev.session_id
       where ev.merchant_id = '${merchantId}' and ev.environment = 'sandbox' and ev.created_at >= now() - interval '5 minutes' group by 1`);
    await plan("ERROR in the period", `select * from app.payment_sessions s where ${owner} and s.status = 'ERROR' and s.created_at >= now() - interval '90 days' order by created_at desc, id desc limit 20`);
    await plan("FUNDED for long", `
      select s.*, f.funded_at, count(*) over () from app.payment_sessions s
       cross join lateral (select max(ev.created_at) as funded_at from app.session_events ev where ev.session_id = s.id and ev.status = 'FUNDED' and ev.previous_status is distinct from 'FUNDED') f
       where ${owner} and s.status = 'FUNDED' and f.funded_at < now() - interval '1 hour' order by f.funded_at, s.id limit 20`);
  }
} finally {
  await seedDb.close();
  await svc.stop();
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
}
