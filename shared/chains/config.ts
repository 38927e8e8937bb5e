/**
 * Environment → enabled networks. Pure: takes an env record, returns either the config or
 * every problem found (one clear message per bad value), so an operator fixes all at once.
 *
 * Per network KEY (see presets.ts; `base-sepolia` → `BASE_SEPOLIA`):
 *   SERVICE_RPC_URL_<KEY>            enables the network (http(s):// or ws(s)://)
 *   SERVICE_START_BLOCK_<KEY>        first block to index (default: head when first started, persisted)
 *   SERVICE_CONFIRMATIONS_<KEY>      confirmation depth override (integer ≥ 1)
 *   SERVICE_STABLECOINS_<KEY>        the stablecoins accepted, main one first: symbols of the preset's
 *                                    ("USDC,USDT", "USDC") and/or extra tokens as SYMBOL:0xADDRESS:DECIMALS
 *                                    (":eip3009" after it when the token has transferWithAuthorization)
 *   SERVICE_STABLECOIN_ADDRESS_<KEY> the main preset token's address (tests, or a chain where our TestUSD lives elsewhere)
 *   SERVICE_FACTORY_ADDRESS_<KEY>    deposit-wallet factory override
 *   SERVICE_MIN_SWEEP_<KEY>          extra funds below this many token units wait (e.g. "1.00")
 *   SERVICE_RELAYER_MIN_BALANCE_<KEY> native coin (ether units, e.g. 0.05) below which the relayer
 *                                    is reported low (default: the preset's relayerMinBalance)
 *   SERVICE_PUBLIC_RPC_URL_<KEY>     the RPC address handed to payers' wallets (wallet_addEthereumChain):
 *                                    one their browsers can reach (default: the RPC URL itself for the
 *                                    local networks, none for public ones, which wallets know already)
 *   SERVICE_GASLESS_<KEY>            true | false: payers may pay by a signed EIP-3009 authorization
 *                                    where the token supports it (default: on)
 *   SERVICE_GASLESS_MAX_FEE_GWEI_<KEY> the fee ceiling of authorization submissions (gwei, e.g. "30"):
 *                                    above it the relayer waits and the checkout offers only the plain
 *                                    transfer (default: GASLESS_MAX_FEE_GWEI below)
 * Global:
 *   SERVICE_INDEX_MODE               bounded | full (default: bounded when a production network
 *                                    is enabled, full for sandbox-only deployments)
 */
import { getAddress, isAddress, parseEther, parseGwei, type Address } from "viem";
import { NETWORK_KEYS, PRESETS, envSuffix, type ChainPreset, type Environment, type NetworkKey } from "./presets.ts";
import { BaseError } from "../base-error.ts";

export type IndexMode = "bounded" | "full";

/** A stablecoin accepted on a network. */
export interface Stablecoin {
  symbol: string;
  address: Address;
  decimals: number;
  /** It has EIP-3009 (payers may pay it by signature; gasless/chain.ts checks the token itself too). */
  eip3009: boolean;
}

export interface NetworkConfig {
  key: NetworkKey;
  chainId: number;
  name: string;
  environment: Environment;
  rpcUrl: string;
  /** The stablecoins accepted here, the main one first (presets.ts, SERVICE_STABLECOINS_<KEY>). */
  stablecoins: Stablecoin[];
  /** The main one: stablecoins[0]. */
  stablecoin: Stablecoin;
  /**
   * Watched but not accepted: the preset's stablecoins that SERVICE_STABLECOINS_<KEY> left out.
   * The indexer keeps their Transfers too, so that one sent to a deposit address by mistake is
   * reported and swept to the merchant, never lost (it does not count toward a payment).
   */
  strayStablecoins?: Address[];
  confirmations: number;
  confirmationsSource: string;
  /** null: start at the head when first started, then keep that block (indexer/start-blocks.ts). */
  startBlock: number | null;
  blockTimeSeconds: number;
  explorerUrl: string | null;
  factory: Address | null;
  /** Extra funds below this (token base units) wait at the deposit for the next sweep (presets.ts minSweep). */
  minSweepBaseUnits: bigint;
  /** Relayer balance (wei) below which it is reported low; absent: the preset's default. */
  relayerMinBalanceWei?: bigint;
  /**
   * The RPC address a payer's wallet is given when it must add this network (checkout): it must
   * be reachable from the payer's browser, unlike `rpcUrl`, which may be private to the server
   * and carry a provider's key. null: none (wallets know the public networks already).
   */
  publicRpcUrl?: string | null;
  /**
   * Payers may pay by a signed EIP-3009 authorization here, where the token supports it
   * (api/src/gasless/). Absent: off (loadChainsConfig sets it: on unless SERVICE_GASLESS_<KEY> says no).
   */
  gasless?: boolean;
  /**
   * The highest max fee per gas (wei) the relayer pays to submit an authorization here; above
   * it the submission waits and the payer view offers only the plain transfer. Absent: the
   * default of GASLESS_MAX_FEE_GWEI.
   */
  gaslessMaxFeeWei?: bigint;
}

