/**
 * The indexer takeover as a payer sees it: from the SIGKILL of the indexer node whose index the
 * service reads to the next payment FUNDED. The stack an operator runs on two hosts, on this one:
 * embedded Postgres, the local chain (a heartbeat block a second), one service process (API,
 * session runner, sweeper; SERVICE_INDEXER=false) and two `bun run indexer` nodes, each with its
 * own Ponder into its own schema (docs/topology.md: the standby is warm). Each round: a payment
 * at rest (the floor: sent → FUNDED, nobody killed), then the seat holder killed with its process
 * group and a payment sent at once — kill → FUNDED — then the killed node started again and given
 * time to catch up. Prints one JSON line: the floor, each round's kill → FUNDED and the takeover
 * alone (kill → the views seen on the standby's schema, looked at every 50 ms), and kill → FUNDED as a ratio to the floor.
 * BENCH_TAKEOVERS (3) rounds.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { getAddress } from "viem";
import { startEmbeddedPostgres } from "../api/src/db/embedded.ts";
import { startDevChain } from "../shared/devchain/index.ts";
import { localClients } from "../shared/devchain/clients.ts";
import { ensureDeployed, mintTestUsd } from "../shared/contracts/deploy.ts";
import { viewsFollow } from "../indexer/views.ts";
import { freePort } from "../testing/ports.ts";
import { apiClient, childEnv, createMerchantKey, groupProcess, processGroupOf, waitHealthy, type GroupProcess } from "../testing/suite-processes.ts";
import { percentile, round } from "./lib.ts";

const ROUNDS = Number(process.env.BENCH_TAKEOVERS ?? 3);
const CHAIN_ID = 31337;

const dir = mkdtempSync(join(tmpdir(), "paysession-bench-takeover-"));
const pg = await startEmbeddedPostgres({ dataDir: join(dir, "pg"), port: await freePort(), supervise: false });
const sql = postgres(pg.url, { max: 2, onnotice: () => {} });
const chain = await startDevChain({ port: await freePort(), chainId: CHAIN_ID, heartbeatSeconds: 1 });
const clients = localClients(chain.rpcUrl, CHAIN_ID);
const procs: GroupProcess[] = [];


try {
  const { token } = await ensureDeployed(clients);
  const apiPort = await freePort();
  const env = childEnv({ DATABASE_URL: pg.url, SERVICE_RPC_URL_LOCAL: chain.rpcUrl, SERVICE_DATA_DIR: join(dir, "data"), SERVICE_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString("base64") });
  const api = groupProcess("api", ["api/src/main.ts"], { ...env, SERVICE_INDEXER: "false", SERVICE_PORT: String(apiPort), SERVICE_RATE_LIMIT_PER_SECOND: "1000", SERVICE_RATE_LIMIT_BURST: "1000" });
  procs.push(api);
  api.start();
  await waitHealthy(api, `http://127.0.0.1:${apiPort}/healthz`);
  const indexers = [groupProcess("indexer-1", ["run", "indexer"], { ...env, SERVICE_INDEXER_PORT: String(await freePort()) }), groupProcess("indexer-2", ["run", "indexer"], { ...env, SERVICE_INDEXER_PORT: String(await freePort()) })];
  procs.push(...indexers);
  for (const p of indexers) p.start();
  const call = apiClient(`http://127.0.0.1:${apiPort}`, createMerchantKey(env, "Bench takeover"));

  const holderPid = async () => Number((await sql`select n.pid from app.leases l join app.nodes n on n.id = l.holder where l.name = 'indexer' and l.expires_at > now()`)[0]?.pid ?? 0);
  /** The schemas of both nodes' indexes, each at its newest block (both warm: within a block of each other). */
  const heads = async () => {
    const out: Record<string, bigint> = {};
    for (const r of await sql`select nspname from pg_namespace where nspname ~ '^indexer_[0-9]+$'`) {
      const [h] = await sql.unsafe(`select max(block_number)::text as b from "${r.nspname}".chain_heads`).catch(() => [{ b: null }]);
      if (h?.b) out[String(r.nspname)] = BigInt(h.b);
    }
    return out;
  };
  const caughtUp = async () => {
    const chainHead = await clients.publicClient.getBlockNumber({ cacheTime: 0 });
    const h = Object.values(await heads());
    return h.length === 2 && h.every((b) => b >= chainHead - 1n);
  };
  const until = async (what: string, probe: () => Promise<boolean>, ms = 120_000) => {
    for (const by = Date.now() + ms; !(await probe()); await Bun.sleep(50)) if (Date.now() > by) throw new Error(`bench/takeover: ${what} not within ${ms} ms`);
  };
  await until("both indexes caught up and a seat holder", async () => (await caughtUp()) && (await holderPid()) > 0 && (await viewsFollow(sql)) !== null);

  /** Creates a session, pays it at once; resolves to the ms from `from` (default: the send) to its FUNDED. */
  const payAndTime = async (from?: number) => {
    const r = await call("POST", "/payment-sessions", { amount: "1.00", currency: "USD" });
    if (r.status !== 201) throw new Error(`create: ${r.status} ${JSON.stringify(r.body)}`);
    const id = r.body.paymentSessionId as string;
    const n = r.body.networks[0];
    const sent = Date.now();
    await mintTestUsd({ ...clients, to: getAddress(n.depositAddress), amount: BigInt(n.amountBaseUnits), token });
    let funded: number | undefined;
    await until(`session ${id} FUNDED`, async () => {
      const [e] = await sql`select (extract(epoch from created_at) * 1000)::float8 as at from app.session_events where session_id = ${id} and status = 'FUNDED'`;
      funded = e ? Number(e.at) : undefined;
      return funded !== undefined;
    }, 90_000);
    return funded! - (from ?? sent);
  };

  const floor: number[] = [];
  const killToFunded: number[] = [];
  const killToViews: number[] = [];
  for (let round_ = 0; round_ < ROUNDS; round_++) {
    floor.push(await payAndTime());
    const pid = await holderPid();
    const victim = indexers.find((p) => p.pid() !== undefined && p.pid() === processGroupOf(pid))!;
    const before = await viewsFollow(sql);
    const at = Date.now();
    victim.kill();
    const viewsMoved = until("the views on the standby's schema", async () => {
      const now = await viewsFollow(sql);
      return now !== null && now !== before;
    }).then(() => killToViews.push(Date.now() - at));
    killToFunded.push(await payAndTime(at));
    await viewsMoved;
    victim.start();
    await until("the killed node back and caught up", caughtUp);
  }
  const ms = (xs: number[]) => xs.map((x) => round(x, 0));
  const floorP50 = percentile([...floor].sort((a, b) => a - b), 50);
  console.log(
    JSON.stringify({
      bench: "takeover",
      note: "2-core machine shared with other engineers: absolute figures vary with its load; compare ratios within a run",
      rounds: ROUNDS,
      floor_sent_to_funded_ms: ms(floor),
      kill_to_funded_ms: ms(killToFunded),
      kill_to_views_seen_on_standby_ms: ms(killToViews),
      kill_to_funded_over_floor_p50: killToFunded.map((x) => round(x / floorP50, 2)),
    }),
  );
} catch (e) {
  for (const p of procs) console.error(`${p.name}:\n${p.log().split("\n").filter((l) => !l.startsWith("{")).slice(-30).join("\n")}`);
  throw e;
} finally {
  for (const p of procs) await p.stop();
  await sql.end().catch(() => {});
  await chain.stop().catch(() => {});
  await pg.stop().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
}
