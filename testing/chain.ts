/**
 * A fresh anvil with the sandbox contracts deployed (TestUSD, the DepositFactory,
 * AuthorizationBatch, TestUSDT), plus viem clients: the fixture of the contract tests and the
 * gas bench.
 */
import {
  createPublicClient,
  createWalletClient,
  http,
  type Address,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
} from "viem";
import { foundry } from "viem/chains";
import { testUsdAbi } from "../shared/contracts/artifacts.ts";
import { ensureDeployed, mintTestUsd } from "../shared/contracts/deploy.ts";
import { startAnvil, type Anvil } from "./anvil.ts";

/** Anvil's default unlocked accounts (test mnemonic #0..#8; #9 is the dev faucet). */
export const ANVIL_ACCOUNTS = [
  "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
  "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
  "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
  "0x90F79bf6EB2c4f870365E785982E1f101E93b906",
  "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65",
  "0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc",
  "0x976EA74026E726554dB657fA54763abd0C3a0aa9",
  "0x14dC79964da2C08b23698B3D3cc7Ca32193d9955",
  "0x23618e81E3f5cdF7f54C3d65f7FBc0aBf5B21E8f",
] as const satisfies readonly Address[];

export function clientsFor(rpcUrl: string, account: Address = ANVIL_ACCOUNTS[0]) {
  const transport = http(rpcUrl);
  // Anvil mines on every transaction: poll receipts quickly.
  const publicClient: PublicClient = createPublicClient({ chain: foundry, transport, pollingInterval: 20 });
  const walletClient = createWalletClient({ chain: foundry, transport, account, pollingInterval: 20 });
  return { publicClient, walletClient };
}

export async function startTestChain(opts: { anvilArgs?: string[] } = {}) {
  const anvil: Anvil = await startAnvil({ args: opts.anvilArgs });
  try {
    const { publicClient, walletClient } = clientsFor(anvil.rpcUrl);
    const { token, factory, usdt } = await ensureDeployed({ publicClient, walletClient });
    const wallet = (account: Address) => clientsFor(anvil.rpcUrl, account).walletClient;
    return {
      anvil,
      publicClient,
      /** Relayer = anvil account #0. */
      walletClient,
      wallet,
      token,
      factory,
      /** TestUSDT (USDT's quirks); `mint` and `balanceOf` take it as their token. */
      usdt,
      mint: (to: Address, amount: bigint, tokenAddress: Address = token) =>
        mintTestUsd({ publicClient, walletClient, token: tokenAddress, to, amount }),
      balanceOf: (holder: Address, tokenAddress: Address = token) =>
        publicClient.readContract({ address: tokenAddress, abi: testUsdAbi, functionName: "balanceOf", args: [holder] }),
      /** Waits for a transaction and fails unless it succeeded. */
      receipt: async (hash: Hex): Promise<TransactionReceipt> => {
        const r = await publicClient.waitForTransactionReceipt({ hash });
        if (r.status !== "success") throw new Error(`transaction ${hash} reverted`);
        return r;
      },
      stop: () => anvil.stop(),
    };
  } catch (e) {
    await anvil.stop();
    throw e;
  }
}

export type TestChain = Awaited<ReturnType<typeof startTestChain>>;
