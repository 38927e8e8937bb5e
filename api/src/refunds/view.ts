/**
 * What the merchant sees of a refund (the API's answer, and later the dashboard's and the
 * webhooks' data): amounts as exact decimal strings in the session's unit, addresses checksummed.
 */
import { formatUnitAmount } from "../../../shared/money.ts";
import type { Environment } from "../../../shared/environment.ts";
import { presetByChainId } from "../../../shared/chains/presets.ts";
import { checksummed } from "../sessions/views.ts";
import { type RefundReason, type RefundState, type WaitingReason, type FailureReason, type RefundFunding } from "./logic.ts";
import type { RefundRow } from "./rows.ts";

export interface RefundPartView {
  tokenAddress: string;
  tokenSymbol: string;
  decimals: number;
  amount: string;
  amountBaseUnits: string;
  destination: string | null;
}

export interface RefundView {
  refundId: string;
  paymentSessionId: string;
  status: RefundState;
  amount: string;
  currency: string;
  reason: RefundReason;
  environment: Environment;
  chainId: number;
  network: string;
  parts: RefundPartView[];
  waitingReason: WaitingReason | null;
  failureReason: FailureReason | null;
  /** Where its money comes from: the refund balance, or the merchant's own wallet (paid from the settlement address). */
  funding: RefundFunding;
  transactionHash: string | null;
  metadata: Record<string, string>;
  createdAt: string;
  updatedAt: string;
  sentAt: string | null;
  finishedAt: string | null;
  /** The refund link's page (docs/refunds.md, "Refund links"); null for a refund to the payer's address. */
  claimUrl: string | null;
  claimExpiresAt: string | null;
  claimedAt: string | null;
  /** When the merchant approved a claim that waited for it (POST /refunds/{id}/approve). */
  approvedAt: string | null;
  requireApproval: boolean;
}

/** A refund's link as its view shows it (refunds/link-store.ts reads it, the id unsealed into its URL). */
export interface RefundLinkFacts {
  /** Null when the service's encryption key changed since the link was made (it still works for whoever has it). */
  claimUrl: string | null;
  expiresAt: Date;
  claimedAt: Date | null;
  approvedAt: Date | null;
  requireApproval: boolean;
}

export function refundView(r: RefundRow, txHash: string | undefined, link?: RefundLinkFacts): RefundView {
  return {
    refundId: r.id,
    paymentSessionId: r.sessionId,
    status: r.state as RefundState,
    amount: formatUnitAmount(BigInt(r.amount), r.unitDecimals),
    currency: r.currency,
    reason: r.reason as RefundReason,
    environment: r.environment,
    chainId: r.chainId,
    network: presetByChainId(r.chainId)?.name ?? `chain ${r.chainId}`,
    parts: r.parts.map((p) => ({
      tokenAddress: checksummed(p.token),
      tokenSymbol: p.symbol,
      decimals: p.decimals,
      amount: formatUnitAmount(BigInt(p.amount), r.unitDecimals),
      amountBaseUnits: p.baseUnits,
      destination: p.destination === null ? null : checksummed(p.destination),
    })),
    waitingReason: r.state === "PENDING" ? ((r.waitingReason as WaitingReason | null) ?? null) : null,
    failureReason: (r.failureReason as FailureReason | null) ?? null,
    funding: r.funding,
    transactionHash: txHash ?? null,
    metadata: r.metadata,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
    sentAt: r.sentAt?.toISOString() ?? null,
    finishedAt: r.finishedAt?.toISOString() ?? null,
    claimUrl: link?.claimUrl ?? null,
    claimExpiresAt: link?.expiresAt.toISOString() ?? null,
    claimedAt: link?.claimedAt?.toISOString() ?? null,
    approvedAt: link?.approvedAt?.toISOString() ?? null,
    requireApproval: link?.requireApproval ?? false,
  };
}
