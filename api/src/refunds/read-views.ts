/**
 * Refunds as the merchant sees them, read whole: each row with its transaction's hash and its
 * link (URL, expiry, claim). The API's refund routes answer these; the dashboard can show the same.
 */
import type { Sql, TransactionSql } from "postgres";
import type { Db } from "../db/client.ts";
import { linkFactsOf, type LinkBases } from "./link-store.ts";
import { hashOf, transactionHashes, type RefundRow } from "./store.ts";
import { refundView, type RefundView } from "./view.ts";

export async function refundViews(database: { db: Db; sql: Sql | TransactionSql }, bases: LinkBases, rows: RefundRow[]): Promise<RefundView[]> {
  const [hashes, links] = await Promise.all([transactionHashes(database.db, rows), linkFactsOf(database.sql, bases, rows)]);
  return rows.map((r) => refundView(r, hashOf(hashes, r), links.get(r.id)));
}
