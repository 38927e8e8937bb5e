/**
 * The on-chain side of a running service, in the order main.ts starts it:
 *   1. in dev, a local anvil test network with TestUSD and the deposit factory deployed
 *      (idempotent; chain state kept in the data dir) — before the API, whose workers use it;
 *   2. once the API and its Postgres are up, this node's seat at the indexer: the Ponder
 *      indexer as a child process writing to that Postgres while this node holds the indexer
 *      lease, whenever a network is configured (a standby otherwise).
 */
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Config } from "./config.ts";
import type { ChainsConfig } from "../../shared/chains/config.ts";
import { startDevChain, type DevChain } from "../../shared/devchain/index.ts";
import { ensureDeployed } from "../../shared/contracts/deploy.ts";
import { localClients } from "../../shared/devchain/clients.ts";
import { startIndexer, type IndexerProcess } from "../../indexer/process.ts";
import type { Sql } from "postgres";
import { IndexerSeat } from "./nodes/indexer-seat.ts";
import type { IndexerState } from "./nodes/registry.ts";

export const LOCAL_CHAIN_ID = 31337;

/** The env the chain registry reads: in dev, the local network is ours unless one is configured. */
export function chainEnvFor(config: Config, dev: boolean, env: Record<string, string | undefined>) {
  const ownLocalChain = dev && !env.SERVICE_RPC_URL_LOCAL;
  return {
    ownLocalChain,
    env: ownLocalChain ? { ...env, SERVICE_RPC_URL_LOCAL: `http://127.0.0.1:${config.devChainPort}` } : { ...env },
  };
}

export async function startLocalNetwork(config: Config, log: (line: string) => void): Promise<DevChain> {
  const dir = resolve(config.dataDir, "anvil");
  mkdirSync(dir, { recursive: true });
  const chain = await startDevChain({ port: config.devChainPort, chainId: LOCAL_CHAIN_ID, stateFile: join(dir, "state.json"), heartbeatSeconds: 1, persistEachBlock: true });
  try {
    const { token, usdt, factory, batch, deployed } = await ensureDeployed(localClients(chain.rpcUrl, LOCAL_CHAIN_ID));
    log(`local test network ${chain.rpcUrl} (chain ${LOCAL_CHAIN_ID}): TestUSD ${token}, TestUSDT ${usdt}, deposit factory ${factory}, AuthorizationBatch ${batch}${deployed.length ? ` (deployed ${deployed.join(", ")})` : ""}`);
    return chain;
  } catch (err) {
    await chain.stop();
    throw err;
  }
}

/**
 * This node's seat at the indexer (nodes/indexer-seat.ts): it runs Ponder while it holds the
 * indexer lease, and waits as a standby while another node does. Undefined when the indexer is
 * off here (SERVICE_INDEXER=false) or no network is configured.
 */
export async function startIndexerSeat(opts: {
  config: Config;
  chains: ChainsConfig;
  databaseUrl: string;
  /** The node's own pool, for the lease. */
  sql: Sql;
  nodeId: string;
  env: Record<string, string | undefined>;
  log: (line: string) => void;
  onState?: (state: IndexerState) => void;
  /** The indexer failed to start, or exited after it started, while this node held the lease. */
  onFailure?: (err: unknown) => void;
}): Promise<IndexerSeat | undefined> {
  const { config, chains, log } = opts;
  if (chains.networks.length === 0) {
    log("no network configured (SERVICE_RPC_URL_<KEY>): indexer not started");
    return undefined;
  }
  if (!config.indexerEnabled) return undefined;
  const seat = new IndexerSeat({
    sql: opts.sql,
    nodeId: opts.nodeId,
    log,
    onState: (state) => {
      if (state === "standby") log("indexer   standby: another node holds the indexer lease (or none yet); this one takes over if it stops");
      opts.onState?.(state);
    },
    onFailure: opts.onFailure,
    startIndexer: async () => {
      const indexer = await startIndexer({ databaseUrl: opts.databaseUrl, port: config.indexerPort, env: opts.env, notice: log, clearStaleLock: true });
      log(`indexer   ${indexer.url}  (SQL ${indexer.url}/sql, GraphQL ${indexer.url}/graphql; ${chains.indexMode} mode; networks: ${chains.networks.map((n) => n.key).join(", ")})`);
      reportCatchUp(indexer, config, log);
      return indexer;
    },
  });
  await seat.start();
  return seat;
}

/**
 * The API does not wait for the indexer's backfill: it serves meanwhile (/readyz says how far
 * behind the indexer is) and payments are detected once the indexer reaches their blocks.
 */
function reportCatchUp(indexer: IndexerProcess, config: Config, log: (line: string) => void): void {
  const started = Date.now();
  const slow = setTimeout(
    () => log(`indexer   still catching up after ${Math.round(config.indexerReadyTimeoutMs / 1000)} s (GET /readyz: blocks behind per network)`),
    config.indexerReadyTimeoutMs,
  );
  indexer
    .waitUntilReady(Number.MAX_SAFE_INTEGER)
    .then(() => log(`indexer   caught up (${((Date.now() - started) / 1000).toFixed(1)} s after start)`))
    .catch(() => {
      // An exit is the seat's to report (onFailure).
    })
    .finally(() => clearTimeout(slow));
}
