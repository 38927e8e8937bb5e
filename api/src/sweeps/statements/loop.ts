/**
 * The sweeper loop's own statements (sweeps/sweeper.ts and the recovery command, recover.ts),
 * one function each: when the network's next queued sweep, recorded authorization, pending refund or automatic return falls due,
 * and the deposit a recovery sweeps from.
 */
import type { Sql } from "postgres";
import { col, decodeFirst, rowShape } from "../../db/rows.ts";
import { WAITING_ON_A_PERSON } from "../../refunds/logic.ts";

const NextDue = rowShape("sweeper: next due", { ms: col.nullable(col.float) }); // float8 milliseconds

/**
 * Milliseconds until the network's next queued sweep, recorded authorization, pending refund (one
 * with somewhere to go, waiting for nobody) or scheduled automatic return is due (negative:
 * overdue); null when none.
 */
export async function msUntilNextSweepDue(sql: Sql, chainId: number): Promise<number | null> {
  const next = decodeFirst(
    NextDue,
    await sql`
        select (extract(epoch from (least(
                  (select min(next_attempt_at) from app.sweeps where chain_id = ${chainId} and state = 'queued'),
                  (select min(next_attempt_at) from app.payment_authorizations where chain_id = ${chainId} and status = 'recorded'),
                  (select min(next_attempt_at) from app.refunds where chain_id = ${chainId} and state = 'PENDING' and (waiting_reason is null or waiting_reason not in ${sql([...WAITING_ON_A_PERSON])})),
                  (select min(due_at) from app.auto_returns where chain_id = ${chainId} and state = 'scheduled')
                ) - now())) * 1000)::float8 as ms`,
  );
  return next?.ms ?? null;
}

const SessionDeposit = rowShape("deposit to recover from", { address: col.text, settlement_address: col.text });

/** The session's deposit on the network: its address and settlement address; undefined when it has none there. */
export async function depositOnChain(sql: Sql, sessionId: string, chainId: number): Promise<{ address: string; settlement_address: string } | undefined> {
  return decodeFirst(SessionDeposit, await sql`select address, settlement_address from app.session_deposits where session_id = ${sessionId} and chain_id = ${chainId}`);
}
