/**
 * The relayer's statements on refunds paid from the merchant's own wallet (send-wallet-refunds.ts;
 * app.refund_wallet_payments): the due authorizations, one sent back to the merchant to sign
 * again, the wallets' own transfers to watch, and a transaction's authorization (to sign it again).
 */
import type { Sql, TransactionSql } from "postgres";
import { col, decodeFirst, decodeRows, rowShape, type RowOf } from "../../db/rows.ts";
import { recordRefundEvent } from "../../refunds/events.ts";

const Wallet = {
  refund_id: col.text,
  from_address: col.text,
  token_address: col.text,
  to_address: col.text,
  value: col.wholeNumber,
};

const AnyDue = rowShape("a wallet refund due", { one: col.int });

/** Whether a wallet refund's authorization waits for the relayer on the network. */
export async function anyWalletAuthorizationDue(sql: Sql, chainId: number): Promise<boolean> {
  const rows = await sql`
    select 1 as one from app.refunds r join app.refund_wallet_payments w on w.refund_id = r.id and w.kind = 'authorization'
     where r.chain_id = ${chainId} and r.state = 'PENDING' and r.funding = 'merchant_wallet' and r.waiting_reason is null and r.next_attempt_at <= now() limit 1`;
  return decodeFirst(AnyDue, rows) !== undefined;
}

const DueAuthorization = rowShape("due wallet authorization", {
  ...Wallet,
  valid_after: col.wholeNumber,
  valid_before: col.wholeNumber,
  nonce: col.text,
  signature: col.text,
  now_seconds: col.wholeNumber,
});
export type DueWalletAuthorization = RowOf<typeof DueAuthorization>;

/** The oldest due wallet authorization of the network, its refund locked (SKIP LOCKED: a cancel holding it wins). */
export async function claimDueWalletAuthorization(tx: TransactionSql, chainId: number): Promise<DueWalletAuthorization | undefined> {
  const rows = await tx`
    select w.refund_id, w.from_address, w.token_address, w.to_address, w.value::text as value, w.valid_after::text as valid_after,
           w.valid_before::text as valid_before, w.nonce, w.signature, floor(extract(epoch from now()))::bigint::text as now_seconds
      from app.refunds r join app.refund_wallet_payments w on w.refund_id = r.id and w.kind = 'authorization'
     where r.chain_id = ${chainId} and r.state = 'PENDING' and r.funding = 'merchant_wallet' and r.waiting_reason is null and r.next_attempt_at <= now()
     order by r.next_attempt_at, r.created_at, r.id
     limit 1
     for update of r skip locked`;
  return decodeFirst(DueAuthorization, rows);
}

/**
 * A wallet authorization that can no longer be carried out (its window closed, the token refuses
 * it): removed, and the refund waits for the merchant's wallet again (awaiting_wallet). Nothing
 * was paid: the refund stays PENDING, its amount held, and may be canceled.
 */
export async function askWalletAgain(tx: TransactionSql, refundId: string): Promise<void> {
  await tx`delete from app.refund_wallet_payments where refund_id = ${refundId} and kind = 'authorization'`;
  await tx`update app.refunds set waiting_reason = 'awaiting_wallet', updated_at = now() where id = ${refundId}`;
}

/** A wallet refund whose authorization the chain carried out by another transaction than ours: SENT and SUCCEEDED now, with both events. */
export async function carriedOutElsewhere(tx: TransactionSql, refundId: string): Promise<void> {
  await tx`update app.refunds set state = 'SENT', waiting_reason = null, attempts = attempts + 1, sent_at = now(), updated_at = now() where id = ${refundId}`;
  await recordRefundEvent(tx, refundId, "refund.sent");
  await tx`update app.refunds set state = 'SUCCEEDED', finished_at = now(), updated_at = now() where id = ${refundId}`;
  await recordRefundEvent(tx, refundId, "refund.succeeded");
}

const SentTransfer = rowShape("wallet transfer to watch", { ...Wallet, tx_hash: col.text });
export type WalletTransfer = RowOf<typeof SentTransfer>;

/** The network's SENT refunds whose wallet sent the transfer itself: the hashes to watch. */
export async function sentWalletTransfers(sql: Sql, chainId: number, limit: number): Promise<WalletTransfer[]> {
  const rows = await sql`
    select w.refund_id, w.from_address, w.token_address, w.to_address, w.value::text as value, w.tx_hash
      from app.refunds r join app.refund_wallet_payments w on w.refund_id = r.id and w.kind = 'transfer'
     where r.chain_id = ${chainId} and r.state = 'SENT' and r.funding = 'merchant_wallet'
     order by r.sent_at, r.id
     limit ${limit}`;
  return decodeRows(SentTransfer, rows);
}

/** Whether the refund is still SENT (locked): a receipt is recorded once, whichever sweeper reads it first. */
export async function lockSentRefund(tx: TransactionSql, refundId: string): Promise<boolean> {
  return (await tx`select 1 from app.refunds where id = ${refundId} and state = 'SENT' for update`).length > 0;
}

const TxAuthorization = rowShape("a refund transaction's wallet authorization", { ...Wallet, valid_after: col.wholeNumber, valid_before: col.wholeNumber, nonce: col.text, signature: col.text });

/** The wallet authorization a refund transaction carries (none: a refund-balance transaction). */
export async function walletAuthorizationOfTransaction(sql: Sql | TransactionSql, txId: string): Promise<RowOf<typeof TxAuthorization> | undefined> {
  const rows = await sql`
    select w.refund_id, w.from_address, w.token_address, w.to_address, w.value::text as value, w.valid_after::text as valid_after,
           w.valid_before::text as valid_before, w.nonce, w.signature
      from app.refunds r join app.refund_wallet_payments w on w.refund_id = r.id and w.kind = 'authorization'
     where r.transaction_id = ${txId} and r.funding = 'merchant_wallet' limit 1`;
  return decodeFirst(TxAuthorization, rows);
}

const Payer = rowShape("wallet refund's payer", { refund_id: col.text, from_address: col.text });

/** Who pays each of these refunds from a wallet (the settlement address), by refund id. */
export async function walletPayersOf(tx: TransactionSql, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = decodeRows(Payer, await tx`select refund_id, from_address from app.refund_wallet_payments where refund_id in ${tx(ids as string[])}`);
  return new Map(rows.map((r) => [r.refund_id, r.from_address]));
}
