/**
 * Liveness and readiness answers (health.ts).
 */
import { t } from "elysia";
import { IndexerLag } from "./indexer-lag.ts";

export const Health = t.Object({ status: t.String() });

const NullableString = t.Union([t.String(), t.Null()]);

const NullableBool = t.Union([t.Boolean(), t.Null()]);

const NodesSummary = t.Object(
  {
    self: t.String({ description: "the id of the node that answered (app.nodes)" }),
    alive: t.Integer({ description: "live nodes: processes of the service that beat within the last seconds" }),
    roles: t.Record(t.String(), t.Integer(), { description: "live nodes per role (api, actors, sweeper, webhooks, indexer); a process may have several" }),
    versions: t.Array(t.String(), { description: "the builds the live nodes run (version and newest migration): more than one during a rolling upgrade" }),
    indexer: t.Union(
      [
        t.Object({
          node: t.String({ description: "the node whose index the service reads (it holds the indexer lease; every indexer node writes an index of its own)" }),
          host: NullableString,
          since: t.String(),
          leaseValid: t.Boolean({ description: "false: its holder stopped renewing (died?) and no standby has taken over yet" }),
        }),
        t.Null(),
      ],
      { description: "which node indexes (how far behind: each network's `indexer`); null when none has since the last clean stop" },
    ),
  },
  { description: "the service's processes, from the node registry (`bun run admin nodes` lists them)" },
);

export const Readiness = t.Object({
  status: t.String({ description: '"ready": the database is migrated and every enabled network is ready; "degraded": some network is not ready (its sessions are not offered), see `networks`' }),
  networks: t.Array(
    t.Object({
      key: t.String(),
      chainId: t.Integer(),
      name: t.String(),
      environment: t.String(),
      ready: t.Boolean({ description: "sessions are offered on it: right chain and stablecoin, deposit factory deployed" }),
      checkedAt: t.String(),
      rpcReachable: t.Boolean(),
      chainIdSeen: t.Union([t.Integer(), t.Null()]),
      headBlock: NullableString,
      factory: t.Object({ address: t.String(), present: NullableBool }),
      authorizationBatch: t.Object(
        { address: t.String(), present: NullableBool },
        { description: "AuthorizationBatch: with it, the relayer submits several payers' authorizations in one transaction; without it, one per transaction" },
      ),
      stablecoin: t.Object(
        { symbol: t.String(), address: t.String(), present: NullableBool, decimals: t.Union([t.Integer(), t.Null()]) },
        { description: "the network's main stablecoin (the first of `stablecoins`)" },
      ),
      stablecoins: t.Array(t.Object({ symbol: t.String(), address: t.String(), present: NullableBool, decimals: t.Union([t.Integer(), t.Null()]) }), {
        description: "every stablecoin accepted on the network (SERVICE_STABLECOINS_<KEY>), the main one first",
      }),
      relayer: t.Object({ address: NullableString, balance: NullableString, minBalance: t.String(), low: NullableBool }),
      problems: t.Array(t.String()),
      warnings: t.Array(t.String()),
      indexer: IndexerLag,
    }),
  ),
  nodes: t.Union([NodesSummary, t.Null()], { description: "null when the registry did not answer in time" }),
});
