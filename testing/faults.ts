/**
 * `bun run test:faults` — the fault suite: what production does to a service, done to a real
 * one on this machine (every address is 127.0.0.1). One `bun api/src/main.ts` process (API,
 * session runner, sweeper, webhook worker, Ponder indexer as its child) on its own Postgres and
 * a local chain reached through a proxy we can cut; 120 sessions created and paid while:
 *
 *   (a) the whole service is SIGKILLed (process group: the indexer too) and restarted, twice;
 *   (b) Postgres is SIGKILLed and comes back 5 s later;
 *   (c) the RPC is unreachable for 30 s (every connection refused or cut);
 *   (d) the webhook receiver answers 500 for 60 s.
 *
 * After recovery it prints one JSON line and asserts: every session SUCCEEDED with exactly one
 * PENDING, FUNDED and SUCCEEDED (no lost or duplicated transition, sequences 1..n), every event
 * delivered at least once and first delivered in order per session, the settlement received
 * exactly what was paid, and nothing is left on any deposit address. Exits non-zero otherwise.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Socket, TCPSocketListener } from "bun";
import postgres from "postgres";
import { getAddress, type Address } from "viem";
import { ensureDeployed, mintTestUsd } from "../shared/contracts/deploy.ts";
import { startDevChain, type DevChain } from "../shared/devchain/index.ts";
import { localClients } from "../shared/devchain/clients.ts";
import { freePort } from "./ports.ts";
import { apiClient, childEnv, createMerchantKey, groupProcess, waitHealthy, type GroupProcess } from "./suite-processes.ts";
import { deliveries, deliveryProblems, historyProblems, moneyProblems } from "./suite-checks.ts";
import { startReceiver } from "./webhook-receiver.ts";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../api/src/db/embedded.ts";
import { describeError } from "../shared/describe-error.ts";

const SESSIONS = Number(process.env.FAULTS_SESSIONS ?? 120);
const t0 = Date.now();
const say = (line: string) => console.error(`[faults +${((Date.now() - t0) / 1000).toFixed(1)}s] ${line}`);
function check(cond: unknown, what: string): asserts cond {
  if (!cond) throw new Error(`fault suite failed: ${what}`);
}

const dir = mkdtempSync(join(tmpdir(), "paysession-faults-"));
let pg: EmbeddedDatabase | undefined;
let chain: DevChain | undefined;
let proxy: RpcProxy | undefined;
let service: GroupProcess | undefined;

// ------------------------------------------------------------------ the parts we break

/** A TCP proxy in front of the chain's RPC that can be cut: refused and reset connections. */
interface RpcProxy {
  url: string;
  setDown(down: boolean): void;
  stop(): void;
}

function startRpcProxy(port: number, target: number): RpcProxy {
  let down = false;
  const open = new Set<Socket<{ upstream?: Socket<unknown> }>>();
  const server: TCPSocketListener<{ upstream?: Socket<unknown>; pending: Uint8Array[] }> = Bun.listen({
    hostname: "127.0.0.1",
    port,
    socket: {
      async open(client) {
        if (down) return void client.end();
        client.data = { pending: [] };
        open.add(client as never);
        try {
          const upstream = await Bun.connect({
            hostname: "127.0.0.1",
            port: target,
            socket: {
              data: (_s, d) => void client.write(d),
              close: () => void client.end(),
              error: () => void client.end(),
            },
          });
          client.data.upstream = upstream as never;
          for (const chunk of client.data.pending) upstream.write(chunk);
          client.data.pending = [];
        } catch {
          client.end();
        }
      },
      data(client, d) {
        if (down) return void client.end();
        if (client.data.upstream) client.data.upstream.write(d);
        else client.data.pending.push(new Uint8Array(d));
      },
      close(client) {
        open.delete(client as never);
        client.data?.upstream?.end();
      },
      error(client) {
        client.data?.upstream?.end();
      },
    },
  });
  return {
    url: `http://127.0.0.1:${port}`,
    setDown(d) {
      down = d;
      if (d) for (const c of open) c.end();
    },
    stop: () => server.stop(true),
  };
}

