/**
 * The session's money ledger (app.session_funds): every confirmed movement of money into a
 * deposit address or from it to the settlement address, reported to the merchant exactly
 * once. A movement that caused a transition (the payment that FUNDED it, the sweep that made
 * it SUCCEEDED, a partial at expiry, a payment after cancel) is reported by that transition's
 * event; any other — a second payment, funds after a terminal state, a later sweep of them —
 * gets an event of its own (`funds_received`, `funds_settled`) with its webhook. A reported
 * movement the chain no longer has (a reorg deeper than the confirmations, a chain that went
 * back) is reported too (`funds_reverted`), and whatever replaces it is a movement of its own
 * (e.g. the new sweep of the same money: `funds_settled`). Runs in the
 * actor's transaction, under the session's row lock, so two steps never report one movement.
 */
import type { PendingQuery, Row, TransactionSql } from "postgres";
import type { SessionStatus } from "../../../shared/status.ts";
import type { Pipeline } from "../db/pipeline.ts";
import { col, decodeRows, rowShape, type RowOf } from "../db/rows.ts";
import type { Outflow, Transfer } from "./decide.ts";
import { recordMoneyEvent, type LockedSession } from "./repository.ts";
import { checksummed } from "./views.ts";

export interface Movements {
  /** The status after this step. */
  status: SessionStatus;
  /** The transition of this step, if any: its event explains the movements on its network. */
  transition?: { eventId: string; to: SessionStatus; chainId: number };
  /** Confirmed incoming transfers (value > 0), payments by authorization among them (`method`). */
  incoming: Transfer[];
  /** Confirmed money at the settlement address from the deposit, one entry per transaction. */
  outgoing: Outflow[];
  /**
   * What the chain (as indexed) and our receipts still show, confirmed or not, as
   * `chainId:direction:txHash` (lowercase): a reported movement missing here was reverted.
   */
  present: Set<string>;
  expiresAt: Date;
  /** The network that paid, once FUNDED. */
  fundingChainId?: number;
}

/** Which transitions explain which movements on their network. */
const EXPLAINS_INCOMING: readonly SessionStatus[] = ["FUNDED", "ERROR"];
const EXPLAINS_OUTGOING: readonly SessionStatus[] = ["SUCCEEDED"];

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
  direction: col.oneOf(["in", "out"] as const),
  tx_hash: col.text,
  log_index: col.int,
  amount: col.numeric,
  reverted: col.bool,
});
export type ReportedMovement = RowOf<typeof ReportedMovement>;

/** The rows of readReportedMovements, checked. */
export const reportedMovements = (rows: Iterable<unknown>): ReportedMovement[] => decodeRows(ReportedMovement, rows);

/** Queues on `writes` the events and ledger rows of the movements not reported yet (`known`: reportedMovements). */
export function reportMoneyMovements(writes: Pipeline, tx: TransactionSql, session: LockedSession, known: readonly ReportedMovement[], m: Movements): void {
  if (known.length === 0 && m.incoming.length === 0 && m.outgoing.length === 0) return;
  // Reported movements the chain took back: said once, and the row marked.
  for (const k of known) {
    if (k.reverted || m.present.has(`${k.chain_id}:${k.direction}:${k.tx_hash.toLowerCase()}`)) continue;
    // A funding payment reorged away is reported by the ERROR reorged transition of this step.
    const t = m.transition;
    const explained = t !== undefined && t.to === "ERROR" && t.chainId === k.chain_id && k.direction === "in";
    const eventId = explained
      ? t.eventId
      : recordMoneyEvent(writes, tx, session, {
          reason: "funds_reverted",
          detail: { chainId: k.chain_id, direction: k.direction === "in" ? "received" : "settled", txHash: k.tx_hash, amountBaseUnits: k.amount },
        });
    writes.send(tx`
      update app.session_funds set reverted_at = now(), event_id = coalesce(event_id, ${eventId ?? null})
       where session_id = ${session.id} and chain_id = ${k.chain_id} and direction = ${k.direction} and tx_hash = ${k.tx_hash} and log_index = ${k.log_index}`);
  }
  const seen = reportedKeys(known);
  const fresh = [
    ...m.incoming.map((t) => ({
      direction: "in" as const,
      chainId: t.chainId,
      txHash: t.txHash,
      logIndex: t.logIndex,
      amount: t.value,
      blockTimestamp: t.blockTimestamp,
      method: t.method ?? "transfer",
      payer: t.from,
      token: t.token,
    })),
    ...m.outgoing.map((o) => ({ direction: "out" as const, chainId: o.chainId, txHash: o.txHash, logIndex: -1, amount: o.amount, blockTimestamp: undefined, method: undefined, payer: undefined, token: undefined })),
  ].filter((x) => !seen.has(movementKey(x.chainId, x.direction, x.txHash, x.logIndex)));
  for (const f of fresh) {
    const t = m.transition;
    const explained =
      t !== undefined &&
      t.chainId === f.chainId &&
      (f.direction === "in" ? EXPLAINS_INCOMING.includes(t.to) : EXPLAINS_OUTGOING.includes(t.to));
    // Funds confirmed after a cancel or expiry are about to be reported by the paid_after_cancel
    // transition that CANCELED always takes next (decide.ts), and money settled while FUNDED by
    // the SUCCEEDED it leads to: not twice.
    if (!explained && f.direction === "in" && m.status === "CANCELED") continue;
    if (!explained && f.direction === "out" && m.status === "FUNDED" && f.chainId === m.fundingChainId) continue;
    let eventId = t?.eventId;
    if (!explained) {
      eventId = recordMoneyEvent(
        writes,
        tx,
        session,
        f.direction === "in"
          ? { reason: "funds_received", detail: receivedDetail(f, m.expiresAt) }
          : { reason: "funds_settled", detail: { chainId: f.chainId, txHash: f.txHash, amountBaseUnits: f.amount.toString() } },
      );
    }
    recordLedgerRow(writes, tx, session.id, f, eventId);
  }
}

