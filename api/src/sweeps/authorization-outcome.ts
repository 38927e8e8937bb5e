/**
 * What happens to a recorded authorization once its relayer transaction (kind `authorization`,
 * send-authorization.ts) has an outcome, for watch.ts and reconcile.ts:
 *
 *   mined, and its receipt's logs show the token's Transfer(from → settlement, value) and
 *   AuthorizationUsed(from, nonce)      → `mined`, with the hash (gasless/submission.ts receiptPaid);
 *   mined without them (it reverted)    → `failed` for good, never sent again: `used_elsewhere`
 *                                         when the chain says the nonce is used (a stranger's
 *                                         transaction carried it first), else `reverted`;
 *   its nonce taken by another of the relayer's transactions, or the chain lost it
 *                                       → `recorded` again (it never ran, or no longer has),
 *                                         to be checked and sent anew.
 */
import type { TransactionSql, Sql } from "postgres";
import { getAddress, type Hex, type TransactionReceipt } from "viem";
import { eip3009Abi } from "../../../shared/contracts/eip3009.ts";
import { col, decodeFirst, rowShape, type RowOf } from "../db/rows.ts";
import { receiptPaid, USED_ELSEWHERE, type RecordedAuthorization, type Refusal } from "../gasless/submission.ts";
import type { SweepChain } from "./chain.ts";

/** A recorded authorization's columns as the relayer reads them (uint256 fields as numeric text): the claim's (send-authorization.ts) and the outcome's. */
export const RECORDED_COLUMNS = {
  session_id: col.text,
  token_address: col.text,
  from_address: col.text,
  to_address: col.text,
  value: col.numeric,
  valid_after: col.numeric,
  valid_before: col.numeric,
  nonce: col.hex,
  signature: col.hex,
};

const SendingRow = rowShape("authorization of a transaction", RECORDED_COLUMNS);

/** A row read with RECORDED_COLUMNS, as the relayer's code uses it. */
export function recordedAuthorization(row: RowOf<typeof SendingRow>): RecordedAuthorization {
  return {
    sessionId: row.session_id,
    tokenAddress: row.token_address,
    fromAddress: row.from_address,
    toAddress: row.to_address,
    value: row.value,
    validAfter: row.valid_after,
    validBefore: row.valid_before,
    nonce: row.nonce,
    signature: row.signature,
  };
}

/** The authorization a transaction carries, while it is `sending`. */
export async function authorizationOf(sql: Sql | TransactionSql, txId: string): Promise<RecordedAuthorization | undefined> {
  const row = decodeFirst(
    SendingRow,
    await sql`
      select session_id, token_address, from_address, to_address, value::text as value, valid_after::text as valid_after,
             valid_before::text as valid_before, nonce, signature
        from app.payment_authorizations where transaction_id = ${txId} and status = 'sending'`,
  );
  return row && recordedAuthorization(row);
}

/** A mined (and confirmed) authorization transaction: its outcome, with the transaction's, in one database transaction. */
export async function recordAuthorizationMined(c: SweepChain, txId: string, receipt: TransactionReceipt): Promise<void> {
  const auth = await authorizationOf(c.sql, txId);
  const paid = auth !== undefined && receiptPaid(receipt, auth);
  let failure: Refusal | undefined;
  if (auth && !paid) {
    const used = await c.client.readContract({
      address: getAddress(auth.tokenAddress),
      abi: eip3009Abi,
      functionName: "authorizationState",
      args: [getAddress(auth.fromAddress), auth.nonce],
    });
    failure = used
      ? USED_ELSEWHERE
      : { reason: "reverted", detail: `The relayer's transaction ${receipt.transactionHash} did not carry the transfer out (${receipt.status}); it is not sent again.` };
  }
  const recorded = await c.sql.begin(async (tx) => {
    const done = await tx`
      update app.sweep_transactions
         set state = 'mined', tx_hash = ${receipt.transactionHash}, block_number = ${receipt.blockNumber.toString()}::bigint,
             gas_used = ${receipt.gasUsed.toString()}::bigint, effective_gas_price = ${receipt.effectiveGasPrice.toString()}::numeric,
             mined_at = now(), last_error = ${paid ? null : (failure?.reason ?? "reverted")}
       where id = ${txId} and state in ('signed', 'sent')
      returning id`;
    if (done.length === 0) return false; // recorded already (by another sweeper, or an earlier pass)
    await tx`
      update app.payment_authorizations
         set status = ${paid ? "mined" : "failed"}, tx_hash = ${receipt.transactionHash},
             reason = ${failure?.reason ?? null}, detail = ${failure?.detail ?? null}, updated_at = now()
       where transaction_id = ${txId} and status = 'sending'`;
    return true;
  });
  if (!recorded) return;
  c.log(
    `sweeper ${c.net.name}: ${receipt.transactionHash} mined in block ${receipt.blockNumber} (gas ${receipt.gasUsed}): authorization of ${auth?.sessionId ?? "?"} ${paid ? "paid" : `failed (${failure?.reason})`}`,
  );
}

/** Its transaction can never land (or the chain lost it): the record is due again, to be checked and sent anew. */
export async function requeueAuthorizations(tx: TransactionSql, txId: string, why: string, from: readonly ("sending" | "mined")[] = ["sending"]): Promise<void> {
  await tx`
    update app.payment_authorizations
       set status = 'recorded', transaction_id = null, tx_hash = null, next_attempt_at = now(), updated_at = now(),
           attempts = case when status = 'sending' then greatest(attempts - 1, 0) else attempts end,
           reason = null, detail = ${why}
     where transaction_id = ${txId} and status in ${tx(from)}`;
}
