/**
 * The relayer's statements on refunds (app.refunds: sweeps/send-refunds.ts sends them from the
 * merchants' refund vaults, watch.ts and reconcile.ts follow their transactions), one function
 * each: whether any is due, the claim, what a merchant sent in the last 24 hours, a refund made to
 * wait, sent, succeeded or failed, a transaction's refunds queued again, and the payments a
 * transaction carries (to sign it again). What the refund resource itself reads and writes is
 * refunds/store.ts.
 */
import type { Sql, TransactionSql } from "postgres";
import { Type } from "@sinclair/typebox";
import { col, decodeFirst, decodeRows, rowShape, type RowOf } from "../../db/rows.ts";
import { WAITING_ON_A_PERSON } from "../../refunds/logic.ts";

/** A refund that waits for a person (a claim, an approval, a destination) is never due; the others are. */
const HELD = [...WAITING_ON_A_PERSON];

/** A part as the relayer reads it: the token, its base units, where it goes (null: not known yet). */
const Part = Type.Object({ token: Type.String(), baseUnits: Type.String(), destination: Type.Union([Type.String(), Type.Null()]) });

const AnyDue = rowShape("a refund due", { one: col.int });

/** Whether a PENDING refund with somewhere to go (and nobody to wait for) is due on the network, from the refund balance (a wallet's refund is send-wallet-refunds.ts's). */
export async function anyRefundDue(sql: Sql, chainId: number): Promise<boolean> {
  const rows = await sql`
    select 1 as one from app.refunds
     where chain_id = ${chainId} and state = 'PENDING' and funding = 'balance' and next_attempt_at <= now() and (waiting_reason is null or waiting_reason not in ${sql(HELD)}) limit 1`;
  return decodeFirst(AnyDue, rows) !== undefined;
}

const DueRow = rowShape("claim due refunds", {
  id: col.text,
  merchant_id: col.text,
  environment: col.text,
  amount: col.wholeNumber,
  unit_decimals: col.int,
  parts: col.json(Type.Array(Part)),
});
export type DueRefund = RowOf<typeof DueRow>;

/** Up to `limit` due refunds of the network, locked (SKIP LOCKED: one a cancel holds is skipped), oldest due first. */
export async function claimDueRefunds(tx: TransactionSql, chainId: number, limit: number): Promise<DueRefund[]> {
  const rows = await tx`
    select id, merchant_id, environment, amount::text as amount, unit_decimals, parts from app.refunds
     where chain_id = ${chainId} and state = 'PENDING' and funding = 'balance' and next_attempt_at <= now() and (waiting_reason is null or waiting_reason not in ${tx(HELD)})
     order by next_attempt_at, created_at, id
     limit ${limit}
     for update skip locked`;
  return decodeRows(DueRow, rows);
}

const SentToday = rowShape("refunds sent today", { merchant_id: col.text, environment: col.text, amount: col.wholeNumber, unit_decimals: col.int });

/** The merchants' refunds sent (or succeeded) in the last 24 hours, every environment, each in its unit. */
export async function refundsSentToday(tx: TransactionSql, merchantIds: readonly string[]): Promise<RowOf<typeof SentToday>[]> {
  const rows = await tx`
    select merchant_id, environment, amount::text as amount, unit_decimals from app.refunds
     where state in ('SENT', 'SUCCEEDED') and sent_at > now() - interval '24 hours'
       and merchant_id in ${tx(merchantIds as string[])}`;
  return decodeRows(SentToday, rows);
}

/** Refunds that wait: why, and when they are looked at again. */
export async function markRefundsWaiting(tx: TransactionSql, ids: readonly string[], reason: string, waitMs: number): Promise<void> {
  await tx`
    update app.refunds set waiting_reason = ${reason}, next_attempt_at = now() + ${waitMs} * interval '1 millisecond', updated_at = now()
     where id in ${tx(ids as string[])}`;
}

/** Refunds bound to the relayer transaction just recorded (the same commit): SENT, no longer cancelable. */
export async function markRefundsSent(tx: TransactionSql, ids: readonly string[], transactionId: string): Promise<void> {
  await tx`
    update app.refunds set state = 'SENT', transaction_id = ${transactionId}, waiting_reason = null, attempts = attempts + 1, sent_at = now(), updated_at = now()
     where id in ${tx(ids as string[])}`;
}

export async function markRefundSucceeded(tx: TransactionSql, id: string): Promise<void> {
  await tx`update app.refunds set state = 'SUCCEEDED', finished_at = now(), updated_at = now() where id = ${id}`;
}

export async function markRefundFailed(tx: TransactionSql, id: string, reason: "reverted" | "transfer_missing"): Promise<void> {
  await tx`
    update app.refunds set state = 'FAILED', failure_reason = ${reason}, finished_at = now(), updated_at = now()
     where id = ${id}`;
}

/**
 * The refunds of a transaction that will never be mined (its nonce went to another) or that the
 * chain no longer has (`from` SUCCEEDED too: reorged away deeper than the confirmations) go out
 * again: nothing of them was paid (refunds/logic.ts, `dropped`).
 */
export async function requeueRefunds(tx: TransactionSql, txId: string, from: readonly ("SENT" | "SUCCEEDED")[] = ["SENT"]): Promise<void> {
  await tx`
    update app.refunds set state = 'PENDING', transaction_id = null, sent_at = null, finished_at = null, next_attempt_at = now(), updated_at = now(),
           attempts = case when state = 'SENT' then greatest(attempts - 1, 0) else attempts end
     where transaction_id = ${txId} and state in ${tx(from as ("SENT" | "SUCCEEDED")[])}`;
}

const CallPart = rowShape("a refund transaction's payments", { merchant_id: col.text, environment: col.text, parts: col.json(Type.Array(Part)) });

/** The payments a refund transaction carries, from its SENT refunds, in the order it was built. */
export async function refundTransactionParts(sql: Sql, txId: string): Promise<RowOf<typeof CallPart>[]> {
  return decodeRows(CallPart, await sql`select merchant_id, environment, parts from app.refunds where transaction_id = ${txId} and state = 'SENT' order by next_attempt_at, created_at, id`);
}
