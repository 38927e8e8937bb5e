/**
 * What a merchant needs to match a payment with its books: who paid (the sender of each
 * transfer into the deposit address, from the indexer's `transfers`), how deep each movement
 * is (confirmations: the indexed head − its block + 1, as the checkout's view counts them), and
 * per session the payment and settlement transactions with their times (from the session's
 * ledger, app.session_funds). Read-only; with no index here (or one being rebuilt) the payer
 * and confirmations are simply unknown. The indexer's tables are read through sessions/indexed.ts,
 * the one place that knows them.
 */
import type { Sql } from "postgres";
import { indexerTablesPresent, isMissingTable, ledgerMovements } from "../sessions/indexed.ts";
import { col, decodeRows, rowShape } from "../db/rows.ts";
import { tokenLabel } from "./home-figures.ts";
import { and, asc, eq, inArray } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { refunds } from "../db/schema.ts";
import { transactionHashes } from "../refunds/store.ts";
import { refundView, type RefundView } from "../refunds/view.ts";

const DepositRow = rowShape("reconciliation deposits", { session_id: col.text, chain_id: col.int, address: col.text });
/** One session's reconciliation columns of the CSV export. */
export interface Reconciliation {
  /** The deposit address of the network that was paid; every one of the session's while unpaid. */
  depositAddresses: string[];
  /** The senders of the confirmed payments (distinct, in payment order). */
  payerAddresses: string[];
  /** How they were paid, "transfer" or "authorization" (distinct, in payment order). */
  paymentMethods: string[];
  /** In which stablecoins, by symbol (distinct, in payment order). */
  paymentTokens: string[];
  paymentTxHashes: string[];
  /** The block time of the last confirmed payment in. */
  paidAt: Date | null;
  settlementTxHashes: string[];
  /** When the last sweep to the settlement address was confirmed. */
  settledAt: Date | null;
}

/**
 * For a page of sessions, in two statements: their deposit addresses, and their ledger's
 * movements (not reverted) with each payment's sender (the indexer's row of that very transfer,
 * by its primary key).
 */
export async function reconciliationOf(sql: Sql, sessions: { id: string; fundingChainId: number | null }[]): Promise<Map<string, Reconciliation>> {
  const out = new Map<string, Reconciliation>(
    sessions.map((s) => [s.id, { depositAddresses: [], payerAddresses: [], paymentMethods: [], paymentTokens: [], paymentTxHashes: [], paidAt: null, settlementTxHashes: [], settledAt: null }]),
  );
  if (sessions.length === 0) return out;
  const ids = sessions.map((s) => s.id);
  const indexed = await indexerTablesPresent(sql);
  const read = () =>
    Promise.all([
      sql`select session_id, chain_id, address from app.session_deposits where session_id = any(${ids}::text[]) order by session_id, chain_id`,
      ledgerMovements(sql, ids, indexed),
    ]);
  let deposits, funds;
  try {
    const [d, f] = await read();
    [deposits, funds] = [decodeRows(DepositRow, d), f];
  } catch (e) {
    if (!isMissingTable(e)) throw e;
    return reconciliationOf(sql, sessions); // the index went away between the check and the read
  }
  const paidChain = new Map<string, Set<number>>();
  for (const f of funds) {
    const r = out.get(f.session_id)!;
    const at = f.at;
    if (f.direction === "in") {
      pushNew(r.paymentTxHashes, f.tx_hash);
      if (f.payer) pushNew(r.payerAddresses, f.payer.toLowerCase());
      if (f.method) pushNew(r.paymentMethods, f.method);
      if (f.token) pushNew(r.paymentTokens, f.token.startsWith("0x") ? tokenLabel(f.chain_id, f.token) : f.token);
      if (!r.paidAt || at > r.paidAt) r.paidAt = at;
      paidChain.set(f.session_id, (paidChain.get(f.session_id) ?? new Set()).add(f.chain_id));
    } else {
      pushNew(r.settlementTxHashes, f.tx_hash);
      if (!r.settledAt || at > r.settledAt) r.settledAt = at;
    }
  }
  const funding = new Map(sessions.map((s) => [s.id, s.fundingChainId]));
  for (const d of deposits) {
    const id = d.session_id;
    const paid = funding.get(id) != null ? new Set([funding.get(id)!]) : paidChain.get(id);
    if (!paid || paid.has(d.chain_id)) out.get(id)!.depositAddresses.push(d.address);
  }
  return out;
}

function pushNew(list: string[], v: string) {
  if (!list.includes(v)) list.push(v);
}

/**
 * The money out to payers of a page of sessions, for the CSV: their SUCCEEDED refunds (a receipt
 * showed each part reach its destination), by session, oldest first, with their transactions'
 * hashes. A SENT refund may still fail or be sent again, and PENDING, CANCELED and FAILED ones
 * moved nothing: they have no row until they succeed.
 */
export async function succeededRefundsOf(db: Db, sessionIds: readonly string[]): Promise<Map<string, RefundView[]>> {
  const out = new Map<string, RefundView[]>();
  if (sessionIds.length === 0) return out;
  const rows = await db
    .select()
    .from(refunds)
    .where(and(inArray(refunds.sessionId, [...sessionIds]), eq(refunds.state, "SUCCEEDED")))
    .orderBy(asc(refunds.createdAt), asc(refunds.id));
  const hashes = await transactionHashes(db, rows);
  for (const r of rows) out.set(r.sessionId, [...(out.get(r.sessionId) ?? []), refundView(r, r.transactionId ? hashes.get(r.transactionId) : undefined)]);
  return out;
}
