/**
 * The watching half's statements (sweeps/watch.ts), one function each, text as it was inline:
 * the relayer's unfinished transactions, a signed one seen by the node, a replacement recorded
 * before it is broadcast, a transaction's sweeps, its outcome once mined, and a nonce used by a
 * transaction that is none of ours.
 */
import { Type } from "@sinclair/typebox";
import type { Sql, TransactionSql } from "postgres";
import { col, decodeRows, rowShape, type RowOf } from "../../db/rows.ts";
import { SWEEP_TOKEN_COLUMNS, sweepTokensSql } from "../tokens.ts";
import { SWEEP_TRANSACTION_STATES } from "../states.ts";

/** An unfinished transaction of the relayer. */
const OpenTransaction = rowShape("open sweep transactions", {
  id: col.text,
  kind: col.oneOf(["sweep", "authorization", "refund"] as const),
  nonce: col.bigint,
  state: col.oneOf(SWEEP_TRANSACTION_STATES),
  /** Every hash signed for its nonce, oldest first. */
  tx_hashes: col.json(Type.Array(col.hex)),
  tx_hash: col.nullable(col.hex),
  /** The signed bytes of tx_hash, kept so that any process can broadcast them again. */
  raw_tx: col.nullable(col.hex),
  max_fee_per_gas: col.nullable(col.numeric),
  age_ms: col.float,
});
export type OpenTransactionRow = RowOf<typeof OpenTransaction>;

/** The relayer's transactions on the network still `signed` or `sent`, by nonce, each with its age since sent (or signed). */
export async function openTransactions(sql: Sql, chainId: number, relayer: string): Promise<OpenTransactionRow[]> {
  return decodeRows(
    OpenTransaction,
    await sql`
      select id, kind, nonce, state, tx_hashes, tx_hash, raw_tx, max_fee_per_gas::text as max_fee_per_gas,
             (extract(epoch from (now() - coalesce(sent_at, created_at))) * 1000)::float8 as age_ms
        from app.sweep_transactions
       where chain_id = ${chainId} and relayer = ${relayer} and state in ('signed', 'sent')
       order by nonce`,
  );
}

/** The node has the signed transaction's newest hash: `sent` (unless it moved on meanwhile). */
export async function markTransactionSent(sql: Sql, id: string, newest: string): Promise<void> {
  await sql`update app.sweep_transactions set state = 'sent', last_error = null where id = ${id} and state = 'signed' and tx_hash = ${newest}`;
}

/**
 * A replacement (same nonce, higher fees) recorded before it is broadcast, only if nobody
 * replaced the transaction meanwhile (its newest hash is still `newest`). Whether it was.
 */
export async function recordReplacement(
  sql: Sql,
  args: { id: string; newest: string | null; hash: string; raw: string; maxFeePerGas: bigint },
): Promise<boolean> {
  const updated = await sql`
    update app.sweep_transactions
       set tx_hash = ${args.hash}, tx_hashes = tx_hashes || ${JSON.stringify([args.hash])}::jsonb, state = 'signed', raw_tx = ${args.raw},
           max_fee_per_gas = ${args.maxFeePerGas.toString()}::numeric, sent_at = now()
     where id = ${args.id} and state in ('signed', 'sent') and tx_hash is not distinct from ${args.newest}::text
    returning id`;
  return updated.length > 0;
}

const TransactionSweep = rowShape("sweeps of a transaction", {
  id: col.text,
  session_id: col.text,
  deposit_address: col.text,
  settlement_address: col.text,
  ...SWEEP_TOKEN_COLUMNS,
});

/** The sweeps a transaction carries (still `sending`), with their tokens, oldest first. */
export async function sweepsOfTransaction(sql: Sql, txId: string): Promise<RowOf<typeof TransactionSweep>[]> {
  const rows = await sql`
    select w.id, w.session_id, w.deposit_address, w.settlement_address, ${sweepTokensSql(sql, "w", "d")}
      from app.sweeps w left join app.session_deposits d on d.session_id = w.session_id and d.chain_id = w.chain_id
     where w.transaction_id = ${txId} and w.state = 'sending'
     order by w.created_at, w.id`;
  return decodeRows(TransactionSweep, rows);
}

/** A transaction mined: its receipt's figures, `mined`, unless recorded already. Whether this recorded it. */
export async function recordTransactionMined(
  tx: TransactionSql,
  id: string,
  receipt: { transactionHash: string; blockNumber: bigint; gasUsed: bigint; effectiveGasPrice: bigint; status: string },
): Promise<boolean> {
  const done = await tx`
      update app.sweep_transactions
         set state = 'mined', tx_hash = ${receipt.transactionHash}, block_number = ${receipt.blockNumber.toString()}::bigint,
             gas_used = ${receipt.gasUsed.toString()}::bigint, effective_gas_price = ${receipt.effectiveGasPrice.toString()}::numeric, mined_at = now(),
             last_error = ${receipt.status === "success" ? null : "reverted"}
       where id = ${id} and state in ('signed', 'sent')
      returning id`;
  return done.length > 0;
}

const ConfirmedSweep = rowShape("confirm a transaction's sweeps", { session_id: col.text });

/** The transaction's sweeps that moved money: `confirmed` with what each swept. Returns their sessions (one per sweep). */
export async function confirmSweeps(tx: TransactionSql, txId: string, confirmed: readonly { id: string; swept: string }[]): Promise<string[]> {
  const rows = await tx`
        with r as (select * from jsonb_to_recordset(${JSON.stringify(confirmed)}::jsonb) as r(id text, swept text))
        update app.sweeps s set state = 'confirmed', swept_amount = r.swept::numeric, last_error = null, updated_at = now()
          from r where s.id = r.id and s.state = 'sending' and s.transaction_id = ${txId}
        returning s.session_id`;
  return decodeRows(ConfirmedSweep, rows).map((r) => r.session_id);
}

/**
 * The nonce was used by a transaction that is none of ours: the transaction `failed` and its
 * sweeps queued again without counting the attempt. Whether this did it (not done already).
 */
export async function releaseTransactionSweeps(tx: TransactionSql, txId: string): Promise<boolean> {
  const done = await tx`
      update app.sweep_transactions set state = 'failed', last_error = 'nonce used by another transaction of the relayer'
       where id = ${txId} and state in ('signed', 'sent') returning id`;
  if (done.length === 0) return false;
  await tx`
      update app.sweeps set state = 'queued', attempts = greatest(attempts - 1, 0), next_attempt_at = now(), updated_at = now()
       where transaction_id = ${txId} and state = 'sending'`;
  return true;
}