/**
 * Default fee ceilings of authorization submissions, in gwei of max fee per gas (2 × the base
 * fee + the tip, what the relayer signs). Our choice: at ≈ 90,000 gas a submission (81,164
 * measured into a settlement address that already holds the token), Ethereum's 30 gwei is at
 * most ≈ 0.0027 ETH; Base's, Arbitrum's and OP Mainnet's 0.5 gwei is well above their usual
 * fees (≈ 0.01 gwei); Polygon's 1,000 gwei of POL is ≈ 0.09 POL at most, cents; the test
 * networks' fees cost nothing real. Above it, the payer pays by a plain transfer.
 */
export const GASLESS_MAX_FEE_GWEI: Record<NetworkKey, string> = {
  local: "100",
  local2: "100",
  "base-sepolia": "10",
  sepolia: "100",
  ethereum: "30",
  base: "0.5",
  arbitrum: "0.5",
  optimism: "0.5",
  polygon: "1000",
};

/** The fee ceiling of authorization submissions on a network, in wei. */
export function gaslessMaxFeeWei(net: Pick<NetworkConfig, "key" | "gaslessMaxFeeWei">): bigint {
  return net.gaslessMaxFeeWei ?? parseGwei(GASLESS_MAX_FEE_GWEI[net.key]);
}

/** The relayer low-balance threshold of a network, in wei. */
export function relayerMinBalanceWei(net: Pick<NetworkConfig, "key" | "relayerMinBalanceWei">): bigint {
  return net.relayerMinBalanceWei ?? parseEther(PRESETS[net.key].relayerMinBalance.value);
}

export interface ChainsConfig {
  networks: NetworkConfig[];
  indexMode: IndexMode;
}

export type ParseResult = { ok: true; config: ChainsConfig } | { ok: false; errors: string[] };

type Env = Record<string, string | undefined>;

export const ENV_PREFIXES = [
  "SERVICE_RPC_URL_",
  "SERVICE_START_BLOCK_",
  "SERVICE_CONFIRMATIONS_",
  "SERVICE_STABLECOIN_ADDRESS_",
  "SERVICE_STABLECOINS_",
  "SERVICE_FACTORY_ADDRESS_",
  "SERVICE_MIN_SWEEP_",
  "SERVICE_RELAYER_MIN_BALANCE_",
  "SERVICE_PUBLIC_RPC_URL_",
  "SERVICE_GASLESS_MAX_FEE_GWEI_",
  "SERVICE_GASLESS_",
] as const;

