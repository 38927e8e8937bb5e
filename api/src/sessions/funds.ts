/**
 * The session's money ledger (app.session_funds): every confirmed movement of money into a
 * deposit address or from it to the settlement address, reported to the merchant exactly
 * once. A movement that caused a transition (the payment that FUNDED it, the sweep that made
 * it SUCCEEDED, a partial at expiry, a payment after cancel) is reported by that transition's
 * event; any other — a second payment, funds after a terminal state, a later sweep of them —
 * gets an event of its own (`funds_received`, `funds_settled`) with its webhook. Runs in the
 * actor's transaction, under the session's row lock, so two steps never report one movement.
 */
import type { TransactionSql } from "postgres";
import type { SessionStatus } from "../../../shared/status.ts";
import type { Outflow, Transfer } from "./decide.ts";
import { recordMoneyEvent } from "./repository.ts";

export interface Movements {
  sessionId: string;
  /** The status after this step. */
  status: SessionStatus;
  /** The transition of this step, if any: its event explains the movements on its network. */
  transition?: { eventId: string; to: SessionStatus; chainId: number };
  /** Confirmed incoming transfers (value > 0). */
  incoming: Transfer[];
  /** Confirmed money at the settlement address from the deposit, one entry per transaction. */
  outgoing: Outflow[];
  expiresAt: Date;
  /** The network that paid, once FUNDED. */
  fundingChainId?: number;
}

/** Which transitions explain which movements on their network. */
const EXPLAINS_INCOMING: readonly SessionStatus[] = ["FUNDED", "ERROR"];
const EXPLAINS_OUTGOING: readonly SessionStatus[] = ["SUCCEEDED"];

export async function reportMoneyMovements(tx: TransactionSql, m: Movements): Promise<void> {
  if (m.incoming.length === 0 && m.outgoing.length === 0) return;
  const known = await tx`
    select chain_id, direction, tx_hash, log_index from app.session_funds where session_id = ${m.sessionId}`;
  const seen = new Set(known.map((k) => `${k.chain_id}:${k.direction}:${String(k.tx_hash).toLowerCase()}:${k.log_index}`));
  const fresh = [
    ...m.incoming.map((t) => ({ direction: "in" as const, chainId: t.chainId, txHash: t.txHash, logIndex: t.logIndex, amount: t.value, blockTimestamp: t.blockTimestamp })),
    ...m.outgoing.map((o) => ({ direction: "out" as const, chainId: o.chainId, txHash: o.txHash, logIndex: -1, amount: o.amount, blockTimestamp: undefined })),
  ].filter((x) => !seen.has(`${x.chainId}:${x.direction}:${x.txHash.toLowerCase()}:${x.logIndex}`));
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
      eventId = await recordMoneyEvent(tx, {
        sessionId: m.sessionId,
        reason: f.direction === "in" ? "funds_received" : "funds_settled",
        detail:
          f.direction === "in"
            ? {
                chainId: f.chainId,
                txHash: f.txHash,
                logIndex: f.logIndex,
                amountBaseUnits: f.amount.toString(),
                blockTimestamp: f.blockTimestamp?.toISOString(),
                onTime: f.blockTimestamp !== undefined && f.blockTimestamp <= m.expiresAt,
              }
            : { chainId: f.chainId, txHash: f.txHash, amountBaseUnits: f.amount.toString() },
      });
    }
    await tx`
      insert into app.session_funds (session_id, chain_id, direction, tx_hash, log_index, amount, block_timestamp, event_id)
      values (${m.sessionId}, ${f.chainId}, ${f.direction}, ${f.txHash.toLowerCase()}, ${f.logIndex}, ${f.amount.toString()}::numeric,
              ${f.blockTimestamp?.toISOString() ?? null}::timestamptz, ${eventId ?? null})
      on conflict do nothing`;
  }
}
