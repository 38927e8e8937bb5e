/**
 * `bun run test:cluster` — the cluster fault suite: Paysession as several processes on one
 * Postgres (docs/operators.md, "Several processes on one database"), one of them SIGKILLed every
 * 10 s while sessions are created and paid. All on 127.0.0.1: one embedded Postgres, one local
 * chain, three API processes behind a round-robin proxy (testing/round-robin-proxy.ts), two
 * session runners, two sweepers, two webhook workers and two `bun run indexer` (each runs its
 * own Ponder into its own schema; the service reads the one holding the `indexer` lease). For CLUSTER_SECONDS (180): creates at CLUSTER_CREATES_PER_SECOND (2) through the
 * proxy, payments on the chain every second (every 8th session canceled instead), and every 10 s
 * one process (process group) SIGKILLed and started again a moment later — the active indexer
 * at least twice, its takeover timed from the kill to the first block indexed past the head at
 * the kill, and from the kill to the next payment FUNDED (the first payment sent after the kill;
 * each indexer node runs its own Ponder, so the standby's index is warm and the takeover switches
 * the service's reads to it). Then one API key is hammered through the proxy at 5 × its limit for 10 s.
 *
 * After recovery it prints one JSON line and exits non-zero unless: every paid session
 * SUCCEEDED and every canceled one is CANCELED, each with its transitions once and its events
 * numbered 1..n; every event delivered at least once and first delivered in order per session;
 * the settlement received exactly what was paid and no deposit holds anything; the relayer's
 * live transactions have nonces 0..n-1 (no gap, no duplicate) and n is the chain's nonce; each
 * paid deposit was swept by exactly one mined transaction, each canceled one by none; each
 * takeover ≤ 30 s to the next indexed block and ≤ 5 s to the next payment FUNDED; the hammer's accepted requests within ±10 % of burst + perSecond × seconds.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { Type } from "@sinclair/typebox";
import { getAddress, parseEventLogs, type Address, type TransactionReceipt } from "viem";
import { ensureDeployed, mintTestUsd } from "../shared/contracts/deploy.ts";
import { testUsdAbi } from "../shared/contracts/artifacts.ts";
import { startDevChain, type DevChain } from "../shared/devchain/index.ts";
import { localClients } from "../shared/devchain/clients.ts";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../api/src/db/embedded.ts";
import { indexerProgress } from "../api/src/sessions/indexed.ts";
import { ALIVE_MS, BEAT_MS } from "../api/src/nodes/registry.ts";
import { decodeFirst, decodeRows, rowShape, col, type RowOf } from "../api/src/db/rows.ts";
import { freePort } from "./ports.ts";
import { startRoundRobinProxy, type RoundRobinProxy } from "./round-robin-proxy.ts";
import { startReceiver } from "./webhook-receiver.ts";
import { apiClient, childEnv, createMerchantKey, groupProcess, processGroupOf, waitHealthy, type GroupProcess } from "./suite-processes.ts";
import { deliveries, deliveryProblems, historyProblems, moneyProblems } from "./suite-checks.ts";
import { describeError } from "../shared/describe-error.ts";

const SECONDS = Number(process.env.CLUSTER_SECONDS ?? 180);
const CREATES_PER_SECOND = Number(process.env.CLUSTER_CREATES_PER_SECOND ?? 2);
const CHAIN_ID = 31337;
/** The APIs' limit per key: low, so that this machine can offer well over it. */
const LIMIT = { perSecond: 20, burst: 20 };
const HAMMER_SECONDS = 10;
const HAMMER_OFFERED_PER_SECOND = 5 * LIMIT.perSecond;
const TAKEOVER_LIMIT_SECONDS = 30;
/** From the active indexer's kill to the next payment FUNDED (the standby is warm: docs/topology.md). */
const FUNDED_AFTER_KILL_LIMIT_SECONDS = 5;

const t0 = Date.now();
const say = (line: string) => console.error(`[cluster +${((Date.now() - t0) / 1000).toFixed(1)}s] ${line}`);
const dir = mkdtempSync(join(tmpdir(), "paysession-cluster-"));
const procs: GroupProcess[] = [];
let pg: EmbeddedDatabase | undefined;
let chain: DevChain | undefined;
let proxy: RoundRobinProxy | undefined;
let db: postgres.Sql | undefined;
const receiver = startReceiver();


