/**
 * The on-chain side of a running service: in dev, a local anvil test network with TestUSD
 * and the deposit factory deployed (idempotent, state kept in the data dir); and, whenever a
 * network is configured, the Ponder indexer as a child process writing to our Postgres.
 */
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Config } from "./config.ts";
import { loadChainsConfig } from "../../shared/chains/config.ts";
import { startDevChain, type DevChain } from "../../shared/devchain/index.ts";
import { ensureDeployed } from "../../shared/contracts/deploy.ts";
import { localClients } from "../../shared/testing/clients.ts";
import { startIndexer, type IndexerProcess } from "../../indexer/process.ts";

export const LOCAL_CHAIN_ID = 31337;

export interface Onchain {
  /** RPC of the local dev chain, when this process runs one. */
  rpcUrl?: string;
  indexerUrl?: string;
  /** The env the chain registry reads (process env plus the dev chain's RPC URL). */
  chainEnv: Record<string, string | undefined>;
  stop(): Promise<void>;
}

export async function startOnchain(opts: {
  config: Config;
  databaseUrl: string;
  dev: boolean;
  env?: Record<string, string | undefined>;
  log: (line: string) => void;
}): Promise<Onchain> {
  const { config, log } = opts;
  const chainEnv: Record<string, string | undefined> = { ...(opts.env ?? process.env) };
  let chain: DevChain | undefined;
  let indexer: IndexerProcess | undefined;
  const stop = async () => {
    await indexer?.stop();
    await chain?.stop();
  };
  try {
    if (opts.dev && !chainEnv.SERVICE_RPC_URL_LOCAL) {
      const dir = resolve(config.dataDir, "anvil");
      mkdirSync(dir, { recursive: true });
      chain = await startDevChain({ port: config.devChainPort, chainId: LOCAL_CHAIN_ID, stateFile: join(dir, "state.json") });
      chainEnv.SERVICE_RPC_URL_LOCAL = chain.rpcUrl;
      const { token, factory, deployed } = await ensureDeployed(localClients(chain.rpcUrl, LOCAL_CHAIN_ID));
      log(`local test network ${chain.rpcUrl} (chain ${LOCAL_CHAIN_ID}): TestUSD ${token}, deposit factory ${factory}${deployed.length ? ` (deployed ${deployed.join(", ")})` : ""}`);
    }
    const chains = loadChainsConfig(chainEnv);
    if (config.indexerEnabled && chains.networks.length > 0) {
      indexer = await startIndexer({ databaseUrl: opts.databaseUrl, port: config.indexerPort, env: chainEnv });
      await indexer.waitUntilReady(config.indexerReadyTimeoutMs);
      log(`indexer   ${indexer.url}  (SQL ${indexer.url}/sql, GraphQL ${indexer.url}/graphql; ${chains.indexMode} mode; networks: ${chains.networks.map((n) => n.key).join(", ")})`);
    } else if (chains.networks.length === 0) {
      log("no network configured (SERVICE_RPC_URL_<KEY>): indexer not started");
    }
    return { rpcUrl: chain?.rpcUrl, indexerUrl: indexer?.url, chainEnv, stop };
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }
}
