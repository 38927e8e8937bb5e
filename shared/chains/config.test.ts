import { describe, expect, test } from "bun:test";
import { gaslessMaxFeeWei, loadChainsConfig, parseChainsEnv, ChainConfigError } from "./config.ts";
import { envSuffix, PRESETS } from "./presets.ts";
import { predictedFactoryAddress, predictedTestUsdtAddress, predictedTokenAddress } from "../contracts/addresses.ts";
import { messageOf } from "../describe-error.ts";

const TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3";

function errorsOf(env: Record<string, string>): string[] {
  const r = parseChainsEnv(env);
  if (r.ok) throw new Error("expected errors, got a config");
  return r.errors;
}

describe("parseChainsEnv", () => {
  test("nothing configured: no networks, full mode", () => {
    const r = parseChainsEnv({});
    expect(r).toEqual({ ok: true, config: { networks: [], indexMode: "full" } });
  });

  test("one network: local, all preset defaults (TestUSD at its deterministic address)", () => {
    const c = loadChainsConfig({ SERVICE_RPC_URL_LOCAL: "http://127.0.0.1:8545" });
    expect(c.networks.map((n) => n.key)).toEqual(["local"]);
    const n = c.networks[0]!;
    expect(n.chainId).toBe(31337);
    expect(n.environment).toBe("sandbox");
    expect(n.stablecoin).toEqual({ symbol: "TUSD", address: predictedTokenAddress(), decimals: 6, eip3009: true });
    expect(n.stablecoins).toEqual([n.stablecoin, { symbol: "tUSDT", address: predictedTestUsdtAddress(), decimals: 6, eip3009: false }]);
    expect(n.factory).toBe(predictedFactoryAddress());
    expect(n.confirmations).toBe(1);
    expect(n.confirmationsSource).toContain("1 confirmation");
    expect(n.startBlock).toBeNull();
    expect(c.indexMode).toBe("full");
  });

  test("two networks: both local presets with overrides", () => {
    const c = loadChainsConfig({
      SERVICE_RPC_URL_LOCAL: "http://127.0.0.1:8545",
      SERVICE_STABLECOIN_ADDRESS_LOCAL: TOKEN,
      SERVICE_RPC_URL_LOCAL2: "ws://127.0.0.1:8546",
      SERVICE_STABLECOIN_ADDRESS_LOCAL2: TOKEN.toLowerCase(),
      SERVICE_START_BLOCK_LOCAL2: "42",
      SERVICE_CONFIRMATIONS_LOCAL2: "3",
    });
    expect(c.networks.map((n) => [n.key, n.chainId])).toEqual([
      ["local", 31337],
      ["local2", 31338],
    ]);
    const n2 = c.networks[1]!;
    expect(n2.startBlock).toBe(42);
    expect(n2.confirmations).toBe(3);
    expect(n2.confirmationsSource).toBe("SERVICE_CONFIRMATIONS_LOCAL2");
    expect(n2.stablecoin.address).toBe(TOKEN); // normalised to checksum case
  });

  test("three networks across environments: production turns bounded mode on by default", () => {
    const c = loadChainsConfig({
      SERVICE_RPC_URL_BASE_SEPOLIA: "https://sepolia.base.org",
      SERVICE_RPC_URL_ETHEREUM: "https://eth.example",
      SERVICE_RPC_URL_BASE: "https://base.example",
    });
    expect(c.networks.map((n) => `${n.key}/${n.environment}/${n.stablecoin.address}`)).toEqual([
      `base-sepolia/sandbox/${PRESETS["base-sepolia"].stablecoins[0].address}`,
      `ethereum/production/${PRESETS.ethereum.stablecoins[0].address}`,
      `base/production/${PRESETS.base.stablecoins[0].address}`,
    ]);
    expect(c.indexMode).toBe("bounded");
    expect(loadChainsConfig({ SERVICE_RPC_URL_BASE: "https://base.example", SERVICE_INDEX_MODE: "full" }).indexMode).toBe("full");
  });

  test("SERVICE_GASLESS_<KEY>: on by default on every network; off by setting", () => {
    const on = (env: Record<string, string>) => Object.fromEntries(loadChainsConfig(env).networks.map((n) => [n.key, n.gasless]));
    const both = { SERVICE_RPC_URL_LOCAL: "http://127.0.0.1:8545", SERVICE_RPC_URL_BASE: "https://base.example" };
    expect(on(both)).toEqual({ local: true, base: true });
    expect(on({ ...both, SERVICE_GASLESS_LOCAL: "false", SERVICE_GASLESS_BASE: "true" })).toEqual({ local: false, base: true });
    expect(on({ ...both, SERVICE_GASLESS_LOCAL: "1", SERVICE_GASLESS_BASE: "no" })).toEqual({ local: true, base: false });
    expect(errorsOf({ ...both, SERVICE_GASLESS_BASE: "maybe" })).toEqual(['SERVICE_GASLESS_BASE: expected true or false, got "maybe"']);
    expect(errorsOf({ SERVICE_GASLESS_ETHEREUM: "true" })).toEqual([
      "SERVICE_GASLESS_ETHEREUM is set but SERVICE_RPC_URL_ETHEREUM is not: the Ethereum network is disabled",
    ]);
  });

  test("stablecoins: every preset token by default, main first; SERVICE_STABLECOINS_<KEY> narrows, reorders and extends", () => {
    const coins = (env: Record<string, string>, key = "ethereum") =>
      loadChainsConfig(env).networks.find((n) => n.key === key)!.stablecoins.map((c) => `${c.symbol}:${c.address}:${c.decimals}${c.eip3009 ? ":eip3009" : ""}`);
    const eth = { SERVICE_RPC_URL_ETHEREUM: "https://eth.example" };
    const USDC = "USDC:0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48:6:eip3009";
    const USDT = "USDT:0xdAC17F958D2ee523a2206206994597C13D831ec7:6";
    expect(coins(eth)).toEqual([USDC, USDT]);
    expect(loadChainsConfig(eth).networks[0]!.stablecoin).toEqual(loadChainsConfig(eth).networks[0]!.stablecoins[0]!);
    expect(coins({ ...eth, SERVICE_STABLECOINS_ETHEREUM: "usdt" })).toEqual([USDT]);
    expect(coins({ ...eth, SERVICE_STABLECOINS_ETHEREUM: "USDT, USDC" })).toEqual([USDT, USDC]);
    const pyusd = "PYUSD:0x6c3ea9036406852006290770BEdFcAbA0e23A0e8:6";
    expect(coins({ ...eth, SERVICE_STABLECOINS_ETHEREUM: `USDC,${pyusd}` })).toEqual([USDC, pyusd]);
    expect(coins({ ...eth, SERVICE_STABLECOINS_ETHEREUM: `USDC,${pyusd}:eip3009` })).toEqual([USDC, `${pyusd}:eip3009`]);
    // The main token's address override applies before the list.
    expect(coins({ ...eth, SERVICE_STABLECOIN_ADDRESS_ETHEREUM: "0x0000000000000000000000000000000000000abc" })[0]).toBe("USDC:0x0000000000000000000000000000000000000aBc:6:eip3009");
    // New networks: their RPC URL alone enables them, with USDC and USDT.
    expect(coins({ SERVICE_RPC_URL_ARBITRUM: "https://arb.example" }, "arbitrum").map((c) => c.split(":")[0])).toEqual(["USDC", "USDT"]);
    expect(coins({ SERVICE_RPC_URL_OPTIMISM: "https://op.example" }, "optimism").map((c) => c.split(":")[0])).toEqual(["USDC", "USDT"]);
    expect(coins({ SERVICE_RPC_URL_POLYGON: "https://polygon.example" }, "polygon").map((c) => c.split(":")[0])).toEqual(["USDC", "USDT"]);
    expect(loadChainsConfig({ SERVICE_RPC_URL_POLYGON: "https://polygon.example" }).networks[0]).toMatchObject({ chainId: 137, environment: "production", confirmations: 64 });
    expect(errorsOf({ ...eth, SERVICE_STABLECOINS_ETHEREUM: "DAI" })).toEqual([
      'SERVICE_STABLECOINS_ETHEREUM: "DAI" is not a stablecoin of this network\'s preset (USDC, USDT); an extra one is SYMBOL:0xADDRESS:DECIMALS',
    ]);
    expect(errorsOf({ ...eth, SERVICE_STABLECOINS_ETHEREUM: "USDC,usdc" })).toEqual(["SERVICE_STABLECOINS_ETHEREUM: USDC (0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48) is listed twice"]);
    expect(errorsOf({ ...eth, SERVICE_STABLECOINS_ETHEREUM: "X:0x12:6" })).toEqual([
      'SERVICE_STABLECOINS_ETHEREUM: expected a symbol of the preset or SYMBOL:0xADDRESS:DECIMALS[:eip3009] (DECIMALS 2 to 36: a cent must be a whole number of base units), got "X:0x12:6"',
    ]);
    expect(errorsOf({ ...eth, SERVICE_STABLECOINS_ETHEREUM: "X:0x6c3ea9036406852006290770BEdFcAbA0e23A0e8:1" })).toHaveLength(1);
    expect(errorsOf({ ...eth, SERVICE_STABLECOINS_ETHEREUM: "USDC,," })).toEqual(['SERVICE_STABLECOINS_ETHEREUM: an empty entry in "USDC,,"']);
    expect(errorsOf({ SERVICE_STABLECOINS_ETHEREUM: "USDC" })).toEqual(["SERVICE_STABLECOINS_ETHEREUM is set but SERVICE_RPC_URL_ETHEREUM is not: the Ethereum network is disabled"]);
  });

  test("SERVICE_GASLESS_MAX_FEE_GWEI_<KEY>: the fee ceiling of authorization submissions, a default per network, gwei to wei", () => {
    const both = { SERVICE_RPC_URL_LOCAL: "http://127.0.0.1:8545", SERVICE_RPC_URL_BASE: "https://base.example" };
    const ceilings = (env: Record<string, string>) => Object.fromEntries(loadChainsConfig(env).networks.map((n) => [n.key, gaslessMaxFeeWei(n)]));
    expect(ceilings(both)).toEqual({ local: 100_000_000_000n, base: 500_000_000n });
    expect(ceilings({ ...both, SERVICE_GASLESS_MAX_FEE_GWEI_BASE: "0.000000001" })).toEqual({ local: 100_000_000_000n, base: 1n });
    expect(errorsOf({ ...both, SERVICE_GASLESS_MAX_FEE_GWEI_BASE: "-1" })).toEqual(['SERVICE_GASLESS_MAX_FEE_GWEI_BASE: expected a fee in gwei such as 30 or 0.5, got "-1"']);
    expect(errorsOf({ ...both, SERVICE_GASLESS_MAX_FEE_GWEI_BSE: "1" })[0]).toContain('unknown network "BSE"');
  });

  test("every preset has a documented confirmation source and a unique chain id and env suffix", () => {
    const ids = new Set<number>();
    const sfx = new Set<string>();
    for (const p of Object.values(PRESETS)) {
      expect(p.confirmations.source.length).toBeGreaterThan(10);
      expect(p.confirmations.value).toBeGreaterThanOrEqual(1);
      ids.add(p.chainId);
      sfx.add(envSuffix(p.key));
    }
    expect(ids.size).toBe(Object.keys(PRESETS).length);
    expect(sfx.size).toBe(Object.keys(PRESETS).length);
  });

  test("bad values: one clear message each, all reported at once", () => {
    const errors = errorsOf({
      SERVICE_RPC_URL_ETHEREUM: "eth.example", // no scheme
      SERVICE_START_BLOCK_ETHEREUM: "-5",
      SERVICE_CONFIRMATIONS_ETHEREUM: "0",
      SERVICE_RPC_URL_BASE: "https://base.example",
      SERVICE_STABLECOIN_ADDRESS_BASE: "0x833589fcD6eDb6E08f4c7C32D4f71b54bdA02913", // bad checksum
      SERVICE_INDEX_MODE: "everything",
    });
    expect(errors).toEqual([
      'SERVICE_RPC_URL_ETHEREUM: expected an http(s):// or ws(s):// URL, got "eth.example"',
      'SERVICE_START_BLOCK_ETHEREUM: expected a whole number ≥ 0, got "-5"',
      'SERVICE_CONFIRMATIONS_ETHEREUM: expected a whole number ≥ 1, got "0"',
      'SERVICE_STABLECOIN_ADDRESS_BASE: expected a 0x-prefixed 20-byte address (valid checksum if mixed case), got "0x833589fcD6eDb6E08f4c7C32D4f71b54bdA02913"',
      'SERVICE_INDEX_MODE: expected "bounded" or "full", got "everything"',
    ]);
  });

  test("unknown network, override without RPC URL", () => {
    const errors = errorsOf({
      SERVICE_RPC_URL_AVALANCHE: "https://avalanche.example",
      SERVICE_CONFIRMATIONS_SEPOLIA: "5",
      SERVICE_RPC_URL_LOCAL: "http://127.0.0.1:8545",
    });
    expect(errors[0]).toStartWith('SERVICE_RPC_URL_AVALANCHE: unknown network "AVALANCHE"; known networks: LOCAL, LOCAL2, BASE_SEPOLIA, SEPOLIA, ETHEREUM, BASE, ARBITRUM, OPTIMISM, POLYGON');
    expect(errors).toContain("SERVICE_CONFIRMATIONS_SEPOLIA is set but SERVICE_RPC_URL_SEPOLIA is not: the Sepolia network is disabled");
    expect(errors).toHaveLength(2);
  });

  test("loadChainsConfig throws one error listing every problem", () => {
    expect(() => loadChainsConfig({ SERVICE_INDEX_MODE: "x", SERVICE_RPC_URL_BASE: "ftp://x" })).toThrow(ChainConfigError);
    try {
      loadChainsConfig({ SERVICE_INDEX_MODE: "x", SERVICE_RPC_URL_BASE: "ftp://x" });
    } catch (e) {
      expect((e as ChainConfigError).problems).toHaveLength(2);
      expect(messageOf(e)).toContain("SERVICE_RPC_URL_BASE");
    }
  });
});
