/** Liveness and readiness for orchestrators. */
import { Elysia } from "elysia";
import { ApiError } from "../errors.ts";
import { readMigrations } from "../db/migrate.ts";
import { doc, Health, Readiness } from "./schemas.ts";
import type { NetworkStatus } from "../onchain/network-status.ts";
import type { Services } from "./services.ts";

const TAG = "Health";
/** /readyz asks the chains at most this often (it is public). */
const READYZ_MAX_AGE_MS = 5000;

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
    stablecoin: { symbol: s.stablecoin.symbol, address: s.stablecoin.address, present: s.stablecoin.present, decimals: s.stablecoin.decimals },
    relayer: { address: s.relayer.address, balance: s.relayer.balance, minBalance: s.relayer.minBalance, low: s.relayer.low },
    problems: [...s.fatal, ...s.notReady],
    warnings: s.warnings,
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
        try {
          const rows = await services.database.sql`select tag from app.__migrations`;
          const applied = new Set(rows.map((r) => r.tag as string));
          if (expected.some((tag) => !applied.has(tag))) throw new Error("migrations pending");
        } catch {
          throw new ApiError("service_unavailable", "The database is unreachable or not migrated.");
        }
        const networks = (await services.readiness.check(READYZ_MAX_AGE_MS)).map(networkView);
        return { status: networks.every((n) => n.ready) ? "ready" : "degraded", networks };
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Readiness: the database answers and is migrated; each network's state",
          description:
            "200 while the database is up and migrated. `status` is `degraded` when an enabled network is not ready (its deposit factory is not deployed yet): sessions are then not offered on it. Per network: RPC reachable, chain id, head block, factory and stablecoin present, the relayer's balance and whether it is under its threshold.",
          ok: { status: 200, schema: Readiness, description: "Ready (or degraded)." },
          errors: ["service_unavailable"],
        }),
      },
    );
}
