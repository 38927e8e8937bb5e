/**
 * How sweeps get queued. The session actor writes a row into app.sweeps in the transaction of
 * the transition that calls for it, with a NOTIFY to the sweepers in the same statement
 * (`queueSweep`, or `queueSweepStatement` in a Pipeline): the NOTIFY is delivered on commit and
 * lost with a rollback like the row. The sweeper also polls, so a missed NOTIFY only delays a
 * sweep by the poll interval.
 *
 * Row contract (app.sweeps):
 *   id                 any unique text (newSweepId(): "swp_…")
 *   session_id         the payment session
 *   chain_id           the network to sweep on
 *   deposit_address    the session's deposit address there (session_deposits.address)
 *   settlement_address where it goes (session_deposits.settlement_address)
 *   token_address      the token to move (session_deposits.token_address; the zero address:
 *                      native coin only — native coin is moved by every sweep anyway)
 *   amount             base units the actor expects (informational: the whole balance moves)
 *   state              'queued' (default), next_attempt_at now() (default)
 * The sweeper moves it to 'sending' → 'confirmed' (swept_amount) | 'failed' (last_error) and
 * wakes the session (wakeSessions) in the transaction that records the outcome.
 */
import type { PendingQuery, Row, Sql, TransactionSql } from "postgres";
import { newId } from "../../../shared/ids.ts";

export const SWEEP_CHANNEL = "paysession_sweeps";

export const newSweepId = (): string => newId("sweep");
export const newSweepTransactionId = (): string => newId("sweepTransaction");

export interface NewSweep {
  sessionId: string;
  chainId: number;
  depositAddress: string;
  settlementAddress: string;
  tokenAddress: string;
  /** Base units (bigint or a decimal string). */
  amount: bigint | string;
  id?: string;
}

/** Inserts a queued sweep and notifies the sweepers, in the caller's transaction. Returns its id. */
export async function queueSweep(tx: Sql | TransactionSql, s: NewSweep): Promise<string> {
  const id = s.id ?? newSweepId();
  await queueSweepStatement(tx, { ...s, id });
  return id;
}

/** queueSweep's one statement (the row and the NOTIFY), to send in a Pipeline. */
export function queueSweepStatement(tx: Sql | TransactionSql, s: NewSweep & { id: string }): PendingQuery<Row[]> {
  return tx`
    with w as (
      insert into app.sweeps (id, session_id, chain_id, deposit_address, settlement_address, token_address, amount)
      values (${s.id}, ${s.sessionId}, ${s.chainId}, ${s.depositAddress.toLowerCase()}, ${s.settlementAddress.toLowerCase()},
              ${s.tokenAddress.toLowerCase()}, ${String(s.amount)}::numeric)
      returning 1)
    select pg_notify(${SWEEP_CHANNEL}, '') from w`;
}
