/**
 * The chain registry: one preset per network we know how to serve. Pure data, no I/O.
 *
 * A preset is only a default: a network is *enabled* when its RPC URL is configured
 * (see ./config.ts), and a few fields can be overridden from the environment there.
 */
import type { Address } from "viem";
import { predictedFactoryAddress, predictedTestUsdtAddress, predictedTokenAddress, TEST_USD_DECIMALS, TEST_USDT_DECIMALS } from "../contracts/addresses.ts";

export type Environment = "sandbox" | "production";

export interface Sourced<T> {
  value: T;
  /** Where the default comes from, so an operator can judge whether to override it. */
  source: string;
}

/** A dollar stablecoin a network's payers may pay with. */
export interface StablecoinPreset {
  /** What payers and merchants see; also what SERVICE_STABLECOINS_<KEY> names it by. */
  symbol: string;
  /** The token contract; null would mean "must be configured" (SERVICE_STABLECOIN_ADDRESS_<KEY>, for the first). */
  address: Address | null;
  decimals: number;
  /** It has EIP-3009's transferWithAuthorization (USDC v2.2, TestUSD): payers may pay it by signature. */
  eip3009: boolean;
  source: string;
}

export interface ChainPreset {
  /** Short key used in env var names: SERVICE_RPC_URL_<KEY upper-cased, '-' → '_'>. */
  key: string;
  chainId: number;
  name: string;
  environment: Environment;
  /** The stablecoins accepted by default, the network's main one first (SERVICE_STABLECOINS_<KEY> narrows or extends them). */
  stablecoins: readonly [StablecoinPreset, ...StablecoinPreset[]];
  /** The native coin's symbol (gas), for messages. */
  nativeSymbol: string;
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

const TEST_USD_PRESET: StablecoinPreset = {
  symbol: "TUSD",
  address: predictedTokenAddress(),
  decimals: TEST_USD_DECIMALS,
  eip3009: true,
  source: "TestUSD, deployed by shared/contracts ensureDeployed() at its deterministic address",
};
const TEST_USDT_PRESET: StablecoinPreset = {
  symbol: "tUSDT",
  address: predictedTestUsdtAddress(),
  decimals: TEST_USDT_DECIMALS,
  eip3009: false,
  source: "TestUSDT (USDT's quirks: transfer returns nothing, no EIP-3009), deployed by shared/contracts ensureDeployed() at its deterministic address",
};
const CIRCLE = "Circle, https://developers.circle.com/stablecoins/usdc-contract-addresses";
const usdc = (address: Address, source = `native USDC: ${CIRCLE}`): StablecoinPreset => ({ symbol: "USDC", address, decimals: 6, eip3009: true, source });
const usdt = (address: Address, source: string): StablecoinPreset => ({ symbol: "USDT", address, decimals: 6, eip3009: false, source });
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
    stablecoins: [TEST_USD_PRESET, TEST_USDT_PRESET],
    nativeSymbol: "ETH",
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
    stablecoins: [TEST_USD_PRESET, TEST_USDT_PRESET],
    nativeSymbol: "ETH",
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
    stablecoins: [usdc("0x036CbD53842c5426634e7929541eC2318f3dCF7e", `Circle test USDC: ${CIRCLE}`)],
    nativeSymbol: "ETH",
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
    stablecoins: [usdc("0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238", `Circle test USDC: ${CIRCLE}`)],
    nativeSymbol: "ETH",
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
    stablecoins: [
      usdc("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"),
      usdt("0xdAC17F958D2ee523a2206206994597C13D831ec7", "Tether USD on Ethereum, https://tether.to/en/supported-protocols (transfer returns nothing; no EIP-3009)"),
    ],
    nativeSymbol: "ETH",
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
    stablecoins: [usdc("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")],
    nativeSymbol: "ETH",
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
  arbitrum: {
    key: "arbitrum",
    chainId: 42161,
    name: "Arbitrum One",
    environment: "production",
    stablecoins: [
      usdc("0xaf88d065e77c8cC2239327C5EDb3A432268e5831"),
      usdt("0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9", "Tether USD (USD₮0) on Arbitrum One, https://tether.to/en/supported-protocols and https://docs.usdt0.to"),
    ],
    nativeSymbol: "ETH",
    confirmations: {
      value: 20,
      source: "our choice: Arbitrum's sequencer orders blocks every 0.25 s and does not reorg them in practice; 20 blocks is about 5 s (L1 finality is ~65 Ethereum blocks)",
    },
    minSweep: { value: "0.05", source: "our choice: a sweep on Arbitrum costs a fraction of a cent; below 5 cents is dust" },
    blockTimeSeconds: 0.25,
    explorerUrl: "https://arbiscan.io",
    factory: FACTORY,
    relayerMinBalance: { value: "0.005", source: "our choice: hundreds of sweeps at Arbitrum fees; refill before it runs out" },
  },
  optimism: {
    key: "optimism",
    chainId: 10,
    name: "OP Mainnet",
    environment: "production",
    stablecoins: [
      usdc("0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85"),
      usdt("0x94b008aA00579c1307B0EF2c499aD98a8ce58e58", "Tether USD on OP Mainnet (the Superchain token list); check it against Tether's list before going live"),
    ],
    nativeSymbol: "ETH",
    confirmations: {
      value: 10,
      source: "our choice, as for Base (the same OP Stack, 2 s blocks): survives the rare 1–2 block reorg; L1 finality is ~65 Ethereum blocks",
    },
    minSweep: { value: "0.05", source: "our choice: a sweep on OP Mainnet costs a fraction of a cent; below 5 cents is dust" },
    blockTimeSeconds: 2,
    explorerUrl: "https://optimistic.etherscan.io",
    factory: FACTORY,
    relayerMinBalance: { value: "0.005", source: "our choice: hundreds of sweeps at OP Mainnet fees; refill before it runs out" },
  },
  polygon: {
    key: "polygon",
    chainId: 137,
    name: "Polygon PoS",
    environment: "production",
    stablecoins: [
      usdc("0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359"),
      usdt("0xc2132D05D31c914a87C6611C10748AEb04B58e8F", "Tether USD (USD₮0) on Polygon PoS, https://tether.to/en/supported-protocols and https://docs.usdt0.to"),
    ],
    nativeSymbol: "POL",
    confirmations: {
      value: 64,
      source: "our choice: Polygon PoS has reorged tens of blocks in the past; 64 blocks (about 2 minutes) stays clear of them, and its milestones finalize within that",
    },
    minSweep: { value: "0.05", source: "our choice: a sweep on Polygon costs well under a cent; below 5 cents is dust" },
    blockTimeSeconds: 2,
    explorerUrl: "https://polygonscan.com",
    factory: FACTORY,
    relayerMinBalance: { value: "5", source: "our choice: thousands of sweeps at usual Polygon fees, paid in POL; refill before it runs out" },
  },
} as const satisfies Record<string, ChainPreset>;

export type NetworkKey = keyof typeof PRESETS;

export const NETWORK_KEYS = Object.keys(PRESETS) as NetworkKey[];

export function presetByChainId(chainId: number): ChainPreset | undefined {
  return Object.values(PRESETS).find((p) => p.chainId === chainId);
}

/** The preset stablecoin at `token` (any case) on a chain, if it is one. */
export function presetStablecoin(chainId: number, token: string): StablecoinPreset | undefined {
  return presetByChainId(chainId)?.stablecoins.find((c) => c.address?.toLowerCase() === token.toLowerCase());
}

/** `base-sepolia` → `BASE_SEPOLIA`: the suffix of every per-network env var. */
export function envSuffix(key: string): string {
  return key.toUpperCase().replace(/-/g, "_");
}
