/**
 * Ponder configuration, built from the chain registry and the environment (shared/chains):
 * one Ponder chain per enabled network (SERVICE_RPC_URL_<KEY>), the stablecoin's Transfer
 * event from that network's start block, and a per-block ChainHead source.
 *
 * Start blocks must be explicit here: indexer/process.ts resolves "head when first started"
 * once, persists it (indexer_meta.start_blocks) and passes SERVICE_START_BLOCK_<KEY> on, so a
 * restart neither skips nor re-scans. Run Ponder through indexer/process.ts (see indexer/README.md).
 */
import { createConfig } from "ponder";
import { parseAbiItem } from "viem";
import { loadChainsConfig, type NetworkConfig } from "./shared/chains/config.ts";
import { envSuffix } from "./shared/chains/presets.ts";

const transferEvent = parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)");

const { networks, indexMode } = loadChainsConfig(process.env);
if (networks.length === 0) {
  throw new Error("No network enabled: set at least one SERVICE_RPC_URL_<KEY> (see shared/chains/config.ts)");
}

function startBlockOf(n: NetworkConfig): number {
  if (n.startBlock === null) {
    throw new Error(
      `SERVICE_START_BLOCK_${envSuffix(n.key)} is not set: start the indexer with indexer/process.ts, which persists the head as the start block`,
    );
  }
  return n.startBlock;
}

// Poll about twice per block, at most once a second (Ponder's default), overridable for benches.
const pollOverride = Number(process.env.SERVICE_INDEXER_POLLING_MS) || undefined;

const perChain = <T>(f: (n: NetworkConfig) => T) => Object.fromEntries(networks.map((n) => [n.key, f(n)]));

export default createConfig({
  // Each chain advances on its own: a slow chain never delays another chain's deposits.
  ordering: "multichain",
  database: { kind: "postgres", connectionString: process.env.DATABASE_URL },
  chains: perChain((n) => ({
    id: n.chainId,
    rpc: n.rpcUrl,
    pollingInterval: pollOverride ?? Math.min(1000, (n.blockTimeSeconds * 1000) / 2),
    // Bounded mode: don't cache every raw USDC log of main networks in ponder_sync.
    disableCache: indexMode === "bounded",
  })),
  contracts: {
    Stablecoin: {
      abi: [transferEvent],
      chain: perChain((n) => ({ address: n.stablecoin.address, startBlock: startBlockOf(n) })),
    },
  },
  blocks: {
    ChainHead: {
      chain: perChain((n) => ({ startBlock: startBlockOf(n) })),
      interval: 1,
    },
  },
});
