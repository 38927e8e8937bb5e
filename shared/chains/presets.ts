/**
 * The chain registry: one preset per network we know how to serve. Pure data, no I/O.
 *
 * A preset is only a default: a network is *enabled* when its RPC URL is configured
 * (see ./config.ts), and a few fields can be overridden from the environment there.
 */
import type { Address } from "viem";
import { predictedFactoryAddress, predictedTokenAddress, TEST_USD_DECIMALS } from "../contracts/addresses.ts";

export type Environment = "sandbox" | "production";

export interface Sourced<T> {
  value: T;
  /** Where the default comes from, so an operator can judge whether to override it. */
  source: string;
}

export interface ChainPreset {
  /** Short key used in env var names: SERVICE_RPC_URL_<KEY upper-cased, '-' → '_'>. */
  key: string;
  chainId: number;
  name: string;
  environment: Environment;
  stablecoin: {
    symbol: string;
    /** The token contract; null would mean "must be configured" (SERVICE_STABLECOIN_ADDRESS_<KEY>). */
    address: Address | null;
    decimals: number;
    source: string;
  };
  /** Blocks on top of a transfer's block before we treat it as final for a payment. */
  confirmations: Sourced<number>;
  /**
   * Extra funds (a late payment, a partial, a second payment) below this many token units
   * wait at the deposit, recorded, for the next sweep of that deposit or the operator's
   * recovery: a sweep must not cost more gas than it moves. A session's own payment is
   * always swept, whatever its size.
   */
  minSweep: Sourced<string>;
  /** Typical seconds between blocks (for estimates and polling, never for correctness). */
  blockTimeSeconds: number;
  /** Block explorer base URL (no trailing slash), null when there is none. */
  explorerUrl: string | null;
  /**
   * Our deposit-wallet factory: the same address on every chain, because it is deployed
   * through the deterministic deployer with fixed init code (shared/contracts/README.md).
   * Deploying it on a new chain is an operator step (shared/contracts/README.md).
   */
  factory: Address | null;
  /**
   * Below this balance of native coin (in ether units, a decimal string) the relayer account
   * is reported low: a warning at start-up, in the logs and on /readyz
   * (SERVICE_RELAYER_MIN_BALANCE_<KEY> overrides it).
   */
  relayerMinBalance: Sourced<string>;
}

const LOCAL_TOKEN_SOURCE = "TestUSD, deployed by shared/contracts ensureDeployed() at its deterministic address";
const TEST_USD = predictedTokenAddress();
const FACTORY = predictedFactoryAddress();
const TEST_MIN_SWEEP: Sourced<string> = { value: "0.01", source: "a test network: its gas costs nothing real, so anything above dust is swept" };
const ANVIL_CONFIRMATIONS: Sourced<number> = {
  value: 1,
  source: "our choice for the local sandbox chain: 1 confirmation (anvil mines blocks on demand and never reorgs by itself)",
};

