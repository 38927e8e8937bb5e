/**
 * The reconciliation's statements (sweeps/reconcile.ts), one function each, text as it was
 * inline: the records that may be out of step with the chain, and a transaction the chain
 * no longer backs dropped with its sweeps queued again.
 */
import type { Sql, TransactionSql } from "postgres";
import { col, decodeRows, rowShape, type RowOf } from "../../db/rows.ts";
import { SWEEP_TRANSACTION_STATES } from "../states.ts";

/** A transaction at or above the chain's mined nonce count: the ones that may be out of step. */
const RecordedTransaction = rowShape("transactions to reconcile", {
  id: col.text,
  nonce: col.bigint,
  state: col.oneOf(SWEEP_TRANSACTION_STATES),
  tx_hash: col.nullable(col.hex),
});

/** The relayer's transactions on the network `mined`, `signed` or `sent` at nonce `fromNonce` or above. */
export async function transactionsFromNonce(sql: Sql, chainId: number, relayer: string, fromNonce: bigint): Promise<RowOf<typeof RecordedTransaction>[]> {
  return decodeRows(
    RecordedTransaction,
    await sql`
      select id, nonce, state, tx_hash from app.sweep_transactions
       where chain_id = ${chainId} and relayer = ${relayer} and state in ('mined', 'signed', 'sent') and nonce >= ${fromNonce.toString()}::bigint`,
  );
}

/** The transaction `dropped` with `why`, unless it is finished otherwise already. Whether this did it. */
export async function dropTransaction(tx: TransactionSql, id: string, why: string): Promise<boolean> {
  const done = await tx`
        update app.sweep_transactions set state = 'dropped', last_error = ${why}
         where id = ${id} and state in ('mined', 'signed', 'sent') returning id`;
  return done.length > 0;
}

const RequeuedSweep = rowShape("requeue a dropped transaction's sweeps", { session_id: col.text });

/**
 * A dropped transaction's sweeps (sending or confirmed) queued again, due now, an attempt not
 * counted for those still sending, with `error`. Returns their sessions (one per sweep).
 */
export async function requeueDroppedSweeps(tx: TransactionSql, txId: string, error: string): Promise<string[]> {
  const requeued = await tx`
        update app.sweeps
           set state = 'queued', transaction_id = null, swept_amount = null, next_attempt_at = now(), updated_at = now(),
               attempts = case when state = 'sending' then greatest(attempts - 1, 0) else attempts end,
               last_error = ${error}
         where transaction_id = ${txId} and state in ('sending', 'confirmed')
        returning session_id`;
  return decodeRows(RequeuedSweep, requeued).map((r) => r.session_id);
}
