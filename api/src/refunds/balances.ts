/**
 * A merchant's refund balance per network and token (docs/refunds.md): the vault's address —
 * the same on every network where one relayer signs, computed before anything is deployed — and
 * what it holds, read from the chain (null when the network's RPC did not answer).
 */
import { formatUnitAmount } from "../../../shared/money.ts";
import { erc20Abi, type Address } from "viem";
import type { Environment } from "../../../shared/environment.ts";
import type { NetworkConfig } from "../../../shared/chains/config.ts";
import { publicClientFor } from "../../../shared/chains/check.ts";
import { predictedRefundVaultsAddress, refundVaultAddress, refundVaultSalt } from "../../../shared/contracts/refund-vaults.ts";
import { relayerAddressOn } from "../credentials/relayer.ts";

export interface RefundBalanceView {
  chainId: number;
  network: string;
  /** Send stablecoins here to fund refunds on this network; null where no relayer signs (a production network without SERVICE_RELAYER_PRIVATE_KEY). */
  address: string | null;
  tokens: { tokenAddress: string; tokenSymbol: string; decimals: number; balanceBaseUnits: string | null; balance: string | null }[];
}

/** The merchant's vault on `net`, if a relayer signs there. */
export function refundVaultOn(net: Pick<NetworkConfig, "environment">, relayerKey: `0x${string}` | undefined, merchantId: string, environment: Environment): Address | undefined {
  const relayer = relayerAddressOn(net, relayerKey);
  return relayer && refundVaultAddress(predictedRefundVaultsAddress(relayer), refundVaultSalt(merchantId, environment));
}

export async function refundBalances(
  networks: readonly NetworkConfig[],
  relayerKey: `0x${string}` | undefined,
  merchantId: string,
  environment: Environment,
): Promise<RefundBalanceView[]> {
  return Promise.all(
    networks
      .filter((n) => n.environment === environment)
      .map(async (net) => {
        const vault = refundVaultOn(net, relayerKey, merchantId, environment);
        const client = publicClientFor(net, { timeoutMs: 5_000, retryCount: 0 });
        const tokens = await Promise.all(
          net.stablecoins.map(async (t) => {
            const held = vault
              ? await client.readContract({ address: t.address, abi: erc20Abi, functionName: "balanceOf", args: [vault] }).catch(() => null)
              : null;
            return {
              tokenAddress: t.address,
              tokenSymbol: t.symbol,
              decimals: t.decimals,
              balanceBaseUnits: held === null ? null : held.toString(),
              balance: held === null ? null : formatUnitAmount(held, Math.max(2, t.decimals)),
            };
          }),
        );
        return { chainId: net.chainId, network: net.name, address: vault ?? null, tokens };
      }),
  );
}