export function parseChainsEnv(env: Env): ParseResult {
  const errors: string[] = [];
  const knownSuffixes = new Map(NETWORK_KEYS.map((k) => [envSuffix(k), k]));

  // A typo in a network name must not silently leave a chain disabled.
  for (const name of Object.keys(env)) {
    const prefix = ENV_PREFIXES.find((p) => name.startsWith(p));
    if (!prefix || env[name] === undefined) continue;
    const suffix = name.slice(prefix.length);
    if (!knownSuffixes.has(suffix)) {
      errors.push(
        `${name}: unknown network "${suffix}"; known networks: ${[...knownSuffixes.keys()].join(", ")}`,
      );
    }
  }

  const networks: NetworkConfig[] = [];
  for (const key of NETWORK_KEYS) {
    const preset: ChainPreset = PRESETS[key];
    const sfx = envSuffix(key);
    const get = (prefix: string) => {
      const v = env[prefix + sfx];
      return v === undefined || v.trim() === "" ? undefined : v.trim();
    };
    const rpcName = `SERVICE_RPC_URL_${sfx}`;
    const rpcUrl = get("SERVICE_RPC_URL_");
    if (rpcUrl === undefined) {
      // Overrides for a disabled network are almost certainly a forgotten RPC URL.
      for (const p of ENV_PREFIXES.slice(1)) {
        if (get(p) !== undefined) errors.push(`${p}${sfx} is set but ${rpcName} is not: the ${preset.name} network is disabled`);
      }
      continue;
    }
    const before = errors.length;

    if (!isRpcUrl(rpcUrl)) errors.push(`${rpcName}: expected an http(s):// or ws(s):// URL, got "${rpcUrl}"`);

    const startBlock = parseIntVar(errors, `SERVICE_START_BLOCK_${sfx}`, get("SERVICE_START_BLOCK_"), 0);
    const confirmations = parseIntVar(errors, `SERVICE_CONFIRMATIONS_${sfx}`, get("SERVICE_CONFIRMATIONS_"), 1);

    const tokenVar = `SERVICE_STABLECOIN_ADDRESS_${sfx}`;
    const main = preset.stablecoins[0];
    const token = parseAddressVar(errors, tokenVar, get("SERVICE_STABLECOIN_ADDRESS_")) ?? main.address;
    if (token === null && errors.length === before) {
      errors.push(`${tokenVar} is required: the ${preset.name} has no fixed ${main.symbol} address (set its address)`);
    }
    const presetCoins = preset.stablecoins.map((c, i) => ({ ...c, address: i === 0 ? token : c.address }));
    const stablecoins = parseStablecoinsVar(errors, `SERVICE_STABLECOINS_${sfx}`, get("SERVICE_STABLECOINS_"), presetCoins);
    const factory = parseAddressVar(errors, `SERVICE_FACTORY_ADDRESS_${sfx}`, get("SERVICE_FACTORY_ADDRESS_")) ?? preset.factory;
    const minSweep = parseTokenAmountVar(errors, `SERVICE_MIN_SWEEP_${sfx}`, get("SERVICE_MIN_SWEEP_") ?? preset.minSweep.value, stablecoins[0]?.decimals ?? main.decimals);

    const minBalanceVar = `SERVICE_RELAYER_MIN_BALANCE_${sfx}`;
    const rawMin = get("SERVICE_RELAYER_MIN_BALANCE_") ?? preset.relayerMinBalance.value;
    let minBalanceWei = 0n;
    if (/^\d{1,12}(\.\d{1,18})?$/.test(rawMin)) minBalanceWei = parseEther(rawMin);
    else errors.push(`${minBalanceVar}: expected an amount of native coin in ether units such as 0.05, got "${rawMin}"`);

    const publicRpcName = `SERVICE_PUBLIC_RPC_URL_${sfx}`;
    const publicRpc = get("SERVICE_PUBLIC_RPC_URL_");
    if (publicRpc !== undefined && (!isRpcUrl(publicRpc) || publicRpc.startsWith("ws"))) {
      errors.push(`${publicRpcName}: expected an http(s):// URL, got "${publicRpc}"`);
    }
    const gaslessName = `SERVICE_GASLESS_${sfx}`;
    const rawGasless = get("SERVICE_GASLESS_")?.toLowerCase();
    // On by default everywhere: the payer needs no gas coin, and an authorization batched by the
    // relayer costs it no more than the sweep a transfer needs; the fee ceiling bounds the rest.
    let gasless = true;
    if (rawGasless !== undefined) {
      if (["1", "true", "yes"].includes(rawGasless)) gasless = true;
      else if (["0", "false", "no"].includes(rawGasless)) gasless = false;
      else errors.push(`${gaslessName}: expected true or false, got "${rawGasless}"`);
    }

    const maxFeeName = `SERVICE_GASLESS_MAX_FEE_GWEI_${sfx}`;
    const rawMaxFee = get("SERVICE_GASLESS_MAX_FEE_GWEI_") ?? GASLESS_MAX_FEE_GWEI[key];
    let gaslessMaxFee = 0n;
    if (/^\d{1,9}(\.\d{1,9})?$/.test(rawMaxFee)) gaslessMaxFee = parseGwei(rawMaxFee);
    else errors.push(`${maxFeeName}: expected a fee in gwei such as 30 or 0.5, got "${rawMaxFee}"`);

    // The local networks run beside the service in development: their RPC is the payer's too.
    const isLocal = key === "local" || key === "local2";

    if (errors.length > before || token === null) continue;
    networks.push({
      key,
      chainId: preset.chainId,
      name: preset.name,
      environment: preset.environment,
      rpcUrl,
      stablecoins,
      stablecoin: stablecoins[0]!,
      strayStablecoins: presetCoins.flatMap((c) => (c.address && !stablecoins.some((s) => s.address === c.address) ? [c.address] : [])),
      confirmations: confirmations ?? preset.confirmations.value,
      confirmationsSource: confirmations === undefined ? preset.confirmations.source : `SERVICE_CONFIRMATIONS_${sfx}`,
      startBlock: startBlock ?? null,
      blockTimeSeconds: preset.blockTimeSeconds,
      explorerUrl: preset.explorerUrl,
      factory,
      minSweepBaseUnits: minSweep ?? 0n,
      relayerMinBalanceWei: minBalanceWei,
      publicRpcUrl: publicRpc ?? (isLocal && !rpcUrl.startsWith("ws") ? rpcUrl : null),
      gasless,
      gaslessMaxFeeWei: gaslessMaxFee,
    });
  }

  const rawMode = env.SERVICE_INDEX_MODE?.trim();
  let indexMode: IndexMode = networks.some((n) => n.environment === "production") ? "bounded" : "full";
  if (rawMode) {
    if (rawMode === "bounded" || rawMode === "full") indexMode = rawMode;
    else errors.push(`SERVICE_INDEX_MODE: expected "bounded" or "full", got "${rawMode}"`);
  }

  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, config: { networks, indexMode } };
}

