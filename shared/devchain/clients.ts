/** TEST/DEV helpers: viem clients for a local anvil chain, signing with anvil's first account. */
import { createPublicClient, createWalletClient, defineChain, http, type PublicClient, type WalletClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { ANVIL_ACCOUNTS } from "./index.ts";

export function localClients(rpcUrl: string, chainId: number, accountIndex = 0): { publicClient: PublicClient; walletClient: WalletClient } {
  const chain = defineChain({
    id: chainId,
    name: `anvil-${chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const transport = http(rpcUrl);
  const account = privateKeyToAccount(ANVIL_ACCOUNTS[accountIndex]!.privateKey);
  return {
    publicClient: createPublicClient({ chain, transport, pollingInterval: 50 }) as PublicClient,
    walletClient: createWalletClient({ chain, transport, account }),
  };
}