/** Kills the Postgres server the hard way: its postmaster, by the PID in its data directory. */
function killPostgres(dataDir: string): void {
  const pid = Number(readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
  process.kill(pid, "SIGKILL");
}

// ------------------------------------------------------------------ the webhook receiver

let receiverFailing = false;
const receiver = startReceiver();
receiver.behave(() => (receiverFailing ? new Response("down for maintenance", { status: 500 }) : undefined));

// ------------------------------------------------------------------ the service

async function main() {
  const pgPort = await freePort();
  const pgDir = join(dir, "pg");
  pg = await startEmbeddedPostgres({ dataDir: pgDir, port: pgPort, supervise: false }); // an outside Postgres: its outage lasts until the suite brings it back
  chain = await startDevChain({ port: await freePort(), chainId: 31337, stateFile: join(dir, "anvil-state.json"), heartbeatSeconds: 1, persistEachBlock: true });
  const clients = localClients(chain.rpcUrl, 31337);
  const { token } = await ensureDeployed(clients);
  proxy = startRpcProxy(await freePort(), Number(new URL(chain.rpcUrl).port));
  const port = await freePort();
  const host = `http://127.0.0.1:${port}`;
  const env = childEnv({
    DATABASE_URL: pg.url,
    SERVICE_RPC_URL_LOCAL: proxy.url,
    SERVICE_PORT: String(port),
    SERVICE_INDEXER_PORT: String(await freePort()),
    SERVICE_DATA_DIR: join(dir, "data"),
    SERVICE_PUBLIC_URL: host,
  });
  // Its own process group, so that a kill takes the indexer child down with it.
  service = groupProcess("the service", ["api/src/main.ts"], env);
  const startService = async () => {
    service!.start();
    await waitHealthy(service!, `${host}/healthz`);
  };
  const killService = () => service!.kill();

  // The merchant, its sandbox key and a webhook endpoint.
  await startService();
  const call = apiClient(host, createMerchantKey(env, "Faults"));
  const ep = await call("POST", "/webhook-endpoints", { url: `${receiver.url}/hook` });
  check(ep.status === 201, `webhook endpoint: ${JSON.stringify(ep.body)}`);
  say(`service up on ${host}; ${SESSIONS} sessions to pay while faults happen`);

  // ---------------------------------------------------------------- traffic and faults together
  const statusCounts = new Map<number, number>();
  const sessions: { id: string; deposit: Address; baseUnits: bigint }[] = [];
  let paidTotal = 0n;
  const traffic = (async () => {
    for (let i = 0; i < SESSIONS; i++) {
      const idem = `faults-${i}`;
      let created: { status: number; body: any } | undefined;
      for (;;) {
        created = await call("POST", "/payment-sessions", { amount: `${1 + (i % 5)}.${String(i % 100).padStart(2, "0")}`, currency: "USD" }, { "idempotency-key": idem }).catch(
          () => ({ status: 0, body: {} }),
        );
        statusCounts.set(created.status, (statusCounts.get(created.status) ?? 0) + 1);
        if (created.status === 201 || created.status === 200) break;
        await Bun.sleep(500); // down, restarting, or its database is: the same request again
      }
      const n = created.body.networks[0];
      const deposit = getAddress(n.depositAddress);
      const baseUnits = BigInt(n.amountBaseUnits);
      // The payer pays on the chain directly: the service's own outages are not the payer's.
      await mintTestUsd({ ...clients, to: deposit, amount: baseUnits, token });
      paidTotal += baseUnits;
      sessions.push({ id: created.body.paymentSessionId, deposit, baseUnits });
      await Bun.sleep(150);
    }
  })();
  const faults = (async () => {
    await Bun.sleep(4_000);
    say("(d) the webhook receiver fails for 60 s");
    receiverFailing = true;
    setTimeout(() => {
      receiverFailing = false;
      say("(d) the webhook receiver answers again");
    }, 60_000);
    await Bun.sleep(2_000);
    say("(a) SIGKILL of the whole service");
    killService();
    await Bun.sleep(1_000);
    await startService();
    say("(a) the service is back");
    await Bun.sleep(3_000);
    say("(b) SIGKILL of Postgres; back in 5 s");
    killPostgres(pgDir);
    await Bun.sleep(5_000);
    pg = await startEmbeddedPostgres({ dataDir: pgDir, port: pgPort, supervise: false }); // an outside Postgres: its outage lasts until the suite brings it back
    say("(b) Postgres is back");
    await Bun.sleep(3_000);
    say("(c) the RPC is unreachable for 30 s");
    proxy!.setDown(true);
    await Bun.sleep(30_000);
    proxy!.setDown(false);
    say("(c) the RPC answers again");
    await Bun.sleep(3_000);
    say("(a) SIGKILL of the whole service, again");
    killService();
    await Bun.sleep(1_000);
    await startService();
    say("(a) the service is back");
  })();
  await Promise.all([traffic, faults]);
  say(`all ${sessions.length} sessions created and paid; waiting for every one to settle and every event to arrive`);

  // ---------------------------------------------------------------- after recovery
  const by = Date.now() + 240_000;
  let views: any[] = [];
  // Reading all 120 sessions every second is more than the key's rate limit (100/s, burst 200)
  // once the wait lasts: a 429 is waited out as its Retry-After says, as a merchant's client does.
  const read = async (id: string) => {
    for (;;) {
      const r = await call("GET", `/payment-sessions/${id}`);
      if (r.status !== 429) return r.body;
      await Bun.sleep(1_000 * r.retryAfter);
    }
  };
  for (;;) {
    views = await Promise.all(sessions.map((s) => read(s.id)));
    const pending = views.filter((v) => v.status !== "SUCCEEDED");
    const events = views.reduce((n, v) => n + (v.history?.length ?? 0), 0);
    const delivered = new Set(deliveries(receiver).map((r) => r.id)).size;
    if (pending.length === 0 && delivered >= events && !receiverFailing) break;
    check(Date.now() < by, `recovery: ${pending.length} not SUCCEEDED (${[...new Set(pending.map((p) => `${p.status}/${p.statusReason}`))].join(", ")}), ${delivered}/${events} events delivered\n${service.log().slice(-4000)}`);
    await Bun.sleep(1_000);
  }

  // Every session: PENDING, FUNDED, SUCCEEDED once each, sequences 1..n.
  const problems = views.flatMap((v) => historyProblems(v.paymentSessionId, v.history, ["PENDING", "FUNDED", "SUCCEEDED"]));
  // Every event at least once, first delivered in order per session.
  const received = deliveries(receiver);
  problems.push(...deliveryProblems(views.flatMap((v) => v.history.map((h: any) => ({ sessionId: v.paymentSessionId, sequence: h.sequence }))), received));
  // The money: the settlement got exactly what was paid; nothing left behind.
  const db = postgres(pg!.url, { max: 1, onnotice: () => {} });
  const settlements = (await db`select distinct settlement_address as a from app.session_deposits`).map((r) => getAddress(r.a as string));
  await db.end();
  const money = await moneyProblems({ publicClient: clients.publicClient, token, settlements, deposits: sessions.map((s) => s.deposit), paid: paidTotal });
  problems.push(...money.problems);
  check(problems.length === 0, problems.slice(0, 20).join("\n"));
  const settled = money.settled;
  // During the outages a create answers 503 (or cannot connect while the process restarts): never a 500.
  check(!statusCounts.has(500), `no 500 answers (${JSON.stringify(Object.fromEntries(statusCounts))})`);
  const duplicates = received.length - new Set(received.map((r) => r.id)).size;
  console.log(
    JSON.stringify({
      suite: "faults",
      sessions: sessions.length,
      allSucceeded: true,
      eventsDelivered: new Set(received.map((r) => r.id)).size,
      redeliveries: duplicates,
      paidBaseUnits: paidTotal.toString(),
      settledBaseUnits: settled.toString(),
      createAnswers: Object.fromEntries([...statusCounts].map(([k, v]) => [String(k), v])),
      seconds: Math.round((Date.now() - t0) / 1000),
    }),
  );
}

let code = 0;
try {
  await main();
} catch (e) {
  console.error(describeError(e, { stack: true }));
  code = 1;
} finally {
  await service?.stop();
  await receiver.stop();
  proxy?.stop();
  await chain?.stop().catch(() => {});
  await pg?.stop().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
}
process.exit(code);
