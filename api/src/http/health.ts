/** Liveness and readiness for orchestrators. */
import { Elysia } from "elysia";
import { ApiError } from "../errors.ts";
import { readMigrations } from "../db/migrate.ts";
import { Health, Readiness } from "./health.schemas.ts";
import { doc } from "./schemas.ts";
import type { NetworkStatus } from "../onchain/network-status.ts";
import type { Services } from "./services.ts";
import { indexerLag } from "./indexer-lag.ts";
import { indexerProgress } from "../sessions/indexed.ts";
import { col, decodeRows, rowShape } from "../db/rows.ts";
import { listNodes } from "../nodes/registry.ts";
import { indexerLease } from "../nodes/lease.ts";

const AppliedMigration = rowShape("applied migrations", { tag: col.text });

const TAG = "Health";
/** /readyz asks the chains at most this often (it is public). */
const READYZ_MAX_AGE_MS = 5000;
/** /readyz answers within about a second whatever is down: the database check gets this… */
const READYZ_DB_LIMIT_MS = 700;
/** …and a network probe this; one that takes longer goes on in the background and /readyz shows the last known state. */
const READYZ_PROBE_LIMIT_MS = 250;

function within<T>(p: Promise<T>, ms: number): Promise<T | "late"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([p, new Promise<"late">((r) => (timer = setTimeout(() => r("late"), ms)))]).finally(() => clearTimeout(timer));
}

function networkView(s: NetworkStatus) {
  return {
    key: s.key,
    chainId: s.chainId,
    name: s.name,
    environment: s.environment,
    ready: s.ready,
    checkedAt: s.checkedAt,
    rpcReachable: s.rpc.reachable,
    chainIdSeen: s.chainIdSeen,
    headBlock: s.headBlock,
    factory: s.factory,
    authorizationBatch: s.authorizationBatch,
    stablecoin: { symbol: s.stablecoin.symbol, address: s.stablecoin.address, present: s.stablecoin.present, decimals: s.stablecoin.decimals },
    stablecoins: s.stablecoins.map((c) => ({ symbol: c.symbol, address: c.address, present: c.present, decimals: c.decimals })),
    relayer: { address: s.relayer.address, balance: s.relayer.balance, minBalance: s.relayer.minBalance, low: s.relayer.low },
    problems: [...s.fatal, ...s.notReady],
    warnings: s.warnings,
  };
}

/** The registry in a few lines: live nodes by role, their builds, who indexes. */
async function nodesSummary(services: Services) {
  const [nodes, lease] = await Promise.all([listNodes(services.database.sql), indexerLease(services.database.sql)]);
  const alive = nodes.filter((n) => n.alive);
  const roles: Record<string, number> = {};
  for (const n of alive) for (const r of n.roles) roles[r] = (roles[r] ?? 0) + 1;
  return {
    self: services.presence.info.id,
    alive: alive.length,
    roles,
    versions: [...new Set(alive.map((n) => `${n.version} ${n.migration}`))],
    indexer: lease ? { node: lease.node, host: lease.host, since: lease.since.toISOString(), leaseValid: lease.valid } : null,
  };
}

export function healthRoutes(services: Services) {
  const expected = readMigrations().map((m) => m.tag);
  return new Elysia()
    .get("/healthz", () => ({ status: "ok" }), {
      detail: doc({ tag: TAG, summary: "Liveness: the process answers", ok: { status: 200, schema: Health, description: "Alive." }, errors: [] }),
    })
    .get(
      "/readyz",
      async () => {
        const query = services.database.sql`select tag from app.__migrations`;
        const rows = await within(query, READYZ_DB_LIMIT_MS).catch(() => "late" as const);
        if (rows === "late") {
          query.cancel();
          query.catch(() => {});
          throw new ApiError("service_unavailable", "The database is unreachable (no answer within a second).");
        }
        const applied = new Set(decodeRows(AppliedMigration, rows).map((r) => r.tag));
        if (expected.some((tag) => !applied.has(tag))) throw new ApiError("service_unavailable", "The database is not migrated.");
        // An unreachable RPC never holds /readyz: past the limit, the last known state.
        const probed = services.readiness.check(READYZ_MAX_AGE_MS);
        probed.catch(() => {});
        const fresh = await within(probed, READYZ_PROBE_LIMIT_MS);
        const progressQuery = indexerProgress(services.database.sql);
        const progress = await within(progressQuery, READYZ_DB_LIMIT_MS).catch(() => "late" as const);
        const networks = (fresh === "late" ? services.readiness.current() : fresh).map((s) => {
          const indexer =
            progress === "late"
              ? { state: "not_indexed" as const, indexedBlock: null, blocksBehind: null, message: "the indexer's progress did not answer in time" }
              : indexerLag(progress.ready, progress.heads.get(s.chainId), s.headBlock);
          const view = networkView(s);
          return { ...view, warnings: indexer.state === "catching_up" ? [...view.warnings, `${s.name}: indexer ${indexer.message}`] : view.warnings, indexer };
        });
        const catchingUp = networks.some((n) => n.indexer.state === "catching_up");
        const nodes = await within(nodesSummary(services), READYZ_DB_LIMIT_MS).catch(() => "late" as const);
        return { status: networks.every((n) => n.ready) && !catchingUp ? "ready" : "degraded", networks, nodes: nodes === "late" ? null : nodes };
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Readiness: the database answers and is migrated; each network's state",
          description:
            "200 while the database is up and migrated. `status` is `degraded` when an enabled network is not ready (its deposit factory is not deployed yet): sessions are then not offered on it; or when the indexer is catching up on it (`indexer.state` `catching_up`, `indexer.blocksBehind`): sessions are offered, payments are detected once it gets there. Per network: RPC reachable, chain id, head block, factory and stablecoin present, the relayer's balance and whether it is under its threshold. `nodes`: the service's live processes by role, their builds, and which node indexes.",
          ok: { status: 200, schema: Readiness, description: "Ready (or degraded)." },
          errors: ["service_unavailable"],
        }),
      },
    );
}
