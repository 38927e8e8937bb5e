/**
 * TEST/REHEARSAL helper: a local stand-in for a main network, as an operator would try going
 * live offline. A real anvil with the preset's chain id (1 for Ethereum, 8453 for Base), and a
 * 6-decimal token's code placed at the preset's canonical USDC address (anvil_setCode): our
 * TestUSD, whose minter (the public dev faucet) is in its code, so payers can be given "USDC".
 * Ethereum's stand-in also has TestUSDT's code (no return data from transfer, USDT's approve
 * rule) at Tether's USDT address; Base has no USDT preset. The deposit factory is NOT there
 * unless asked for: on a fresh main network it is the operator's step (`bun run admin factory:deploy`).
 */
import { concat, erc20Abi, type Address, type Hex, type PublicClient, type WalletClient } from "viem";
import { PRESETS } from "../shared/chains/presets.ts";
import { startDevChain, type DevChain } from "../shared/devchain/index.ts";
import {
  DEPLOY_SALT,
  DETERMINISTIC_DEPLOYER,
  ensureServiceContractsDeployed,
  mintTestUsd,
  predictedTestUsdtAddress,
  predictedTokenAddress,
  testUsdInitCode,
  testUsdtInitCode,
} from "../shared/contracts/deploy.ts";
import { localClients } from "../shared/devchain/clients.ts";
import { freePort } from "./ports.ts";

/** Every production preset can be stood in for: Ethereum, Base, Arbitrum One, OP Mainnet, Polygon PoS. */
export type MainnetKey = "ethereum" | "base" | "arbitrum" | "optimism" | "polygon";

/** Tether USD on Ethereum (chain 1). */
export const ETHEREUM_USDT: Address = PRESETS.ethereum.stablecoins[1].address!;

export interface MainnetStandIn {
  key: MainnetKey;
  chainId: number;
  rpcUrl: string;
  chain: DevChain;
  /** The preset's USDC address, carrying a 6-decimal token's code. */
  usdc: Address;
  /** Mints `amount` base units of the stand-in USDC to `to` (a real Transfer from 0x0). */
  mintUsdc(to: Address, amount: bigint): Promise<{ blockNumber: bigint; transactionHash: Hex }>;
  /** `holder`'s balance of the stand-in USDC, or of `token`. */
  balanceOf(holder: Address, token?: Address): Promise<bigint>;
  rpc(method: string, params: unknown[]): Promise<unknown>;
  /** Mines `blocks` empty blocks. */
  mine(blocks: number): Promise<void>;
  deployFactory(): Promise<void>;
  stop(): Promise<void>;
}

/** Ethereum's stand-in: USDT too. */
export interface EthereumStandIn extends MainnetStandIn {
  /** ETHEREUM_USDT, carrying TestUSDT's code (transfer returns no data, USDT's approve rule). */
  usdt: Address;
  /** Mints `amount` base units of the stand-in USDT to `to` (a real Transfer from 0x0). */
  mintUsdt(to: Address, amount: bigint): Promise<{ blockNumber: bigint; transactionHash: Hex }>;
}

export function startMainnetStandIn(key: "ethereum", opts?: { port?: number; factory?: boolean }): Promise<EthereumStandIn>;
export function startMainnetStandIn(key: MainnetKey, opts?: { port?: number; factory?: boolean }): Promise<MainnetStandIn>;
export async function startMainnetStandIn(key: MainnetKey, opts: { port?: number; factory?: boolean } = {}): Promise<MainnetStandIn> {
  const preset = PRESETS[key];
  const chain = await startDevChain({ port: opts.port ?? (await freePort()), chainId: preset.chainId });
  try {
    const { publicClient, walletClient } = localClients(chain.rpcUrl, preset.chainId);
    const rpc = (method: string, params: unknown[]) => publicClient.request({ method: method as never, params: params as never });
    const usdc = preset.stablecoins[0].address as Address;
    // Each of the preset's stablecoins at its canonical address: TestUSD's code where the token
    // has EIP-3009 (USDC), TestUSDT's where it has not (USDT: transfer returns no data).
    for (const coin of preset.stablecoins) {
      const [initCode, at] = coin.eip3009 ? [testUsdInitCode(), predictedTokenAddress()] : [testUsdtInitCode(), predictedTestUsdtAddress()];
      await copyDeployedCode({ publicClient, walletClient, rpc }, initCode, at, coin.address as Address);
    }
    const standIn: MainnetStandIn = {
      key,
      chainId: preset.chainId,
      rpcUrl: chain.rpcUrl,
      chain,
      usdc,
      mintUsdc: (to, amount) => mintTestUsd({ publicClient, walletClient, to, amount, token: usdc }),
      balanceOf: (holder, token = usdc) => publicClient.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [holder] }),
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
    if (key !== "ethereum") return standIn;
    const ethereum: EthereumStandIn = {
      ...standIn,
      usdt: ETHEREUM_USDT,
      mintUsdt: (to, amount) => mintTestUsd({ publicClient, walletClient, to, amount, token: ETHEREUM_USDT }),
    };
    return ethereum;
  } catch (err) {
    await chain.stop();
    throw err;
  }
}

/**
 * Deploys `initCode` through the deterministic deployer (landing at `deployedAt`), then copies
 * its runtime code to `to`. Only code is copied, no storage: the sandbox tokens keep nothing
 * that identifies them in storage, and their minter (the dev faucet) is an immutable in the code.
 */
async function copyDeployedCode(
  clients: { publicClient: PublicClient; walletClient: WalletClient; rpc: (method: string, params: unknown[]) => Promise<unknown> },
  initCode: Hex,
  deployedAt: Address,
  to: Address,
): Promise<void> {
  const { publicClient, walletClient, rpc } = clients;
  const existing = await publicClient.getCode({ address: deployedAt });
  if (!existing || existing === "0x") {
    const hash = await walletClient.sendTransaction({
      account: walletClient.account!,
      chain: walletClient.chain,
      to: DETERMINISTIC_DEPLOYER,
      data: concat([DEPLOY_SALT, initCode]),
    });
    await publicClient.waitForTransactionReceipt({ hash });
  }
  const code = await publicClient.getCode({ address: deployedAt });
  if (!code || code === "0x") throw new Error(`nothing deployed at ${deployedAt}`);
  await rpc("anvil_setCode", [to, code]);
}
