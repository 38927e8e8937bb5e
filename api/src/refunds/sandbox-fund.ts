/**
 * The sandbox tool that funds a merchant's refund balance from the faucet, whichever door uses it:
 * the dashboard's "Fund from faucet" (dashboard/routes/refund-balance.ts) and
 * POST /sandbox/refund-balances/fund (http/sandbox.ts). Here, beside the refund balance it funds,
 * on the sandbox tools' own network choice (sessions/sandbox-tools.ts).
 */
import { getAddress, type Address } from "viem";
import { ApiError } from "../errors.ts";
import type { Merchant } from "../credentials/store.ts";
import { faucetMints } from "../sandbox/faucet.ts";
import { addressParam } from "../sessions/address-param.ts";
import { baseUnits, faucetNetwork, type SandboxServices, type SandboxTransfer } from "../sessions/sandbox-tools.ts";
import { refundVaultOn } from "./balances.ts";

export interface FundRefundBalanceInput {
  /** Default "100.00". */
  amount?: string;
  /** Default: the local test network (the first sandbox network with a faucet). */
  chainId?: number;
  /** Default: the network's TestUSD; TestUSDT too (the faucet mints both). */
  token?: string;
}

/**
 * Test tokens minted straight to the merchant's sandbox refund balance (its refund vault's
 * address, docs/refunds.md), so that sandbox refunds have money to go out with: the dashboard's
 * "Fund from faucet" and POST /sandbox/refund-balances/fund.
 */
export async function fundRefundBalance(services: SandboxServices, merchant: Merchant, input: FundRefundBalanceInput = {}): Promise<SandboxTransfer & { address: Address; tokenAddress: Address }> {
  const net = faucetNetwork(services, input.chainId, () => true);
  const token = input.token === undefined ? net.stablecoin.address : addressParam(input.token, "token");
  if (!faucetMints(net, token)) throw new ApiError("faucet_unavailable", `That token on ${net.name} is not ours to mint.`, "token");
  const coin = net.stablecoins.find((t) => t.address.toLowerCase() === token.toLowerCase());
  const vault = refundVaultOn(net, services.config.sweeps.relayerPrivateKey?.reveal(), merchant.id, "sandbox");
  if (!coin || !vault) throw new ApiError("faucet_unavailable", `${net.name} has no refund balance to fund here.`, "chainId");
  const amount = baseUnits(input.amount ?? "100.00", coin.decimals, 0n);
  // A network that does not answer is the catalogue's 503, for both doors (the page shows it).
  const txHash = await services.faucet.mint(net, vault, amount, getAddress(coin.address)).catch((e: unknown) => {
    throw new ApiError("network_unavailable", `${net.name} did not answer; retry shortly.`, undefined, { "retry-after": "5" }, { cause: e });
  });
  return { chainId: net.chainId, txHash, amountBaseUnits: amount.toString(), address: vault, tokenAddress: getAddress(coin.address) };
}

