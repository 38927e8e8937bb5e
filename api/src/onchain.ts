/**
 * The on-chain side of a running service, in the order main.ts starts it:
 *   1. in dev, a local anvil test network with TestUSD and the deposit factory deployed
 *      (idempotent; chain state kept in the data dir) — before the API, whose workers use it;
 *   2. once the API and its Postgres are up, this node's seat at the indexer
 *      (nodes/indexer-start.ts: it runs its own Ponder all the time; the service reads it while this node holds the seat).
 */
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Config } from "./config.ts";
import { DEV_RELAYER_ACCOUNT, startDevChain, type DevChain } from "../../shared/devchain/index.ts";
import { ensureDeployed } from "../../shared/contracts/deploy.ts";
import { ensureRefundVaultsDeployed } from "../../shared/contracts/refund-vaults.ts";
import { localClients } from "../../shared/devchain/clients.ts";

export const LOCAL_CHAIN_ID = 31337;

/** Where the local network's contracts are (the same addresses on every local network). */
export interface LocalContracts {
  token: string;
  usdt: string;
  factory: string;
  batch: string;
}

/** The env the chain registry reads: in dev, the local network is ours unless one is configured. */
export function chainEnvFor(config: Config, dev: boolean, env: Record<string, string | undefined>) {
  const ownLocalChain = dev && !env.SERVICE_RPC_URL_LOCAL;
  return {
    ownLocalChain,
    env: ownLocalChain ? { ...env, SERVICE_RPC_URL_LOCAL: `http://127.0.0.1:${config.devChainPort}` } : { ...env },
  };
}

/**
 * The local test network: anvil on `port` (state kept under `dataDir`/anvil, every block with a
 * transaction written at once), the test tokens and the service's contracts at their fixed
 * addresses (deployed once; idempotent). `bun run dev` runs it in its own process; `bun run
 * admin sandbox:chain` runs it alone, for several `bun run start` processes to share.
 */
export async function startLocalNetwork(opts: { dataDir: string; port: number; host?: string }, log: (line: string) => void): Promise<DevChain & { contracts: LocalContracts }> {
  const dir = resolve(opts.dataDir, "anvil");
  mkdirSync(dir, { recursive: true });
  const chain = await startDevChain({ port: opts.port, host: opts.host, chainId: LOCAL_CHAIN_ID, stateFile: join(dir, "state.json"), heartbeatSeconds: 1, persistEachBlock: true });
  try {
    const clients = localClients(chain.rpcUrl, LOCAL_CHAIN_ID);
    const { token, usdt, factory, batch, deployed } = await ensureDeployed(clients);
    // The refund balances for the sandbox's relayer (the dev key): refunds go out on the local network too.
    const refunds = await ensureRefundVaultsDeployed(clients, DEV_RELAYER_ACCOUNT.address);
    const made = [...deployed, ...(refunds.sent ? ["refund vaults"] : [])];
    log(`local test network ${chain.rpcUrl} (chain ${LOCAL_CHAIN_ID}): TestUSD ${token}, TestUSDT ${usdt}, deposit factory ${factory}, AuthorizationBatch ${batch}, RefundVaults ${refunds.address}${made.length ? ` (deployed ${made.join(", ")})` : ""}`);
    return { ...chain, contracts: { token, usdt, factory, batch } };
  } catch (err) {
    await chain.stop();
    throw err;
  }
}