export const PRESETS = {
  local: {
    key: "local",
    chainId: 31337,
    name: "Local test network (anvil)",
    environment: "sandbox",
    stablecoin: { symbol: "TUSD", address: TEST_USD, decimals: TEST_USD_DECIMALS, source: LOCAL_TOKEN_SOURCE },
    confirmations: ANVIL_CONFIRMATIONS,
    minSweep: TEST_MIN_SWEEP,
    blockTimeSeconds: 1,
    explorerUrl: null,
    factory: FACTORY,
    relayerMinBalance: { value: "0.01", source: "anvil funds its accounts with 10,000 ETH: any warning here means a broken dev chain" },
  },
  // A second local network so tests can exercise two chains in one environment.
  local2: {
    key: "local2",
    chainId: 31338,
    name: "Local test network 2 (anvil)",
    environment: "sandbox",
    stablecoin: { symbol: "TUSD", address: TEST_USD, decimals: TEST_USD_DECIMALS, source: LOCAL_TOKEN_SOURCE },
    confirmations: ANVIL_CONFIRMATIONS,
    minSweep: TEST_MIN_SWEEP,
    blockTimeSeconds: 1,
    explorerUrl: null,
    factory: FACTORY,
    relayerMinBalance: { value: "0.01", source: "anvil funds its accounts with 10,000 ETH: any warning here means a broken dev chain" },
  },
  "base-sepolia": {
    key: "base-sepolia",
    chainId: 84532,
    name: "Base Sepolia",
    environment: "sandbox",
    stablecoin: {
      symbol: "USDC",
      address: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
      decimals: 6,
      source: "Circle test USDC, https://developers.circle.com/stablecoins/usdc-contract-addresses",
    },
    confirmations: {
      value: 3,
      source: "our choice for a test network: quick feedback, still survives the usual 1–2 block L2 reorg",
    },
    minSweep: TEST_MIN_SWEEP,
    blockTimeSeconds: 2,
    explorerUrl: "https://sepolia.basescan.org",
    factory: FACTORY,
    relayerMinBalance: { value: "0.01", source: "our choice: about 100 sweeps at test-network fees" },
  },
  sepolia: {
    key: "sepolia",
    chainId: 11155111,
    name: "Sepolia",
    environment: "sandbox",
    stablecoin: {
      symbol: "USDC",
      address: "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238",
      decimals: 6,
      source: "Circle test USDC, https://developers.circle.com/stablecoins/usdc-contract-addresses",
    },
    confirmations: {
      value: 3,
      source: "our choice for a test network: quick feedback; Sepolia reorgs deeper than 2 blocks are rare",
    },
    minSweep: TEST_MIN_SWEEP,
    blockTimeSeconds: 12,
    explorerUrl: "https://sepolia.etherscan.io",
    factory: FACTORY,
    relayerMinBalance: { value: "0.05", source: "our choice: about 20 sweeps (80,000 gas each) at 30 gwei" },
  },
  ethereum: {
    key: "ethereum",
    chainId: 1,
    name: "Ethereum",
    environment: "production",
    stablecoin: {
      symbol: "USDC",
      address: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
      decimals: 6,
      source: "Circle native USDC, https://developers.circle.com/stablecoins/usdc-contract-addresses",
    },
    confirmations: {
      value: 12,
      source:
        "stablecoin processors' deposit default for USDC on Ethereum (e.g. BVNK: 12, https://docs.bvnk.com/docs/currencies-1); " +
        "full finality is ~65 blocks (Circle Gateway, https://developers.circle.com/gateway/references/supported-blockchains)",
    },
    minSweep: { value: "1.00", source: "our choice: a single sweep costs about 80,000 gas, well under 1 USDC at usual Ethereum fees" },
    blockTimeSeconds: 12,
    explorerUrl: "https://etherscan.io",
    factory: FACTORY,
    relayerMinBalance: { value: "0.05", source: "our choice: about 20 single sweeps (80,000 gas each) at 30 gwei; refill before it runs out" },
  },
  base: {
    key: "base",
    chainId: 8453,
    name: "Base",
    environment: "production",
    stablecoin: {
      symbol: "USDC",
      address: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
      decimals: 6,
      source: "Circle native USDC, https://developers.circle.com/stablecoins/usdc-contract-addresses",
    },
    confirmations: {
      value: 10,
      source:
        "stablecoin processors' deposit default for USDC on Base (e.g. BVNK: 10, https://docs.bvnk.com/docs/currencies-1); " +
        "L1 finality is ~65 Ethereum blocks (Circle Gateway)",
    },
    minSweep: { value: "0.05", source: "our choice: a sweep on Base costs a fraction of a cent; below 5 cents is dust" },
    blockTimeSeconds: 2,
    explorerUrl: "https://basescan.org",
    factory: FACTORY,
    relayerMinBalance: { value: "0.005", source: "our choice: hundreds of sweeps at Base fees (well under 0.1 gwei); refill before it runs out" },
  },
} as const satisfies Record<string, ChainPreset>;

export type NetworkKey = keyof typeof PRESETS;

export const NETWORK_KEYS = Object.keys(PRESETS) as NetworkKey[];

export function presetByChainId(chainId: number): ChainPreset | undefined {
  return Object.values(PRESETS).find((p) => p.chainId === chainId);
}

/** `base-sepolia` → `BASE_SEPOLIA`: the suffix of every per-network env var. */
export function envSuffix(key: string): string {
  return key.toUpperCase().replace(/-/g, "_");
}