/** A movement as the ledger holds it (app.session_funds): `amount` in the session's unit, or a stray token's own base units. */
interface LedgerMovement {
  direction: "in" | "out";
  chainId: number;
  txHash: string;
  /** -1 for money out (one row per transaction). */
  logIndex: number;
  amount: bigint;
  blockTimestamp?: Date;
  method?: "transfer" | "authorization";
  payer?: string;
  token?: string;
}

const movementKey = (chainId: number, direction: string, txHash: string, logIndex: number) => `${chainId}:${direction}:${txHash.toLowerCase()}:${logIndex}`;

/** The ledger's movements already reported, by movementKey. */
const reportedKeys = (known: readonly ReportedMovement[]) => new Set(known.map((k) => movementKey(k.chain_id, k.direction, k.tx_hash, k.log_index)));

/** A `funds_received` event's detail for money in (its statusReason is added by recordMoneyEvent). */
function receivedDetail(f: LedgerMovement & { blockTimestamp: Date }, expiresAt: Date) {
  return {
    chainId: f.chainId,
    txHash: f.txHash,
    logIndex: f.logIndex,
    amountBaseUnits: f.amount.toString(),
    blockTimestamp: f.blockTimestamp.toISOString(),
    onTime: f.blockTimestamp <= expiresAt,
    method: f.method ?? "transfer",
    ...(f.payer ? { payer: checksummed(f.payer) } : {}),
    ...(f.token ? { token: checksummed(f.token) } : {}),
  };
}

/** Queues the ledger row of a movement, with the event that reported it (a replay of the same step writes nothing). */
function recordLedgerRow(writes: Pipeline, tx: TransactionSql, sessionId: string, f: LedgerMovement, eventId: string | undefined): void {
  writes.send(tx`
    insert into app.session_funds (session_id, chain_id, direction, tx_hash, log_index, amount, token_address, block_timestamp, event_id)
    values (${sessionId}, ${f.chainId}, ${f.direction}, ${f.txHash.toLowerCase()}, ${f.logIndex}, ${f.amount.toString()}::numeric, ${f.token ?? null},
            ${f.blockTimestamp?.toISOString() ?? null}::timestamptz, ${eventId ?? null})
    on conflict do nothing`);
}

/**
 * Money in a token the session does not accept (a preset's stablecoin the operator left out, sent
 * to a deposit address by mistake), once confirmed at its network's depth: reported once, in any
 * status (`funds_received` with `accepted: false`, its amount in that token's own base units) with
 * a ledger row of its token. It never counts toward the payment. Returns the movements reported
 * now: the caller queues their sweep to the settlement address (the merchant's, never lost).
 */
export function reportStrayFunds(
  writes: Pipeline,
  tx: TransactionSql,
  session: LockedSession,
  known: readonly ReportedMovement[],
  strays: readonly Transfer[],
  depth: (chainId: number) => number,
  expiresAt: Date,
): Transfer[] {
  const seen = reportedKeys(known);
  const fresh = strays.filter((t) => t.token && t.confirmations >= depth(t.chainId) && !seen.has(movementKey(t.chainId, "in", t.txHash, t.logIndex)));
  for (const t of fresh) {
    const f: LedgerMovement = { direction: "in", chainId: t.chainId, txHash: t.txHash, logIndex: t.logIndex, amount: t.value, blockTimestamp: t.blockTimestamp, method: "transfer", token: t.token };
    if (t.from) f.payer = t.from;
    const eventId = recordMoneyEvent(writes, tx, session, { reason: "funds_received", detail: { ...receivedDetail({ ...f, blockTimestamp: t.blockTimestamp }, expiresAt), accepted: false } });
    recordLedgerRow(writes, tx, session.id, f, eventId);
  }
  return fresh;
}
