/**
 * Ponder configuration, built from the chain registry and the environment (shared/chains):
 * one Ponder chain per enabled network (SERVICE_RPC_URL_<KEY>), its accepted stablecoins'
 * Transfer and AuthorizationUsed events from that network's start block, and a per-block ChainHead source.
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
// EIP-3009 (USDC, TestUSD): emitted just before the Transfer of a transferWithAuthorization.
const authorizationUsedEvent = parseAbiItem("event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)");

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
// With a WebSocket (below) polling is only the fallback: new heads arrive as they are mined.
const pollOverride = Number(process.env.SERVICE_INDEXER_POLLING_MS) || undefined;

/**
 * A head subscription (eth_subscribe newHeads) when the node offers one: detection then waits
 * for no poll. SERVICE_WS_URL_<KEY> for a provider; our own local networks (anvil serves
 * WebSocket on its HTTP port) get one by default ("auto"); "off" polls. Ponder falls back to
 * polling if the subscription fails. With a subscription, blocks mined while the indexer was
 * down are taken with the first new head after its start (within one block time on a live chain).
 */
function wsUrlOf(n: NetworkConfig): string | undefined {
  const name = `SERVICE_WS_URL_${envSuffix(n.key)}`;
  const set = process.env[name];
  if (set === "off") return undefined;
  if (set && set !== "auto") {
    if (!/^wss?:\/\//.test(set)) throw new Error(`${name}: expected a ws:// or wss:// URL`);
    return set;
  }
  if (n.environment === "sandbox" && n.chainId >= 31337 && n.chainId <= 31338 && /^http:\/\/(127\.0\.0\.1|localhost)[:/]/.test(n.rpcUrl)) {
    return n.rpcUrl.replace(/^http:/, "ws:");
  }
  return undefined;
}

/**
 * Ponder starts each RPC endpoint at 20 requests a second and raises that slowly; catching up
 * needs about one request per block (each block is fetched for the ChainHead source), so an
 * endpoint listed once catches up at about 20 blocks a second. Listing it N times gives N
 * lanes. Our own local node has no provider quota: 8 lanes. A provider's URL: one lane unless
 * SERVICE_INDEXER_RPC_LANES_<KEY> says more (mind the provider's rate limit).
 */
function rpcOf(n: NetworkConfig): string | string[] {
  const set = Number(process.env[`SERVICE_INDEXER_RPC_LANES_${envSuffix(n.key)}`]);
  const lanes = Number.isInteger(set) && set >= 1 && set <= 32 ? set : wsUrlOf(n) && n.chainId >= 31337 && n.chainId <= 31338 ? 8 : 1;
  return lanes === 1 ? n.rpcUrl : Array.from({ length: lanes }, () => n.rpcUrl);
}

const perChain = <T>(f: (n: NetworkConfig) => T) => Object.fromEntries(networks.map((n) => [n.key, f(n)]));

export default createConfig({
  // Each chain advances on its own: a slow chain never delays another chain's deposits.
  ordering: "multichain",
  database: { kind: "postgres", connectionString: process.env.DATABASE_URL },
  chains: perChain((n) => ({
    id: n.chainId,
    rpc: rpcOf(n),
    ws: wsUrlOf(n),
    pollingInterval: pollOverride ?? Math.min(1000, (n.blockTimeSeconds * 1000) / 2),
    // Bounded mode: don't cache every raw USDC log of main networks in ponder_sync.
    disableCache: indexMode === "bounded",
  })),
  contracts: {
    Stablecoin: {
      abi: [transferEvent, authorizationUsedEvent],
      // Every accepted stablecoin of the network (SERVICE_STABLECOINS_<KEY>): each row says which.
      // (and the preset's others, left out by it: sent by mistake, they are reported and swept).
      chain: perChain((n) => ({ address: [...n.stablecoins.map((c) => c.address), ...(n.strayStablecoins ?? [])], startBlock: startBlockOf(n) })),
    },
  },
  blocks: {
    ChainHead: {
      chain: perChain((n) => ({ startBlock: startBlockOf(n) })),
      interval: 1,
    },
  },
});
