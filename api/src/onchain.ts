/**
 * The on-chain side of a running service, in the order main.ts starts it:
 *   1. in dev, a local anvil test network with TestUSD and the deposit factory deployed
 *      (idempotent; chain state kept in the data dir) — before the API, whose workers use it;
 *   2. once the API and its Postgres are up, the Ponder indexer as a child process writing
 *      to that Postgres, whenever a network is configured.
 */
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Config } from "./config.ts";
import type { ChainsConfig } from "../../shared/chains/config.ts";
import { startDevChain, type DevChain } from "../../shared/devchain/index.ts";
import { ensureDeployed } from "../../shared/contracts/deploy.ts";
import { localClients } from "../../shared/devchain/clients.ts";
import { startIndexer, type IndexerProcess } from "../../indexer/process.ts";

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

export async function startIndexerBeside(opts: {
  config: Config;
  chains: ChainsConfig;
  databaseUrl: string;
  env: Record<string, string | undefined>;
  log: (line: string) => void;
  /** The indexer exited after it started (a crash, a refused configuration). */
  onExit?: (err: unknown) => void;
}): Promise<IndexerProcess | undefined> {
  const { config, chains, log } = opts;
  if (chains.networks.length === 0) {
    log("no network configured (SERVICE_RPC_URL_<KEY>): indexer not started");
    return undefined;
  }
  if (!config.indexerEnabled) return undefined;
  const indexer = await startIndexer({ databaseUrl: opts.databaseUrl, port: config.indexerPort, env: opts.env, notice: log });
  log(`indexer   ${indexer.url}  (SQL ${indexer.url}/sql, GraphQL ${indexer.url}/graphql; ${chains.indexMode} mode; networks: ${chains.networks.map((n) => n.key).join(", ")})`);
  // The API does not wait for the indexer's backfill: it serves meanwhile (/readyz says how
  // far behind the indexer is) and payments are detected once the indexer reaches their blocks.
  const started = Date.now();
  const slow = setTimeout(
    () => log(`indexer   still catching up after ${Math.round(config.indexerReadyTimeoutMs / 1000)} s (GET /readyz: blocks behind per network)`),
    config.indexerReadyTimeoutMs,
  );
  indexer
    .waitUntilReady(Number.MAX_SAFE_INTEGER)
    .then(() => log(`indexer   caught up (${((Date.now() - started) / 1000).toFixed(1)} s after start)`))
    .catch((err) => {
      if (!indexer.stopped) opts.onExit?.(err);
    })
    .finally(() => clearTimeout(slow));
  return indexer;
}
