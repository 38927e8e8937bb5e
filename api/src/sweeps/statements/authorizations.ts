/**
 * The relayer's statements on the payers' recorded authorizations (app.payment_authorizations:
 * sweeps/send-authorization.ts submits them, sweeps/authorization-outcome.ts records what became
 * of them), one function each, text as it was inline: whether any is due, whether one of our
 * authorization transactions is in flight, the claim under the sessions' locks, what becomes of
 * the claimed ones, a transaction's authorizations, their outcome once mined, and their requeue.
 */
import type { Sql, TransactionSql } from "postgres";
import { SESSION_STATUSES } from "../../../../shared/status.ts";
import { col, decodeFirst, decodeRows, rowShape, type RowOf } from "../../db/rows.ts";
import type { RecordedAuthorization } from "../../gasless/submission.ts";

/** A recorded authorization's columns as the relayer reads them (uint256 fields as numeric text): the claim's and the outcome's. */
const RECORDED_COLUMNS = {
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

const DueRow = rowShape("authorizations: any due", { one: col.int });

/** Whether a recorded authorization of the network is due. */
export async function anyAuthorizationDue(sql: Sql, chainId: number): Promise<boolean> {
  const due = decodeFirst(
    DueRow,
    await sql`
      select 1 as one from app.payment_authorizations
       where chain_id = ${chainId} and status = 'recorded' and next_attempt_at <= now() limit 1`,
  );
  return !!due;
}

/** Whether an authorization transaction of the relayer on the network is still unmined (`signed` or `sent`). */
export async function authorizationTransactionInFlight(sql: Sql, chainId: number, relayer: string): Promise<boolean> {
  const inFlight = await sql`
    select 1 as one from app.sweep_transactions
     where chain_id = ${chainId} and relayer = ${relayer} and state in ('signed', 'sent') and kind = 'authorization' limit 1`;
  return inFlight.length > 0;
}

const ClaimedRow = rowShape("authorizations: claimed under their sessions' locks", {
  ...RECORDED_COLUMNS,
  session_status: col.oneOf(SESSION_STATUSES),
  now_seconds: col.wholeNumber,
  session_attempts: col.int,
  attempts: col.int,
});

/**
 * Up to `limit` due recorded authorizations of the network, their sessions' rows locked first
 * (SKIP LOCKED, in id order, as the actor and the route lock them), then the records (SKIP
 * LOCKED), oldest due first: each with its session's status, the database's clock in seconds and
 * the attempts its session already cost on this network (sweeps and this record).
 */
export async function claimDueAuthorizations(tx: TransactionSql, chainId: number, limit: number): Promise<RowOf<typeof ClaimedRow>[]> {
  return decodeRows(
    ClaimedRow,
    await tx`
        with due as (
          select session_id from app.payment_authorizations
           where chain_id = ${chainId} and status = 'recorded' and next_attempt_at <= now()
           order by next_attempt_at, created_at limit ${limit}
        ), s as (
          select id, status from app.payment_sessions where id in (select session_id from due) order by id for update skip locked
        )
        select a.session_id, a.token_address, a.from_address, a.to_address, a.value::text as value,
               a.valid_after::text as valid_after, a.valid_before::text as valid_before, a.nonce, a.signature,
               a.attempts, s.status as session_status, extract(epoch from now())::bigint as now_seconds,
               ((select coalesce(sum(o.attempts), 0) from app.sweeps o where o.session_id = a.session_id and o.chain_id = a.chain_id)
                + a.attempts)::int as session_attempts
          from app.payment_authorizations a join s on s.id = a.session_id
         where a.status = 'recorded' and a.next_attempt_at <= now()
         order by a.next_attempt_at, a.created_at
         for update of a skip locked`,
  );
}

/** The relayer cannot pay for the transaction: the records wait `waitMs`, with the reason. */
export async function waitForRelayerCapacity(tx: TransactionSql, sessionIds: readonly string[], reason: string, detail: string, waitMs: number): Promise<void> {
  await tx`
        update app.payment_authorizations
           set reason = ${reason}, detail = ${detail}, next_attempt_at = now() + ${waitMs} * interval '1 millisecond', updated_at = now()
         where session_id in ${tx(sessionIds)}`;
}

/** The records of a recorded (signed) transaction: `sending`, attempts + 1. */
export async function markAuthorizationsSending(tx: TransactionSql, sessionIds: readonly string[], transactionId: string): Promise<void> {
  await tx`
      update app.payment_authorizations
         set status = 'sending', attempts = attempts + 1, transaction_id = ${transactionId}, reason = null, detail = null, updated_at = now()
       where session_id in ${tx(sessionIds)}`;
}

/** A final refusal: the session's record `failed` with its reason. */
export async function failAuthorization(tx: TransactionSql, sessionId: string, reason: string, detail: string): Promise<void> {
  await tx`
    update app.payment_authorizations set status = 'failed', reason = ${reason}, detail = ${detail}, updated_at = now()
     where session_id = ${sessionId}`;
}

/** Every due record of the network waits `waitMs`, its reason recorded; nothing counts as an attempt. */
export async function deferDueAuthorizations(sql: Sql, chainId: number, reason: string, detail: string, waitMs: number): Promise<void> {
  await sql`
    update app.payment_authorizations
       set reason = ${reason}, detail = ${detail}, next_attempt_at = now() + ${waitMs} * interval '1 millisecond', updated_at = now()
     where chain_id = ${chainId} and status = 'recorded' and next_attempt_at <= now()`;
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

/** An authorization transaction mined: its receipt's figures and `lastError`, `mined`, unless recorded already. Whether this recorded it. */
export async function recordAuthorizationTransactionMined(
  tx: TransactionSql,
  txId: string,
  receipt: { transactionHash: string; blockNumber: bigint; gasUsed: bigint; effectiveGasPrice: bigint },
  lastError: string | null,
): Promise<boolean> {
  const done = await tx`
      update app.sweep_transactions
         set state = 'mined', tx_hash = ${receipt.transactionHash}, block_number = ${receipt.blockNumber.toString()}::bigint,
             gas_used = ${receipt.gasUsed.toString()}::bigint, effective_gas_price = ${receipt.effectiveGasPrice.toString()}::numeric,
             mined_at = now(), last_error = ${lastError}
       where id = ${txId} and state in ('signed', 'sent')
      returning id`;
  return done.length > 0;
}

/** Back in line, its attempt counted: the session's record of that transaction `recorded` again, due now, with `detail`. */
export async function authorizationDueAgain(tx: TransactionSql, sessionId: string, txId: string, detail: string): Promise<void> {
  await tx`
          update app.payment_authorizations
             set status = 'recorded', transaction_id = null, tx_hash = null, next_attempt_at = now(),
                 reason = null, detail = ${detail}, updated_at = now()
           where session_id = ${sessionId} and transaction_id = ${txId} and status = 'sending'`;
}

/** The session's record of that transaction settled: `mined` or `failed` (with why), with the transaction's hash. */
export async function settleAuthorization(
  tx: TransactionSql,
  args: { sessionId: string; txId: string; status: "mined" | "failed"; txHash: string; reason: string | null; detail: string | null },
): Promise<void> {
  await tx`
        update app.payment_authorizations
           set status = ${args.status}, tx_hash = ${args.txHash},
               reason = ${args.reason}, detail = ${args.detail}, updated_at = now()
         where session_id = ${args.sessionId} and transaction_id = ${args.txId} and status = 'sending'`;
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
