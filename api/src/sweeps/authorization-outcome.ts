/**
 * What happens to the recorded authorizations of a relayer transaction (kind `authorization`,
 * send-authorization.ts: one alone, or several through AuthorizationBatch) once it has an
 * outcome, for watch.ts and reconcile.ts. Each is judged on its own, from the receipt's logs:
 *
 *   the token's Transfer(from → settlement, value) and AuthorizationUsed(from, nonce) are there
 *                                       → `mined`, with the hash (gasless/submission.ts receiptPaid);
 *   they are not, and the chain says the nonce is used (a stranger's transaction carried it first)
 *                                       → `failed` for good: `used_elsewhere`;
 *   they are not, the nonce is unused, and it was sent alone (the transaction reverted)
 *                                       → `failed` for good: `reverted`;
 *   they are not, the nonce is unused, and it was one of a batch (the batch caught its failure,
 *   or the whole batch reverted: a contract payer's EIP-1271 check can swallow the batch's gas,
 *   so a reverted batch says nothing against the others in it)
 *                                       → `recorded` again, to be checked and sent anew, alone this
 *                                         time (planSubmission): one payer cannot hold the others
 *                                         back twice; its attempts count against the session's
 *                                         relayer budget;
 *   the transaction's nonce taken by another of the relayer's transactions, or the chain lost it
 *                                       → `recorded` again (it never ran, or no longer has).
 */
import type { TransactionSql, Sql } from "postgres";
import { getAddress, type Hex, type TransactionReceipt } from "viem";
import { eip3009Abi } from "../../../shared/contracts/eip3009.ts";
import { col, decodeRows, rowShape, type RowOf } from "../db/rows.ts";
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

/** The authorizations a transaction carries while they are `sending`, oldest first (their order in a batch). */
export async function authorizationsOf(sql: Sql | TransactionSql, txId: string): Promise<RecordedAuthorization[]> {
  const rows = decodeRows(
    SendingRow,
    await sql`
      select session_id, token_address, from_address, to_address, value::text as value, valid_after::text as valid_after,
             valid_before::text as valid_before, nonce, signature
        from app.payment_authorizations where transaction_id = ${txId} and status = 'sending'
       order by next_attempt_at, created_at`,
  );
  return rows.map(recordedAuthorization);
}

/** Whether the chain says the authorization's nonce is used (by anyone: our transaction, a stranger's, or the payer's cancel). */
export function usedOnChain(c: SweepChain, auth: RecordedAuthorization): Promise<boolean> {
  return c.client.readContract({
    address: getAddress(auth.tokenAddress),
    abi: eip3009Abi,
    functionName: "authorizationState",
    args: [getAddress(auth.fromAddress), auth.nonce],
  });
}

type Outcome = { sessionId: string; status: "mined" | "failed" | "recorded"; failure?: Refusal };

/** A mined (and confirmed) authorization transaction: each authorization's outcome, with the transaction's, in one database transaction. */
export async function recordAuthorizationMined(c: SweepChain, txId: string, receipt: TransactionReceipt): Promise<void> {
  const auths = await authorizationsOf(c.sql, txId);
  const batched = auths.length > 1;
  const outcomes: Outcome[] = await Promise.all(
    auths.map(async (auth): Promise<Outcome> => {
      if (receiptPaid(receipt, auth)) return { sessionId: auth.sessionId, status: "mined" };
      if (await usedOnChain(c, auth)) return { sessionId: auth.sessionId, status: "failed", failure: USED_ELSEWHERE };
      if (batched) {
        const detail =
          receipt.status === "success"
            ? `Not carried out in the relayer's batch ${receipt.transactionHash}; checked and sent again, alone.`
            : `The relayer's batch ${receipt.transactionHash} reverted as a whole (another authorization in it can cause that); checked and sent again, alone.`;
        return { sessionId: auth.sessionId, status: "recorded", failure: { reason: "reverted", detail } };
      }
      return {
        sessionId: auth.sessionId,
        status: "failed",
        failure: { reason: "reverted", detail: `The relayer's transaction ${receipt.transactionHash} did not carry the transfer out (${receipt.status}); it is not sent again.` },
      };
    }),
  );
  const paid = outcomes.filter((o) => o.status === "mined").length;
  const recorded = await c.sql.begin(async (tx) => {
    const done = await tx`
      update app.sweep_transactions
         set state = 'mined', tx_hash = ${receipt.transactionHash}, block_number = ${receipt.blockNumber.toString()}::bigint,
             gas_used = ${receipt.gasUsed.toString()}::bigint, effective_gas_price = ${receipt.effectiveGasPrice.toString()}::numeric,
             mined_at = now(), last_error = ${paid === outcomes.length ? null : `${outcomes.length - paid} of ${outcomes.length} not carried out`}
       where id = ${txId} and state in ('signed', 'sent')
      returning id`;
    if (done.length === 0) return false; // recorded already (by another sweeper, or an earlier pass)
    for (const o of outcomes) {
      if (o.status === "recorded") {
        // Back in line, its attempt counted: checked alone at the next pass.
        await tx`
          update app.payment_authorizations
             set status = 'recorded', transaction_id = null, tx_hash = null, next_attempt_at = now(),
                 reason = null, detail = ${o.failure!.detail}, updated_at = now()
           where session_id = ${o.sessionId} and transaction_id = ${txId} and status = 'sending'`;
        continue;
      }
      await tx`
        update app.payment_authorizations
           set status = ${o.status}, tx_hash = ${receipt.transactionHash},
               reason = ${o.failure?.reason ?? null}, detail = ${o.failure?.detail ?? null}, updated_at = now()
         where session_id = ${o.sessionId} and transaction_id = ${txId} and status = 'sending'`;
    }
    return true;
  });
  if (!recorded) return;
  const told = outcomes.map((o) => `${o.sessionId} ${o.status === "mined" ? "paid" : o.status === "recorded" ? "due again" : `failed (${o.failure?.reason})`}`);
  c.log(`sweeper ${c.net.name}: ${receipt.transactionHash} mined in block ${receipt.blockNumber} (gas ${receipt.gasUsed}): authorization${outcomes.length === 1 ? "" : "s"} of ${told.join(", ") || "?"}`);
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
