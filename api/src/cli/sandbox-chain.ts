/**
 * `bun run admin sandbox:chain [--port P] [--data-dir D]`: the local test network of `bun run
 * dev` on its own, in the foreground, for several `bun run start` processes to share (docs/
 * topology.md, "One host"): anvil (chain 31337, a block a second, its state kept under the data
 * dir), the test tokens (TestUSD, TestUSDT) and the service's contracts (the deposit factory,
 * AuthorizationBatch) at their fixed addresses. It prints the variables the processes need and
 * runs until SIGINT or SIGTERM.
 */
import type { Config } from "../config.ts";
import { LOCAL_CHAIN_ID, startLocalNetwork } from "../onchain.ts";
import { stopOnSignals } from "../shutdown.ts";
import { wholeFlag } from "./pg.ts";
import { describeError } from "../../../shared/describe-error.ts";

type Die = (message: string) => never;

export async function sandboxChainCommand(args: { port?: string; dataDir?: string }, config: Config, die: Die): Promise<void> {
  const port = wholeFlag("port", args.port, config.devChainPort, 1, 65535, die);
  const dataDir = args.dataDir ?? config.dataDir;
  const log = (line: string) => console.error(`[sandbox chain] ${line}`);
  const chain = await startLocalNetwork({ dataDir, port }, log).catch((e) => die(describeError(e)));
  log(`chain ${LOCAL_CHAIN_ID}, state in ${dataDir}/anvil; the sandbox relayer and faucet are anvil's public test accounts; Ctrl-C stops it`);
  // What every process needs to serve the local sandbox network (its preset knows the contracts' addresses).
  console.log(`SERVICE_RPC_URL_LOCAL=${chain.rpcUrl}`);
  stopOnSignals(log, () => chain.stop());
}
