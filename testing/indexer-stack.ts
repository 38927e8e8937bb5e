/**
 * TEST/BENCH helper: real anvil chain(s) with TestUSD and the DepositFactory deployed at their
 * deterministic addresses (shared/contracts ensureDeployed), and a real Ponder indexer on a
 * given Postgres database.
 */
import type { Address, PublicClient, WalletClient } from "viem";
import { freePort } from "./ports.ts";
import { PRESETS, envSuffix, type NetworkKey } from "../shared/chains/presets.ts";
import { startDevChain, type DevChain } from "../shared/devchain/index.ts";
import { localClients } from "../shared/devchain/clients.ts";
import { ensureDeployed, mintTestUsd } from "../shared/contracts/deploy.ts";
import { startIndexer, type IndexerProcess, type StartIndexerOptions } from "../indexer/process.ts";

export interface TestChain {
  key: NetworkKey;
  chain: DevChain;
  token: Address;
  publicClient: PublicClient;
  walletClient: WalletClient;
  /** Mints `amount` TestUSD to `to` (a Transfer from 0x0) and resolves to the receipt once mined. */
  mint(to: Address, amount: bigint): Promise<{ blockNumber: bigint; transactionHash: `0x${string}` }>;
  rpc(method: string, params: unknown[]): Promise<unknown>;
}

/** `heartbeatSeconds`: also an empty block every so many seconds (as `bun run dev` runs it); default: blocks only on demand. */
export async function startTestChain(key: "local" | "local2", anvilArgs?: string[], heartbeatSeconds?: number): Promise<TestChain> {
  const chainId = PRESETS[key].chainId;
  const chain = await startDevChain({ port: await freePort(), chainId, extraArgs: anvilArgs, ...(heartbeatSeconds ? { heartbeatSeconds } : {}) });
  const { publicClient, walletClient } = localClients(chain.rpcUrl, chainId);
  const { token } = await ensureDeployed({ publicClient, walletClient });
  return {
    key,
    chain,
    token,
    publicClient,
    walletClient,
    mint: (to, amount) => mintTestUsd({ publicClient, walletClient, to, amount }),
    rpc: (method, params) => publicClient.request({ method: method as never, params: params as never }),
  };
}

export function chainEnv(chains: TestChain[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const c of chains) {
    env[`SERVICE_RPC_URL_${envSuffix(c.key)}`] = c.chain.rpcUrl; // TestUSD is the preset's token
  }
  return env;
}

/** Only our keys: a developer's SERVICE_* variables must not leak into a test's indexer. */
export function isolatedEnv(extra: Record<string, string>): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const k of Object.keys(process.env)) if (k.startsWith("SERVICE_") || k.startsWith("DATABASE_")) env[k] = undefined;
  return { ...env, ...extra };
}

export async function startTestIndexer(
  databaseUrl: string,
  chains: TestChain[],
  extraEnv: Record<string, string> = {},
  opts: Partial<StartIndexerOptions> = {},
): Promise<IndexerProcess> {
  const indexer = await startIndexer({
    databaseUrl,
    port: await freePort(),
    // These chains mine only on demand, so by default poll: a head subscription would leave
    // blocks mined while the indexer was down for the next head (tests pass "auto" to subscribe).
    env: isolatedEnv({ SERVICE_INDEXER_POLLING_MS: "100", ...Object.fromEntries(chains.map((c) => [`SERVICE_WS_URL_${envSuffix(c.key)}`, "off"])), ...chainEnv(chains), ...extraEnv }),
    onLog: process.env.INDEXER_TEST_LOGS ? (l) => console.log(l) : undefined,
    ...opts,
  });
  await indexer.waitUntilReady();
  return indexer;
}
