/**
 * The session's money ledger (app.session_funds): every confirmed movement of money into a
 * deposit address or from it to the settlement address, reported to the merchant exactly once
 * — by the transition it caused, or by a money event of its own (`funds_received`,
 * `funds_settled`, `funds_reverted`) with its webhook. Which movement is reported how is decided
 * by the pure money-plan.ts; this file reads the ledger for it and writes what it decides. Runs
 * in the actor's transaction, under the session's row lock, so two steps never report one
 * movement.
 */
import type { PendingQuery, Row, TransactionSql } from "postgres";
import type { Pipeline } from "../db/pipeline.ts";
import { col, decodeRows, rowShape } from "../db/rows.ts";
import { DIRECTIONS, type LedgerMovement, type MoneyReport, type RecordedMovement } from "./money-plan.ts";
import { recordMoneyEvent, type LockedSession } from "./repository.ts";

/**
 * The movements reported so far: read with the step's other facts, under its row lock (a query
 * the caller sends with them; its rows are then read with reportedMovements).
 */
export function readReportedMovements(tx: TransactionSql, sessionId: string): PendingQuery<Row[]> {
  return tx`
    select chain_id, direction, tx_hash, log_index, amount::text as amount, reverted_at is not null as reverted from app.session_funds where session_id = ${sessionId}`;
}

const ReportedMovement = rowShape("reported movement", {
  chain_id: col.int,
  direction: col.oneOf(DIRECTIONS),
  tx_hash: col.text,
  log_index: col.int,
  amount: col.numeric,
  reverted: col.bool,
});

/** The rows of readReportedMovements, checked. */
export const reportedMovements = (rows: Iterable<unknown>): RecordedMovement[] =>
  decodeRows(ReportedMovement, rows).map((r) => ({ chainId: r.chain_id, direction: r.direction, txHash: r.tx_hash, logIndex: r.log_index, amount: r.amount, reverted: r.reverted }));

/**
 * Queues on `writes`, in the plan's order, each report: its own money event first (the session's
 * next sequence number, with its webhook deliveries) unless the step's transition tells it, then
 * its ledger write with the id of the event that told it.
 */
export function writeMoneyReports(writes: Pipeline, tx: TransactionSql, session: LockedSession, reports: readonly MoneyReport[]): void {
  for (const r of reports) {
    const eventId = r.toldBy.by === "transition" ? r.toldBy.eventId : recordMoneyEvent(writes, tx, session, r.toldBy.event);
    if (r.kind === "record") recordLedgerRow(writes, tx, session.id, r.movement, eventId);
    else markReverted(writes, tx, session.id, r.movement, eventId);
  }
}

/** Queues the ledger row of a movement, with the event that reported it (a replay of the same step writes nothing). */
function recordLedgerRow(writes: Pipeline, tx: TransactionSql, sessionId: string, m: LedgerMovement, eventId: string): void {
  writes.send(tx`
    insert into app.session_funds (session_id, chain_id, direction, tx_hash, log_index, amount, token_address, block_timestamp, event_id)
    values (${sessionId}, ${m.chainId}, ${m.direction}, ${m.txHash.toLowerCase()}, ${m.logIndex}, ${m.amount.toString()}::numeric, ${m.token ?? null},
            ${m.blockTimestamp?.toISOString() ?? null}::timestamptz, ${eventId})
    on conflict do nothing`);
}

/** Queues the mark of a recorded movement the chain no longer has; an event it was reported by stays its event. */
function markReverted(writes: Pipeline, tx: TransactionSql, sessionId: string, m: RecordedMovement, eventId: string): void {
  writes.send(tx`
    update app.session_funds set reverted_at = now(), event_id = coalesce(event_id, ${eventId})
     where session_id = ${sessionId} and chain_id = ${m.chainId} and direction = ${m.direction} and tx_hash = ${m.txHash} and log_index = ${m.logIndex}`);
}
