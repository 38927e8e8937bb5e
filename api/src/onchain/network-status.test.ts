/**
 * The per-network probe and readiness against real anvils standing in for Ethereum and Base
 * (chain ids 1 and 8453, a 6-decimal token at the canonical USDC addresses, no factory).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { loadChainsConfig } from "../../../shared/chains/config.ts";
import { predictedAuthorizationBatchAddress, predictedFactoryAddress } from "../../../shared/contracts/addresses.ts";
import { startMainnetStandIn, type MainnetStandIn } from "../../../testing/mainnet-standin.ts";
import { describeStatus, NetworkReadiness, probeNetwork } from "./network-status.ts";

let base: MainnetStandIn;
beforeAll(async () => {
  base = await startMainnetStandIn("base");
}, 30_000);
afterAll(async () => {
  await base?.stop();
});

const baseNet = (env: Record<string, string> = {}) => loadChainsConfig({ SERVICE_RPC_URL_BASE: base.rpcUrl, ...env }).networks[0]!;
const funded = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"; // anvil #1: 10,000 ETH
const empty = "0x00000000000000000000000000000000000000e1";

test("a main network without the factory: reachable, right chain and token, NOT ready, with the step to take", async () => {
  const s = await probeNetwork(baseNet(), { relayer: funded });
  expect(s).toMatchObject({
    chainId: 8453,
    chainIdSeen: 8453,
    ready: false,
    rpc: { reachable: true },
    factory: { address: predictedFactoryAddress(), present: false },
    stablecoin: { address: base.usdc, present: true, decimals: 6 },
    relayer: { address: funded, balance: "10000", minBalance: "0.005", low: false },
    authorizationBatch: { address: predictedAuthorizationBatchAddress(), present: false },
    fatal: [],
  });
  expect(BigInt(s.headBlock!)).toBeGreaterThan(0n);
  expect(s.notReady.join()).toContain("bun run admin factory:deploy --chain 8453");
  expect(describeStatus(s)).toContain("factory MISSING, batch missing");
  // Payments by authorization (on by default) would go one per transaction: a warning, not a refusal.
  expect(s.warnings).toEqual([expect.stringContaining(`no AuthorizationBatch at ${predictedAuthorizationBatchAddress()}`)]);
  expect((await probeNetwork(baseNet({ SERVICE_GASLESS_BASE: "false" }), { relayer: funded })).warnings).toEqual([]);
});

test("a relayer under its threshold is a warning, not a refusal; the threshold is per network", async () => {
  const s = await probeNetwork(baseNet({ SERVICE_GASLESS_BASE: "false" }), { relayer: empty });
  expect(s.fatal).toEqual([]);
  expect(s.relayer).toMatchObject({ balance: "0", low: true });
  expect(s.warnings.join()).toContain("SERVICE_RELAYER_MIN_BALANCE_BASE");
  const lowered = await probeNetwork(baseNet({ SERVICE_RELAYER_MIN_BALANCE_BASE: "0", SERVICE_GASLESS_BASE: "false" }), { relayer: empty });
  expect(lowered.relayer.low).toBe(false);
  expect(lowered.warnings).toEqual([]);
});

test("the wrong chain, a wrong token and an unreachable RPC are fatal, one line each, without the RPC URL", async () => {
  const wrongChain = await probeNetwork(loadChainsConfig({ SERVICE_RPC_URL_ETHEREUM: base.rpcUrl }).networks[0]!);
  expect(wrongChain.fatal).toEqual(["Ethereum: SERVICE_RPC_URL_ETHEREUM serves chain id 8453, expected 1"]);
  const noToken = await probeNetwork(baseNet({ SERVICE_STABLECOIN_ADDRESS_BASE: "0x00000000000000000000000000000000000000b2" }));
  expect(noToken.fatal.length).toBe(1);
  expect(noToken.fatal[0]).toContain("no contract at the stablecoin address");
  const secretUrl = "http://127.0.0.1:9/v2/SECRET-PROVIDER-KEY";
  const down = await probeNetwork(loadChainsConfig({ SERVICE_RPC_URL_BASE: secretUrl }).networks[0]!, { timeoutMs: 2000 });
  expect(down.rpc.reachable).toBe(false);
  expect(down.fatal.length).toBe(1);
  expect(down.fatal[0]).toStartWith("Base: RPC (SERVICE_RPC_URL_BASE) did not answer");
  expect(JSON.stringify(down)).not.toContain("SECRET-PROVIDER-KEY");
});

test("readiness follows the chain: the network becomes ready once the factory is deployed, without a restart", async () => {
  const lines: string[] = [];
  const readiness = new NetworkReadiness([baseNet()], { relayerFor: () => funded, minProbeIntervalMs: 0, log: (l) => lines.push(l) });
  expect(await readiness.isReady(8453)).toBe(false);
  expect((await readiness.partition("production")).notReady.map((n) => n.chainId)).toEqual([8453]);
  await base.deployFactory();
  expect(await readiness.isReady(8453)).toBe(true);
  expect(readiness.current()[0]).toMatchObject({ ready: true, factory: { present: true }, authorizationBatch: { present: true }, notReady: [], warnings: [] });
  expect(lines.join("\n")).toContain("Base: deposit factory found at");
  // Sticky: an RPC outage afterwards does not take sessions away (the factory cannot vanish).
  await base.stop();
  expect(await readiness.isReady(8453)).toBe(true);
  const after = await readiness.check(0);
  expect(after[0]!.ready).toBe(true);
  expect(after[0]!.rpc.reachable).toBe(false);
}, 30_000);

test("a new network preset is enabled by its RPC URL alone: Arbitrum One, OP Mainnet and Polygon PoS stand-ins (USDC and USDT at their canonical addresses) show up ready once the contracts are deployed", async () => {
  for (const key of ["arbitrum", "optimism", "polygon"] as const) {
    const standIn = await startMainnetStandIn(key, { factory: true });
    try {
      const [net] = loadChainsConfig({ [`SERVICE_RPC_URL_${key.toUpperCase()}`]: standIn.rpcUrl }).networks;
      const s = await probeNetwork(net!, { relayer: funded });
      expect(s).toMatchObject({ chainId: standIn.chainId, ready: true, fatal: [], notReady: [], warnings: [], factory: { present: true }, authorizationBatch: { present: true } });
      expect(s.stablecoins.map((c) => [c.symbol, c.present, c.decimals])).toEqual([
        ["USDC", true, 6],
        ["USDT", true, 6],
      ]);
      expect(describeStatus(s)).toMatch(/USDC 6 decimals, USDT 6 decimals, factory present, batch present, .* ready$/);
    } finally {
      await standIn.stop();
    }
  }
}, 60_000);
