/**
 * The statements of a network's shared machinery (sweeps/chain.ts), one function each, text as
 * it was inline: the per-(chain, relayer) nonce lock, the last recorded nonce, a signed
 * transaction recorded before it is broadcast, what the broadcast says, and failed attempts of
 * sweeps.
 */
import type { Sql, TransactionSql } from "postgres";
import { col, decodeFirst, decodeRows, rowShape } from "../../db/rows.ts";
import { SWEEP_STATES } from "../states.ts";

const NonceLock = rowShape("relayer nonce lock", { ok: col.bool });

/** Takes the nonce lock of `name` for the rest of `tx` if nobody holds it. Whether it did. */
export async function tryNonceLock(tx: TransactionSql, name: string): Promise<boolean> {
  const lock = decodeFirst(NonceLock, await tx`select pg_try_advisory_xact_lock(hashtext(${name})) as ok`);
  return lock?.ok === true;
}

/** The highest nonce recorded for the relayer (null: none yet). */
const LastNonce = rowShape("last recorded nonce", { n: col.nullable(col.bigint) });

/** The relayer's highest recorded nonce on the network, dropped transactions left out; null when none. */
export async function lastRecordedNonce(tx: TransactionSql, chainId: number, relayer: string): Promise<bigint | null> {
  const last = decodeFirst(
    LastNonce,
    await tx`
        select max(nonce) as n from app.sweep_transactions
         where chain_id = ${chainId} and relayer = ${relayer} and state <> 'dropped'`,
  );
  return last?.n ?? null;
}

/** A signed transaction, recorded `signed` with its hash and bytes before anything broadcasts it. */
export async function insertSignedTransaction(
  tx: TransactionSql,
  t: { id: string; kind: "sweep" | "authorization" | "refund"; chainId: number; relayer: string; nonce: bigint; hash: string; maxFeePerGas: bigint; raw: string },
): Promise<void> {
  await tx`
      insert into app.sweep_transactions (id, kind, chain_id, relayer, nonce, tx_hash, tx_hashes, state, max_fee_per_gas, raw_tx, sent_at)
      values (${t.id}, ${t.kind}, ${t.chainId}, ${t.relayer}, ${t.nonce.toString()}::bigint, ${t.hash},
              ${JSON.stringify([t.hash])}::jsonb, 'signed', ${t.maxFeePerGas.toString()}::numeric, ${t.raw}, now())`;
}

/** The node refused the broadcast: why, kept on the transaction. */
export async function recordBroadcastError(sql: Sql, txId: string, error: string): Promise<void> {
  await sql`update app.sweep_transactions set last_error = ${error} where id = ${txId}`;
}

/** The node took the broadcast of `hash`: `signed` → `sent` (unless replaced meanwhile). */
export async function markBroadcastSent(sql: Sql, txId: string, hash: string): Promise<void> {
  await sql`update app.sweep_transactions set state = 'sent', last_error = null where id = ${txId} and state = 'signed' and tx_hash = ${hash}`;
}

const SweepAttempts = rowShape("sweeps' attempts", { id: col.text, attempts: col.int });

/** The attempts each of the sweeps has so far. */
export async function attemptsOfSweeps(tx: TransactionSql, sweepIds: readonly string[]): Promise<{ id: string; attempts: number }[]> {
  return decodeRows(SweepAttempts, await tx`select id, attempts from app.sweeps where id in ${tx(sweepIds)}`);
}

/** A sweep whose failed attempt was recorded: its session, and whether that was its last. */
const RecordedFailure = rowShape("record failed sweep attempts", { session_id: col.text, state: col.oneOf(SWEEP_STATES) });

/**
 * Failed attempts written: each sweep's attempts, state (queued again after `delay` ms, or
 * failed) and error; with `txId`, only sweeps still `sending` in that transaction. Returns the
 * sessions of the sweeps that failed for good.
 */
export async function writeFailedAttempts(
  tx: TransactionSql,
  updates: readonly { id: string; attempts: number; state: string; error: string; delay: number }[],
  txId: string | undefined,
): Promise<string[]> {
  const done = await tx`
      with r as (select * from jsonb_to_recordset(${JSON.stringify(updates)}::jsonb) as r(id text, attempts int, state text, error text, delay float8))
      update app.sweeps s
         set state = r.state, attempts = r.attempts, last_error = r.error, updated_at = now(),
             next_attempt_at = case when r.state = 'queued' then now() + r.delay * interval '1 millisecond' else s.next_attempt_at end
        from r
       where s.id = r.id and (${txId ?? null}::text is null or (s.state = 'sending' and s.transaction_id = ${txId ?? null}::text))
      returning s.session_id, s.state`;
  return [...new Set(decodeRows(RecordedFailure, done).flatMap((d) => (d.state === "failed" ? [d.session_id] : [])))];
}
