/**
 * What the payer view (GET /api/payment-sessions) offers to sign, per network: the session's
 * TransferWithAuthorization without `from`, where the operator has paying by authorization on
 * (SERVICE_GASLESS_<KEY>), the session's token has EIP-3009, the session can still be paid
 * that way, and the relayer can submit it now (the network's fee within its ceiling,
 * SERVICE_GASLESS_MAX_FEE_GWEI_<KEY>, and the relayer funded for one submission). Elsewhere
 * `gasless` is null and the payer pays by a plain transfer as before.
 */
import { getAddress, type Address } from "viem";
import type { NetworkConfig } from "../../../shared/chains/config.ts";
import { authorizationTerms, offerOf, tooLate, type GaslessOffer } from "./authorization.ts";
import { relayerCapacity, tokenDomain } from "./chain.ts";

interface SessionLike {
  id: string;
  status: string;
  expiresAt: Date;
}

interface DepositLike {
  chainId: number;
  tokenAddress: string;
  /** Always read with the session's deposits; optional in the views' type. */
  settlementAddress?: string;
  requiredBaseUnits: bigint | string;
}

/**
 * chainId → what to sign there; a network absent from the map offers nothing. `relayerFor`:
 * the relayer's address on a network (sweeps/relayer.ts relayerAddressOn); none, no offer.
 */
export async function gaslessOffers(
  session: SessionLike,
  deposits: readonly DepositLike[],
  networks: readonly NetworkConfig[],
  relayerFor: (net: NetworkConfig) => Address | undefined,
  nowMs = Date.now(),
): Promise<Map<number, GaslessOffer>> {
  const offers = new Map<number, GaslessOffer>();
  if (session.status !== "PENDING") return offers;
  await Promise.all(
    deposits.map(async (d) => {
      const net = networks.find((n) => n.chainId === d.chainId);
      if (!net?.gasless || !d.settlementAddress) return;
      const relayer = relayerFor(net);
      if (!relayer) return;
      const terms = authorizationTerms(session, { settlementAddress: d.settlementAddress, requiredBaseUnits: d.requiredBaseUnits });
      if (tooLate(terms, BigInt(Math.floor(nowMs / 1000)))) return;
      // An RPC that does not answer, a token without EIP-3009, a fee above the ceiling or a
      // relayer that could not pay for the submission: no offer (the plain transfer stays).
      const [read, can] = await Promise.all([
        tokenDomain({ chainId: net.chainId, rpcUrl: net.rpcUrl, token: getAddress(d.tokenAddress) }),
        relayerCapacity(net, relayer),
      ]);
      if (read.ok && can.ok) offers.set(d.chainId, offerOf(read.domain, terms));
    }),
  );
  return offers;
}

/** The view with each network's `gasless` (null where nothing is offered). */
export function withGaslessOffers<N extends { chainId: number }, V extends { networks: N[] }>(
  view: V,
  offers: ReadonlyMap<number, GaslessOffer>,
): Omit<V, "networks"> & { networks: (N & { gasless: GaslessOffer | null })[] } {
  return { ...view, networks: view.networks.map((n) => ({ ...n, gasless: offers.get(n.chainId) ?? null })) };
}
