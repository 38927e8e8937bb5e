/**
 * The Transactions CSV's columns (README "The merchant dashboard" documents each): the session,
 * then what reconciliation needs. Several values in one cell (two payments, a session offered on
 * two networks) are joined with ";". Pure: the route streams the rows.
 */
import { formatAmount } from "../../../shared/money.ts";
import type { SessionRow } from "../sessions/views.ts";
import { checksummed } from "../sessions/views.ts";
import { csvField } from "./transactions.ts";
import type { Reconciliation } from "./reconciliation.ts";

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
    ]
      .map(csvField)
      .join(",") + "\n"
  );
}
