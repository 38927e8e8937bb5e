/**
 * TEST/REHEARSAL helper: a local stand-in for a main network, as an operator would try going
 * live offline. A real anvil with the preset's chain id (1 for Ethereum, 8453 for Base), and a
 * 6-decimal token's code placed at the preset's canonical USDC address (anvil_setCode): our
 * TestUSD, whose minter (the public dev faucet) is in its code, so payers can be given "USDC".
 * The deposit factory is NOT there unless asked for: on a fresh main network it is the
 * operator's step (`bun run admin factory:deploy`).
 */
import { concat, erc20Abi, type Address, type Hex } from "viem";
import { PRESETS } from "../shared/chains/presets.ts";
import { startDevChain, type DevChain } from "../shared/devchain/index.ts";
import { DEPLOY_SALT, DETERMINISTIC_DEPLOYER, ensureServiceContractsDeployed, mintTestUsd, predictedTokenAddress, testUsdInitCode } from "../shared/contracts/deploy.ts";
import { localClients } from "../shared/devchain/clients.ts";
import { freePort } from "./ports.ts";

export type MainnetKey = "ethereum" | "base";

export interface MainnetStandIn {
  key: MainnetKey;
  chainId: number;
  rpcUrl: string;
  chain: DevChain;
  /** The preset's USDC address, carrying a 6-decimal token's code. */
  usdc: Address;
  /** Mints `amount` base units of the stand-in USDC to `to` (a real Transfer from 0x0). */
  mintUsdc(to: Address, amount: bigint): Promise<{ blockNumber: bigint; transactionHash: Hex }>;
  balanceOf(holder: Address): Promise<bigint>;
  rpc(method: string, params: unknown[]): Promise<unknown>;
  /** Mines `blocks` empty blocks. */
  mine(blocks: number): Promise<void>;
  deployFactory(): Promise<void>;
  stop(): Promise<void>;
}

export async function startMainnetStandIn(key: MainnetKey, opts: { port?: number; factory?: boolean } = {}): Promise<MainnetStandIn> {
  const preset = PRESETS[key];
  const chain = await startDevChain({ port: opts.port ?? (await freePort()), chainId: preset.chainId });
  try {
    const { publicClient, walletClient } = localClients(chain.rpcUrl, preset.chainId);
    const rpc = (method: string, params: unknown[]) => publicClient.request({ method: method as never, params: params as never });
    // TestUSD through the deterministic deployer, then its code copied to USDC's address.
    const hash = await walletClient.sendTransaction({
      account: walletClient.account!,
      chain: walletClient.chain,
      to: DETERMINISTIC_DEPLOYER,
      data: concat([DEPLOY_SALT, testUsdInitCode()]),
    });
    await publicClient.waitForTransactionReceipt({ hash });
    const code = await publicClient.getCode({ address: predictedTokenAddress() });
    if (!code || code === "0x") throw new Error("TestUSD was not deployed");
    const usdc = preset.stablecoins[0].address as Address;
    await rpc("anvil_setCode", [usdc, code]);
    const standIn: MainnetStandIn = {
      key,
      chainId: preset.chainId,
      rpcUrl: chain.rpcUrl,
      chain,
      usdc,
      mintUsdc: (to, amount) => mintTestUsd({ publicClient, walletClient, to, amount, token: usdc }),
      balanceOf: (holder) => publicClient.readContract({ address: usdc, abi: erc20Abi, functionName: "balanceOf", args: [holder] }),
      rpc,
      async mine(blocks) {
        await rpc("anvil_mine", [`0x${blocks.toString(16)}`]);
      },
      async deployFactory() {
        await ensureServiceContractsDeployed({ publicClient, walletClient });
      },
      stop: () => chain.stop(),
    };
    if (opts.factory) await standIn.deployFactory();
    return standIn;
  } catch (err) {
    await chain.stop();
    throw err;
  }
}
