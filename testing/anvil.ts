/**
 * A fresh anvil for contract tests and benches: a free 127.0.0.1 port, chain id 31337.
 * A thin layer over shared/devchain (the one place that knows how to run anvil), retrying
 * when another process grabs the free port between our look and anvil's bind.
 */
import { startDevChain } from "../shared/devchain/index.ts";
import { freePort } from "./ports.ts";

export interface Anvil {
  rpcUrl: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

export async function startAnvil(opts: { args?: string[] } = {}): Promise<Anvil> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    try {
      const chain = await startDevChain({ port, chainId: 31337, extraArgs: opts.args });
      return { rpcUrl: chain.rpcUrl, port, pid: chain.pid, stop: chain.stop };
    } catch (err) {
      lastError = err;
    }
  }
  throw new Error(`anvil did not start: ${String(lastError)}`);
}