const LeaseHolder = rowShape("indexer lease holder", { pid: col.int });
const SessionRow = rowShape("session status", { id: col.text, status: col.text });
const EventRow = rowShape("session event", { session_id: col.text, sequence: col.int, status: col.text, reason: col.text });
const DepositRow = rowShape("session deposit", { session_id: col.text, address: col.text, settlement_address: col.text });
const RelayerTx = rowShape("relayer transaction", { relayer: col.text, nonce: col.wholeNumber, state: col.text, tx_hashes: col.json(Type.Array(col.hex)) });
const LiveApis = rowShape("live API nodes", { n: col.int });
const Backlog = rowShape("backlog", { sweeps: col.int, txs: col.int });
const FirstFunded = rowShape("first FUNDED", { at_ms: col.nullable(col.float) });

async function main() {
  // ---------------------------------------------------------------- the parts
  pg = await startEmbeddedPostgres({ dataDir: join(dir, "pg"), port: await freePort(), supervise: false });
  db = postgres(pg.url, { max: 2, onnotice: () => {} });
  chain = await startDevChain({ port: await freePort(), chainId: CHAIN_ID, heartbeatSeconds: 1 });
  const clients = localClients(chain.rpcUrl, CHAIN_ID);
  const { token } = await ensureDeployed(clients);
  const apiPorts = [await freePort(), await freePort(), await freePort()];
  proxy = startRoundRobinProxy(apiPorts.map((p) => `http://127.0.0.1:${p}`));
  const env = childEnv({
    DATABASE_URL: pg.url,
    SERVICE_RPC_URL_LOCAL: chain.rpcUrl,
    SERVICE_DATA_DIR: join(dir, "data"),
    SERVICE_PUBLIC_URL: proxy.url,
    // One key for all (the webhook workers open the secrets the APIs sealed).
    SERVICE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
    SERVICE_RATE_LIMIT_PER_SECOND: String(LIMIT.perSecond),
    SERVICE_RATE_LIMIT_BURST: String(LIMIT.burst),
  });
  const apiOnly = { SERVICE_SESSION_RUNNER: "false", SERVICE_SWEEPER: "false", SERVICE_WEBHOOK_WORKER: "false", SERVICE_INDEXER: "false" };
  const apis = apiPorts.map((port, i) => groupProcess(`api-${i + 1}`, ["api/src/main.ts"], { ...env, ...apiOnly, SERVICE_PORT: String(port) }));
  const indexers = [
    groupProcess("indexer-1", ["run", "indexer"], { ...env, SERVICE_INDEXER_PORT: String(await freePort()) }),
    groupProcess("indexer-2", ["run", "indexer"], { ...env, SERVICE_INDEXER_PORT: String(await freePort()), SERVICE_INDEXER: "standby" }),
  ];
  const workers = [
    groupProcess("runner-1", ["api/src/sessions/main.ts"], env),
    groupProcess("runner-2", ["api/src/sessions/main.ts"], env),
    groupProcess("sweeper-1", ["api/src/sweeps/main.ts"], env),
    groupProcess("sweeper-2", ["api/src/sweeps/main.ts"], env),
    groupProcess("webhooks-1", ["api/src/webhooks/main.ts"], env),
    groupProcess("webhooks-2", ["api/src/webhooks/main.ts"], env),
  ];
  procs.push(...apis, ...indexers, ...workers);
  // The first API migrates the database; then everything else at once.
  apis[0]!.start();
  await waitHealthy(apis[0]!, `http://127.0.0.1:${apiPorts[0]}/healthz`);
  for (const p of procs.slice(1)) p.start();
  await Promise.all(apis.map((p, i) => waitHealthy(p, `http://127.0.0.1:${apiPorts[i]}/healthz`)));
  const healthy = (p: GroupProcess) => {
    const i = apis.indexOf(p);
    return i >= 0 ? waitHealthy(p, `http://127.0.0.1:${apiPorts[i]}/healthz`) : Promise.resolve();
  };

  const indexedHead = async () => (await indexerProgress(db!).catch(() => ({ heads: new Map<number, bigint>() }))).heads.get(CHAIN_ID) ?? -1n;
  for (const by = Date.now() + 120_000; (await indexedHead()) < 0n; await Bun.sleep(500)) if (Date.now() > by) throw new Error(`the indexer never indexed a block:\n${indexers.map((p) => p.log()).join("\n")}`);
  /**
   * How many indexer nodes' own indexes (schemas indexer_<n>) are within two blocks of the chain:
   * a standby counts as warm when its index is. A node restarted moments ago is not yet.
   */
  const warmIndexes = async () => {
    const chainHead = await clients.publicClient.getBlockNumber({ cacheTime: 0 });
    let warm = 0;
    for (const r of await db!`select nspname from pg_namespace where nspname ~ '^indexer_[0-9]+$'`) {
      const [h] = await db!.unsafe(`select max(block_number)::text as b from "${r.nspname}".chain_heads`).catch(() => [{ b: null }]);
      if (h?.b && BigInt(h.b) >= chainHead - 2n) warm++;
    }
    return warm;
  };
  for (const by = Date.now() + 120_000; (await warmIndexes()) < indexers.length; await Bun.sleep(500)) if (Date.now() > by) throw new Error(`the indexers' own indexes never both caught up:\n${indexers.map((p) => p.log()).join("\n")}`);
  /** The indexer the service reads now: the process group of the `indexer` lease's holder (none while the lease of a dead one runs out). */
  const activeIndexer = async (): Promise<GroupProcess | undefined> => {
    const holder = decodeFirst(
      LeaseHolder,
      await db!`select n.pid from app.leases l join app.nodes n on n.id = l.holder where l.name = 'indexer' and l.expires_at > now()`,
    );
    const group = holder ? processGroupOf(holder.pid) : undefined;
    return indexers.find((p) => p.pid() !== undefined && p.pid() === group);
  };

  const call = apiClient(proxy.url, createMerchantKey(env, "Cluster"));
  const hammerKey = createMerchantKey(env, "Cluster hammer");
  const ep = await call("POST", "/webhook-endpoints", { url: `${receiver.url}/hook` });
  if (ep.status !== 201) throw new Error(`webhook endpoint: ${JSON.stringify(ep.body)}`);
  say(`${procs.length} processes up; ${SECONDS} s of traffic and a kill every 10 s`);

  // ---------------------------------------------------------------- traffic and kills together
  const answers = new Map<number, number>();
  const sessions: { id: string; deposit: Address; baseUnits: bigint; pay: boolean }[] = [];
  const toPay: (typeof sessions)[number][] = [];
  /** When each payment was sent (Date.now() before its transfer): the next payment after a kill is the first sent after it. */
  const sentAt = new Map<string, number>();
  const toCancel: string[] = [];
  let paid = 0n;
  const phaseEnd = Date.now() + SECONDS * 1000;
  /** The same request again until it is answered 2xx (a 502 from the proxy, a 503 while starting: a client retries). */
  const until2xx = async (method: string, path: string, body?: unknown, headers?: Record<string, string>) => {
    for (;;) {
      const r = await call(method, path, body, headers).catch(() => ({ status: 0, body: {} as any, retryAfter: 1 }));
      answers.set(r.status, (answers.get(r.status) ?? 0) + 1);
      if (r.status >= 200 && r.status < 300) return r;
      await Bun.sleep(r.status === 429 ? 1_000 * r.retryAfter : 300);
    }
  };
  const creates: Promise<void>[] = [];
  const createLoop = (async () => {
    for (let i = 0; Date.now() < phaseEnd; i++) {
      creates.push(
        (async () => {
          const r = await until2xx("POST", "/payment-sessions", { amount: `${1 + (i % 5)}.${String(i % 100).padStart(2, "0")}`, currency: "USD" }, { "idempotency-key": `cluster-${i}` });
          const n = r.body.networks[0];
          const s = { id: r.body.paymentSessionId as string, deposit: getAddress(n.depositAddress), baseUnits: BigInt(n.amountBaseUnits), pay: i % 8 !== 7 };
          sessions.push(s);
          if (s.pay) toPay.push(s);
          else toCancel.push(s.id);
        })(),
      );
      await Bun.sleep(1_000 / CREATES_PER_SECOND);
    }
  })();
  // The payers pay on the chain directly, once a second, whatever the service is doing.
  const payLoop = (async () => {
    while (Date.now() < phaseEnd || toPay.length || creates.length > sessions.length) {
      for (const s of toPay.splice(0)) {
        sentAt.set(s.id, Date.now());
        await mintTestUsd({ ...clients, to: s.deposit, amount: s.baseUnits, token });
        paid += s.baseUnits;
      }
      for (const id of toCancel.splice(0)) await until2xx("POST", `/payment-sessions/${id}/cancel`);
      await Bun.sleep(1_000);
    }
  })();
  const kills: { name: string; at: number }[] = [];
  const takeovers: Promise<number | undefined>[] = [];
  const fundedAfterKill: Promise<number | undefined>[] = [];
  const slots = Math.max(1, Math.floor(SECONDS / 10) - 1);
  const indexerSlots = new Set([1, Math.max(2, Math.floor(slots / 2) + 1)]);
  /** Seconds from the kill to the first block indexed past `head` (undefined: none within a minute). */
  const timeTakeover = async (head: bigint, at: number) => {
    while (Date.now() - at < 60_000) {
      if ((await indexedHead()) > head) {
        const s = (Date.now() - at) / 1000;
        say(`indexer takeover: block ${head + 1n} indexed ${s.toFixed(1)} s after the kill`);
        return s;
      }
      await Bun.sleep(200);
    }
    return undefined;
  };
  /** Seconds from the kill to the first FUNDED of a payment sent after it (undefined: none within a minute). */
  const timeNextFunded = async (at: number) => {
    while (Date.now() - at < 60_000) {
      const after = [...sentAt].filter(([, t]) => t >= at).map(([id]) => id);
      const first = after.length
        ? decodeFirst(FirstFunded, await db!`select (min(extract(epoch from created_at)) * 1000)::float8 as at_ms from app.session_events where status = 'FUNDED' and session_id = any(${after})`)
        : undefined;
      if (first?.at_ms) {
        const s = (first.at_ms - at) / 1000;
        say(`indexer takeover: the next payment FUNDED ${s.toFixed(1)} s after the kill`);
        return s;
      }
      await Bun.sleep(100);
    }
    return undefined;
  };
  // Each takeover is timed alone: while one is under way no indexer is killed (an indexer kill
  // that falls then is owed, and done at the next slot with an active indexer and a warm
  // standby — one restarted moments ago is still starting its Ponder: that is two failures at once).
  let timing = false;
  let owed = 0;
  const killLoop = (async () => {
    for (let slot = 0; slot < slots; slot++) {
      await Bun.sleep(10_000);
      if (indexerSlots.has(slot)) owed++;
      const bothWarm = !timing && (await warmIndexes()) === indexers.length;
      const active = bothWarm ? await activeIndexer() : undefined;
      const pool = bothWarm ? procs : procs.filter((p) => !indexers.includes(p));
      const victim = owed > 0 && active ? active : pool[Math.floor(Math.random() * pool.length)]!;
      if (!victim.running()) continue;
      const isActiveIndexer = victim === active;
      if (isActiveIndexer) owed = Math.max(0, owed - 1);
      const head = await clients.publicClient.getBlockNumber();
      const at = Date.now();
      victim.kill();
      kills.push({ name: isActiveIndexer ? `${victim.name} (active)` : victim.name, at: Math.round((at - t0) / 1000) });
      say(`SIGKILL ${victim.name}${isActiveIndexer ? ` (the active indexer; chain head ${head})` : ""}`);
      if (isActiveIndexer) {
        timing = true;
        const funded = timeNextFunded(at);
        fundedAfterKill.push(funded);
        takeovers.push(Promise.all([timeTakeover(head, at), funded]).then(([s]) => s).finally(() => (timing = false)));
      }
      await Bun.sleep(1_000);
      victim.start();
    }
  })();
  await Promise.all([createLoop, killLoop]);
  await Promise.all(creates);
  await payLoop;
  await Promise.all(procs.map(healthy));
  say(`${sessions.length} sessions created (${toCancelCount(sessions)} canceled, the rest paid); ${kills.length} kills; waiting for recovery`);

  // ---------------------------------------------------------------- recovery
  const ids = sessions.map((s) => s.id);
  const want = new Map(sessions.map((s) => [s.id, s.pay ? "SUCCEEDED" : "CANCELED"]));
  const recoverBy = Date.now() + 240_000;
  let events: RowOf<typeof EventRow>[] = [];
  for (;;) {
    const statuses = decodeRows(SessionRow, await db`select id, status from app.payment_sessions where id = any(${ids})`);
    const notYet = statuses.filter((r) => r.status !== want.get(r.id));
    events = decodeRows(EventRow, await db`select session_id, sequence, status, reason from app.session_events where session_id = any(${ids}) order by session_id, sequence`);
    const delivered = new Set(deliveries(receiver).map((d) => `${d.sessionId}#${d.sequence}`));
    const undelivered = events.filter((e) => !delivered.has(`${e.session_id}#${e.sequence}`)).length;
    const backlog = decodeFirst(
      Backlog,
      await db`select (select count(*) from app.sweeps where state in ('queued', 'sending'))::int as sweeps,
                      (select count(*) from app.sweep_transactions where state in ('signed', 'sent'))::int as txs`,
    )!;
    if (notYet.length === 0 && undelivered === 0 && backlog.sweeps === 0 && backlog.txs === 0) break;
    if (Date.now() > recoverBy) {
      say(`not recovered: ${notYet.length} sessions not in their end status (${[...new Set(notYet.map((r) => r.status))].join(", ")}), ${undelivered} events undelivered, ${backlog.sweeps} sweeps and ${backlog.txs} transactions open`);
      break;
    }
    await Bun.sleep(1_000);
  }
  // The limit is shared by the live API processes (the node registry): a killed one's entry
  // must have aged out and each API have counted the others again (a beat) before the hammer.
  for (const by = Date.now() + 30_000; Date.now() < by; await Bun.sleep(500)) {
    const live = decodeFirst(LiveApis, await db`select count(*)::int as n from app.nodes where 'api' = any(roles) and heartbeat_at > now() - ${ALIVE_MS} * interval '1 millisecond'`);
    if (live?.n === apis.length) break;
  }
  await Bun.sleep(2 * BEAT_MS);
  say("recovered; the hammer");

  // ---------------------------------------------------------------- the hammer: one key through the three APIs
  const hammer = apiClient(proxy.url, hammerKey);
  const hammerAnswers = new Map<number, number>();
  const hammerOdd: string[] = [];
  const inFlight: Promise<void>[] = [];
  const hammerStart = Date.now();
  for (let i = 0; i < HAMMER_SECONDS * HAMMER_OFFERED_PER_SECOND; i++) {
    const due = hammerStart + (i * 1000) / HAMMER_OFFERED_PER_SECOND;
    if (due > Date.now()) await Bun.sleep(due - Date.now());
    inFlight.push(
      hammer("GET", "/payment-sessions?limit=1")
        .then((r) => {
          if (r.status !== 200 && r.status !== 429 && hammerOdd.length < 5) hammerOdd.push(`${r.status} ${JSON.stringify(r.body)}`);
          return r.status;
        })
        .catch((e) => (hammerOdd.push(String(e)), 0))
        .then((status) => void hammerAnswers.set(status, (hammerAnswers.get(status) ?? 0) + 1)),
    );
  }
  const hammerSeconds = (Date.now() - hammerStart) / 1000;
  await Promise.all(inFlight);
  const accepted = hammerAnswers.get(200) ?? 0;
  const expected = Math.round(LIMIT.burst + LIMIT.perSecond * hammerSeconds);

  // ---------------------------------------------------------------- the checks
  const problems: string[] = [];
  const statuses = new Map(decodeRows(SessionRow, await db`select id, status from app.payment_sessions where id = any(${ids})`).map((r) => [r.id, r.status]));
  for (const s of sessions) {
    if (statuses.get(s.id) !== want.get(s.id)) problems.push(`${s.id}: ${statuses.get(s.id)}, expected ${want.get(s.id)}`);
    const history = events.filter((e) => e.session_id === s.id);
    problems.push(...historyProblems(s.id, history, s.pay ? ["PENDING", "FUNDED", "SUCCEEDED"] : ["PENDING", "CANCELED"]));
  }
  problems.push(...deliveryProblems(events.map((e) => ({ sessionId: e.session_id, sequence: e.sequence })), deliveries(receiver)));
  const deposits = decodeRows(DepositRow, await db`select session_id, address, settlement_address from app.session_deposits where session_id = any(${ids})`);
  const settlements = [...new Set(deposits.map((d) => getAddress(d.settlement_address)))];
  const money = await moneyProblems({ publicClient: clients.publicClient, token, settlements, deposits: sessions.map((s) => s.deposit), paid });
  problems.push(...money.problems);
  problems.push(...(await relayerProblems(db, clients.publicClient, token, sessions)));
  const takeoverSeconds = await Promise.all(takeovers);
  if (takeoverSeconds.length < 2) problems.push(`the active indexer was killed ${takeoverSeconds.length} times, not at least twice`);
  takeoverSeconds.forEach((s, i) => {
    if (s === undefined || s > TAKEOVER_LIMIT_SECONDS) problems.push(`indexer takeover ${i + 1}: ${s === undefined ? "no block indexed within 60 s" : `${s.toFixed(1)} s`} (limit ${TAKEOVER_LIMIT_SECONDS} s)`);
  });
  const fundedSeconds = await Promise.all(fundedAfterKill);
  fundedSeconds.forEach((s, i) => {
    if (s === undefined || s > FUNDED_AFTER_KILL_LIMIT_SECONDS) problems.push(`indexer takeover ${i + 1}: the next payment FUNDED ${s === undefined ? "not within 60 s" : `${s.toFixed(1)} s`} after the kill (limit ${FUNDED_AFTER_KILL_LIMIT_SECONDS} s)`);
  });
  if (Math.abs(accepted - expected) > expected * 0.1) problems.push(`the hammer: ${accepted} requests accepted through ${apis.length} APIs, expected ${expected} ± 10 % (burst ${LIMIT.burst} + ${LIMIT.perSecond}/s × ${hammerSeconds.toFixed(1)} s)`);
  if (answers.has(500)) problems.push(`a 500 answer to the traffic (${JSON.stringify(Object.fromEntries(answers))})`);
  if (hammerOdd.length) problems.push(`the hammer was answered neither 200 nor 429: ${hammerOdd.join("; ")}`);

  console.log(
    JSON.stringify({
      suite: "cluster",
      sessions: sessions.length,
      paid: sessions.filter((s) => s.pay).length,
      canceled: toCancelCount(sessions),
      kills: kills.length,
      killed: kills.map((k) => `${k.at}s ${k.name}`),
      takeoverSeconds: takeoverSeconds.map((s) => (s === undefined ? null : Number(s.toFixed(1)))),
      fundedAfterKillSeconds: fundedSeconds.map((s) => (s === undefined ? null : Number(s.toFixed(1)))),
      hammer: { accepted, expected, ratio: Number((accepted / expected).toFixed(2)), answers: Object.fromEntries(hammerAnswers) },
      answers: Object.fromEntries(answers),
      proxyFailures: proxy.failures(),
      eventsDelivered: new Set(deliveries(receiver).map((d) => d.id)).size,
      paidBaseUnits: paid.toString(),
      settledBaseUnits: money.settled.toString(),
      problems: problems.length,
      seconds: Math.round((Date.now() - t0) / 1000),
    }),
  );
  // A slow takeover is explained by what the indexer nodes said (the seat, their Ponders).
  if (problems.some((p) => p.startsWith("indexer takeover")) || process.env.CLUSTER_INDEXER_LOGS) for (const p of indexers) say(`${p.name} (last lines):\n${p.log().split("\n").filter((l) => !l.startsWith("{")).slice(-40).join("\n")}`);
  if (problems.length) throw new Error(`cluster suite failed:\n${problems.slice(0, 30).join("\n")}${problems.length > 30 ? `\n… and ${problems.length - 30} more` : ""}`);
}

