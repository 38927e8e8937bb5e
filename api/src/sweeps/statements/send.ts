/**
 * The sending half's statements (sweeps/send.ts), one function each, text as it was inline:
 * whether anything is due, the claim of due sweeps (FOR UPDATE SKIP LOCKED, in the transaction
 * that holds the nonce lock), what becomes of the claimed ones (forced failure, stopped by the
 * budget, found empty, waiting for the relayer's balance, sending), the due ones deferred while
 * nothing can be sent, and the relayer's recent transactions for the spend guard.
 */
import type { Sql, TransactionSql } from "postgres";
import { col, decodeFirst, decodeRows, rowShape, type RowOf } from "../../db/rows.ts";
import { SWEEP_TOKEN_COLUMNS, sweepTokensSql } from "../tokens.ts";

/** Whether a queued sweep of the network is due. */
export async function anySweepDue(sql: Sql, chainId: number): Promise<boolean> {
  const [due] = await sql`
    select 1 as one from app.sweeps
     where chain_id = ${chainId} and state = 'queued' and next_attempt_at <= now() limit 1`;
  return !!due;
}

const ClaimedSweep = rowShape("claim due sweeps", {
  id: col.text,
  session_id: col.text,
  deposit_address: col.text,
  settlement_address: col.text,
  ...SWEEP_TOKEN_COLUMNS,
  attempts: col.int,
  force_sweep_failure: col.bool,
  /** Attempts of every sweep and of the authorization of the session on this network. */
  session_attempts: col.int,
});

/**
 * Up to `limit` due queued sweeps of the network, locked (SKIP LOCKED), none whose deposit
 * already has a sweep `sending`, oldest due first: each with its tokens, its session's sandbox
 * switch, and the attempts its session already cost on this network (sweeps and authorization).
 */
export async function claimDueSweeps(tx: TransactionSql, chainId: number, limit: number): Promise<RowOf<typeof ClaimedSweep>[]> {
  return decodeRows(
    ClaimedSweep,
    await tx`
      select s.id, s.session_id, s.deposit_address, s.settlement_address, ${sweepTokensSql(tx, "s", "d")}, s.attempts,
             p.force_sweep_failure,
             ((select coalesce(sum(o.attempts), 0) from app.sweeps o where o.session_id = s.session_id and o.chain_id = s.chain_id)
              + (select coalesce(sum(a.attempts), 0) from app.payment_authorizations a where a.session_id = s.session_id and a.chain_id = s.chain_id))::int as session_attempts
        from app.sweeps s join app.payment_sessions p on p.id = s.session_id
        left join app.session_deposits d on d.session_id = s.session_id and d.chain_id = s.chain_id
       where s.chain_id = ${chainId} and s.state = 'queued' and s.next_attempt_at <= now()
         and not exists (select 1 from app.sweeps o
                          where o.chain_id = s.chain_id and o.deposit_address = s.deposit_address and o.state = 'sending')
       order by s.next_attempt_at, s.created_at, s.id
       limit ${limit}
       for update of s skip locked`,
  );
}

/** Sandbox: the sweeps of sessions asked to fail fail at once (all attempts used), and those sessions' switch is reset. */
export async function failForcedSweeps(tx: TransactionSql, sweepIds: readonly string[], sessionIds: readonly string[], maxAttempts: number, error: string): Promise<void> {
  await tx`
        update app.sweeps set state = 'failed', attempts = ${maxAttempts}, last_error = ${error}, updated_at = now()
         where id in ${tx(sweepIds)}`;
  await tx`update app.payment_sessions set force_sweep_failure = false where id in ${tx(sessionIds)}`;
}

/** Sweeps stopped by the per-session budget: failed, with the guard's reason. */
export async function failOverBudgetSweeps(tx: TransactionSql, sweepIds: readonly string[], error: string): Promise<void> {
  await tx`
        update app.sweeps set state = 'failed', last_error = ${error}, updated_at = now()
         where id in ${tx(sweepIds)}`;
}

const EmptiedSweep = rowShape("confirm sweeps of empty deposits", { session_id: col.text });

/** Sweeps of deposits found already empty: confirmed, having moved nothing. Returns their sessions (one per sweep). */
export async function confirmEmptySweeps(tx: TransactionSql, sweepIds: readonly string[]): Promise<string[]> {
  const done = await tx`
        update app.sweeps set state = 'confirmed', swept_amount = 0, transaction_id = null, updated_at = now(),
               last_error = 'nothing to sweep: the deposit was already empty (swept by another transaction)'
         where id in ${tx(sweepIds)} returning session_id`;
  return decodeRows(EmptiedSweep, done).map((r) => r.session_id);
}

/** The relayer cannot pay for the sweep: its sweeps wait 30 seconds, with the reason. */
export async function waitForRelayerFunds(tx: TransactionSql, sweepIds: readonly string[], reason: string): Promise<void> {
  await tx`
        update app.sweeps set next_attempt_at = now() + interval '30 seconds', last_error = ${reason}, updated_at = now()
         where id in ${tx(sweepIds)}`;
}

/** The sweeps of a recorded (signed) transaction: `sending`, attempts + 1. */
export async function markSweepsSending(tx: TransactionSql, sweepIds: readonly string[], transactionId: string): Promise<void> {
  await tx`
      update app.sweeps set state = 'sending', attempts = attempts + 1, transaction_id = ${transactionId}, last_error = null, updated_at = now()
       where id in ${tx(sweepIds)}`;
}

const RecentTransactions = rowShape("relayer transactions lately", { minute: col.int, hour: col.int });

/** The relayer's transactions on the network in the last minute and the last hour (the spend guard's counts). */
export async function relayerTransactionsLately(sql: Sql, chainId: number, relayer: string): Promise<{ minute: number; hour: number }> {
  const counts = decodeFirst(
    RecentTransactions,
    await sql`
      select count(*) filter (where created_at > now() - interval '1 minute')::int as minute,
             count(*)::int as hour
        from app.sweep_transactions
       where chain_id = ${chainId} and relayer = ${relayer} and created_at > now() - interval '1 hour'`,
  );
  return { minute: counts?.minute ?? 0, hour: counts?.hour ?? 0 };
}

/** Every due queued sweep of the network waits `waitMs` with `reason`; nothing counts as an attempt. */
export async function deferDueSweeps(sql: Sql, chainId: number, reason: string, waitMs: number): Promise<void> {
  await sql`
    update app.sweeps set next_attempt_at = now() + ${waitMs} * interval '1 millisecond', last_error = ${reason}, updated_at = now()
     where chain_id = ${chainId} and state = 'queued' and next_attempt_at <= now()`;
}