export class ChainConfigError extends BaseError {
  override name = "ChainConfigError";
  constructor(readonly problems: string[]) {
    super(`Invalid chain configuration:\n  - ${problems.join("\n  - ")}`);
  }
}

/** parseChainsEnv, throwing one error that lists every problem. */
export function loadChainsConfig(env: Env = process.env): ChainsConfig {
  const r = parseChainsEnv(env);
  if (!r.ok) throw new ChainConfigError(r.errors);
  return r.config;
}

function isRpcUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return ["http:", "https:", "ws:", "wss:"].includes(u.protocol) && u.hostname !== "";
  } catch {
    return false;
  }
}

function parseIntVar(errors: string[], name: string, raw: string | undefined, min: number): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw)) || Number(raw) < min) {
    errors.push(`${name}: expected a whole number ≥ ${min}, got "${raw}"`);
    return undefined;
  }
  return Number(raw);
}

/** A token amount in whole units with up to `decimals` places ("1.00", "0.05") → base units. */
function parseTokenAmountVar(errors: string[], name: string, raw: string, decimals: number): bigint | undefined {
  const m = /^(\d{1,30})(?:\.(\d+))?$/.exec(raw);
  if (!m || (m[2] ?? "").length > decimals) {
    errors.push(`${name}: expected a token amount such as "1.00" (at most ${decimals} decimals), got "${raw}"`);
    return undefined;
  }
  return BigInt(m[1]!) * 10n ** BigInt(decimals) + BigInt((m[2] ?? "").padEnd(decimals, "0") || "0");
}

function parseAddressVar(errors: string[], name: string, raw: string | undefined): Address | undefined {
  if (raw === undefined) return undefined;
  // viem accepts all-lowercase addresses; a mixed-case one must carry a valid checksum.
  if (!isAddress(raw)) {
    errors.push(`${name}: expected a 0x-prefixed 20-byte address (valid checksum if mixed case), got "${raw}"`);
    return undefined;
  }
  return getAddress(raw);
}

/**
 * SERVICE_STABLECOINS_<KEY>: which stablecoins a network accepts, main one first. Absent: every
 * preset token of the network (`presetCoins`, the main one's address already overridden). Each
 * entry is a preset's symbol or SYMBOL:0xADDRESS:DECIMALS[:eip3009] for a token the preset does not
 * have. No symbol or address twice. Errors go to `errors`; what is valid is returned.
 */
function parseStablecoinsVar(
  errors: string[],
  name: string,
  raw: string | undefined,
  presetCoins: readonly { symbol: string; address: Address | null; decimals: number; eip3009: boolean }[],
): Stablecoin[] {
  const known = presetCoins.flatMap((c) => (c.address ? [{ symbol: c.symbol, address: c.address, decimals: c.decimals, eip3009: c.eip3009 }] : []));
  if (raw === undefined) return known;
  const out: Stablecoin[] = [];
  const entries = raw.split(",").map((e) => e.trim());
  if (entries.includes("")) errors.push(`${name}: an empty entry in "${raw}"`);
  for (const entry of entries.filter((e) => e !== "")) {
    const parts = entry.split(":");
    let coin: Stablecoin | undefined;
    if (parts.length === 1) {
      coin = known.find((c) => c.symbol.toUpperCase() === entry.toUpperCase());
      if (!coin) errors.push(`${name}: "${entry}" is not a stablecoin of this network's preset (${known.map((c) => c.symbol).join(", ")}); an extra one is SYMBOL:0xADDRESS:DECIMALS`);
    } else if ((parts.length === 3 || (parts.length === 4 && parts[3] === "eip3009")) && /^[A-Za-z0-9.₮$-]{1,16}$/.test(parts[0]!) && isAddress(parts[1]!) && /^\d{1,2}$/.test(parts[2]!) && Number(parts[2]) >= 2 && Number(parts[2]) <= 36) {
      coin = { symbol: parts[0]!, address: getAddress(parts[1]!), decimals: Number(parts[2]), eip3009: parts.length === 4 };
    } else {
      errors.push(`${name}: expected a symbol of the preset or SYMBOL:0xADDRESS:DECIMALS[:eip3009] (DECIMALS 2 to 36: a cent must be a whole number of base units), got "${entry}"`);
    }
    if (!coin) continue;
    if (out.some((c) => c.symbol.toUpperCase() === coin.symbol.toUpperCase() || c.address === coin.address)) {
      errors.push(`${name}: ${coin.symbol} (${coin.address}) is listed twice`);
      continue;
    }
    out.push(coin);
  }
  if (out.length === 0 && !errors.some((e) => e.startsWith(name))) errors.push(`${name}: lists no stablecoin`);
  return out;
}
