/**
 * What the payer's checkout reads with the session token (GET /api/payment-sessions): the
 * public view plus what a checkout page needs to guide a payment and show its progress —
 * the status reason (which final screen), the merchant's public id (the SDK checks it), per
 * network what a wallet needs to add it, and the payments seen on-chain with their
 * confirmations. Pure: the caller reads the rows.
 */
import type { NetworkConfig } from "../../../shared/chains/config.ts";
import type { Transfer } from "./decide.ts";
import type { PaymentMethod } from "./facts.ts";
import type { GaslessOffer } from "../gasless/authorization.ts";
import { checksummed, type NetworkView, type PublicSessionView } from "./views.ts";

export interface PayerNetworkView extends NetworkView {
  /** Given to the wallet by wallet_addEthereumChain; null when the wallet must know the network already. */
  rpcUrl: string | null;
  nativeCurrency: { name: string; symbol: string; decimals: number };
  explorerUrl: string | null;
  /** What to sign there to pay without the gas coin (gasless/offers.ts fills it in); null: not offered. */
  gasless: GaslessOffer | null;
}

/** A payment seen on-chain, as the indexer saw it: a transfer into the session's deposit address, or the payer's authorization carried out. */
export interface PayerPayment {
  chainId: number;
  txHash: string;
  amountBaseUnits: string;
  /** head − block + 1 (the network's `confirmations` make it count). */
  confirmations: number;
  method: PaymentMethod;
  /** The address the money came from (EIP-55); null when the index did not say. */
  payer: string | null;
  /** The stablecoin paid (EIP-55); `amountBaseUnits` is in the network's `decimals` (the session's unit). Null when the index did not say. */
  token: string | null;
}

export interface PayerSessionView extends Omit<PublicSessionView, "networks"> {
  statusReason: string;
  merchantId: string;
  tokenExpiresAt: string;
  networks: PayerNetworkView[];
  payments: PayerPayment[];
}

/** Every network we run on pays gas in ether (Ethereum, Base, their test networks, anvil). */
const ETHER = { name: "Ether", symbol: "ETH", decimals: 18 } as const;

export function payerView(
  base: PublicSessionView,
  extra: { statusReason: string; merchantId: string; tokenExpiresAt: Date },
  networks: readonly NetworkConfig[],
  /** Transfers into the deposit addresses and payments by authorization (movements.authorizedPayments). */
  transfers: readonly Transfer[],
): PayerSessionView {
  return {
    ...base,
    statusReason: extra.statusReason,
    merchantId: extra.merchantId,
    tokenExpiresAt: extra.tokenExpiresAt.toISOString(),
    networks: base.networks.map((n) => {
      const net = networks.find((c) => c.chainId === n.chainId);
      return { ...n, rpcUrl: net?.publicRpcUrl ?? null, nativeCurrency: { ...ETHER }, explorerUrl: net?.explorerUrl ?? null, gasless: null };
    }),
    // Oldest first, so a page lists them in the order they were paid.
    payments: [...transfers]
      .sort((a, b) => b.confirmations - a.confirmations || a.logIndex - b.logIndex)
      .map((t) => ({
        chainId: t.chainId,
        txHash: t.txHash,
        amountBaseUnits: t.value.toString(),
        confirmations: t.confirmations,
        method: t.method ?? "transfer",
        payer: t.from ? checksummed(t.from) : null,
        token: t.token ? checksummed(t.token) : null,
      })),
  };
}

/** A weak validator of a view: the checkout polls with If-None-Match and gets 304 while nothing changed. */
export function viewEtag(view: PayerSessionView): string {
  const hasher = new Bun.CryptoHasher("sha256");
  hasher.update(JSON.stringify(view));
  return `W/"${hasher.digest("base64url").slice(0, 22)}"`;
}