const toCancelCount = (sessions: { pay: boolean }[]) => sessions.filter((s) => !s.pay).length;

/**
 * The relayer's nonces and the sweeps on the chain: per relayer, the transactions not `dropped`
 * hold nonces 0..n-1 and n is the chain's nonce; the mined receipts move each paid deposit
 * exactly once and each canceled one never; no other Transfer out of a deposit exists.
 */
async function relayerProblems(sql: postgres.Sql, publicClient: ReturnType<typeof localClients>["publicClient"], token: Address, sessions: { id: string; deposit: Address; pay: boolean }[]) {
  const problems: string[] = [];
  const rows = decodeRows(RelayerTx, await sql`select relayer, nonce, state, tx_hashes from app.sweep_transactions where chain_id = ${CHAIN_ID} and state <> 'dropped' order by relayer, nonce`);
  const outOfDeposit = new Map<string, number>();
  for (const relayer of new Set(rows.map((r) => r.relayer))) {
    const mine = rows.filter((r) => r.relayer === relayer);
    const nonces = mine.map((r) => r.nonce);
    const gaps = nonces.filter((n, i) => n !== BigInt(i));
    if (gaps.length) problems.push(`relayer ${relayer}: nonces ${nonces.join(",")} are not 0..${nonces.length - 1}`);
    const onChain = await publicClient.getTransactionCount({ address: getAddress(relayer), blockTag: "latest" });
    if (onChain !== mine.length) problems.push(`relayer ${relayer}: ${mine.length} live transactions recorded, the chain's nonce is ${onChain}`);
    for (const r of mine) {
      if (r.state !== "mined") {
        problems.push(`relayer ${relayer} nonce ${r.nonce}: ${r.state}, not mined`);
        continue;
      }
      let receipt: TransactionReceipt | undefined;
      for (const h of r.tx_hashes) receipt ??= await publicClient.getTransactionReceipt({ hash: h }).catch(() => undefined);
      if (!receipt) {
        problems.push(`relayer ${relayer} nonce ${r.nonce}: no receipt for any of ${r.tx_hashes.join(", ")}`);
        continue;
      }
      for (const log of parseEventLogs({ abi: testUsdAbi, logs: receipt.logs, eventName: "Transfer" })) {
        if (getAddress(log.address) !== getAddress(token)) continue;
        const from = getAddress((log.args as { from: Address }).from);
        outOfDeposit.set(from, (outOfDeposit.get(from) ?? 0) + 1);
      }
    }
  }
  // Every Transfer out of a deposit on the whole chain, whoever sent it.
  const all = await publicClient.getContractEvents({ address: token, abi: testUsdAbi, eventName: "Transfer", fromBlock: 0n });
  const onChainOut = new Map<string, number>();
  for (const e of all) {
    const from = getAddress((e.args as { from: Address }).from);
    onChainOut.set(from, (onChainOut.get(from) ?? 0) + 1);
  }
  for (const s of sessions) {
    const want = s.pay ? 1 : 0;
    const swept = outOfDeposit.get(s.deposit) ?? 0;
    const anyOut = onChainOut.get(s.deposit) ?? 0;
    if (swept !== want || anyOut !== want) problems.push(`${s.id}: deposit ${s.deposit} moved out by ${swept} recorded mined transaction(s) and ${anyOut} Transfer(s) on the chain, expected ${want}`);
  }
  return problems;
}

let code = 0;
try {
  await main();
} catch (e) {
  console.error(describeError(e, { stack: true }));
  code = 1;
} finally {
  await Promise.all(procs.map((p) => p.stop()));
  await receiver.stop();
  proxy?.stop();
  await db?.end().catch(() => {});
  await chain?.stop().catch(() => {});
  await pg?.stop().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
}
process.exit(code);
