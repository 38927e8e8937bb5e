/**
 * The Transactions CSV's columns (docs/dashboard.md documents each): the session, then what
 * reconciliation needs, then its money out to payers. Several values in one cell (two payments, a
 * session offered on two networks) are joined with ";". A session's row is of kind `payment`; each
 * of its SUCCEEDED refunds follows it as a row of kind `refund` (its amount positive: the kind is
 * the direction, since a leading minus would be taken for a formula and marked). Pure: the route
 * streams the rows.
 */
import { formatAmount } from "../../../shared/money.ts";
import type { SessionRow } from "../sessions/views.ts";
import { checksummed } from "../sessions/views.ts";
import { csvField } from "./transactions.ts";
import type { Reconciliation } from "./reconciliation.ts";
import type { RefundView } from "../refunds/view.ts";

export const CSV_COLUMNS = [
  "session_id",
  "status",
  "status_reason",
  "amount",
  "currency",
  "network_chain_id",
  "reference_id",
  "created_at",
  "deposit_address",
  "payer_address",
  "payment_tx_hash",
  "paid_at",
  "settlement_tx_hash",
  "settled_at",
  "metadata",
  // Added after the others, so that positional readers of the first columns keep working.
  "payment_method",
  "payment_token",
  // Refunds: a row of kind "refund" per SUCCEEDED refund, after its session's row of kind "payment".
  "kind",
  "refund_id",
  "refund_destination",
  "refund_tx_hash",
  "refund_sent_at",
  "refund_finished_at",
] as const;

export const CSV_HEADER = CSV_COLUMNS.join(",") + "\n";

export function csvRow(r: SessionRow, rec: Reconciliation | undefined): string {
  const many = (xs: string[] | undefined) => (xs ?? []).join(";");
  const meta = r.metadata && Object.keys(r.metadata).length ? JSON.stringify(r.metadata) : "";
  return (
    [
      r.id,
      r.status,
      r.statusReason,
      formatAmount(r.amountMinor),
      r.currency,
      r.fundingChainId?.toString() ?? "",
      r.referenceId,
      r.createdAt.toISOString(),
      many(rec?.depositAddresses.map(checksummed)),
      many(rec?.payerAddresses.map(checksummed)),
      many(rec?.paymentTxHashes),
      rec?.paidAt?.toISOString() ?? "",
      many(rec?.settlementTxHashes),
      rec?.settledAt?.toISOString() ?? "",
      meta,
      many(rec?.paymentMethods),
      many(rec?.paymentTokens),
      "payment",
      "",
      "",
      "",
      "",
      "",
    ]
      .map(csvField)
      .join(",") + "\n"
  );
}

/**
 * A refund's row (money out): the session's id and reference, the refund's state and reason in the
 * status columns, its amount and network, its tokens in payment_token, its own metadata; the
 * payment-only columns empty.
 */
export function csvRefundRow(session: SessionRow, r: RefundView): string {
  const many = (xs: string[]) => xs.join(";");
  const meta = Object.keys(r.metadata).length ? JSON.stringify(r.metadata) : "";
  return (
    [
      r.paymentSessionId,
      r.status,
      r.reason,
      r.amount,
      r.currency,
      String(r.chainId),
      session.referenceId,
      r.createdAt,
      "",
      "",
      "",
      "",
      "",
      "",
      meta,
      "",
      many([...new Set(r.parts.map((p) => p.tokenSymbol))]),
      "refund",
      r.refundId,
      many([...new Set(r.parts.flatMap((p) => (p.destination ? [p.destination] : [])))]),
      r.transactionHash ?? "",
      r.sentAt ?? "",
      r.finishedAt ?? "",
    ]
      .map(csvField)
      .join(",") + "\n"
  );
}
