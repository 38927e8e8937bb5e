/**
 * Automatic returns when they fall due (docs/refunds.md, "Automatic returns"): the sweeper's loop
 * of each network calls runDueReturns on every pass. In one transaction: claim the network's due
 * timers (locked, SKIP LOCKED: two workers never take the same one), decide for each what is
 * returnable now (refunds/logic.ts autoReturnAmount, pure), and create its refund through the one
 * refund path (store.ts createRefund: the database-held cap, the payer as destination, the
 * sender's ordinary round) with the timer marked `refunded` in the same commit — or mark why not.
 * So a return happens once across restarts and workers: its timer and its refund commit together,
 * and the timer is unique per session, network and reason.
 */
import type { Sql, TransactionSql } from "postgres";
import type { Environment } from "../../../shared/environment.ts";
import { ApiError } from "../errors.ts";
import { indexerTablesPresent } from "../sessions/indexed.ts";
import { autoReturnAmount } from "./logic.ts";
import { claimDueReturns, paymentsOn, settleReturn, type DueReturnRow } from "./auto-returns-store.ts";
import { createRefund } from "./store.ts";

/** Timers decided per transaction (a pass takes more in the next one). */
const PER_ROUND = 20;

export interface ReturnOptions {
  /** SERVICE_REFUND_MAX_PER_REFUND, in minor units: a return above it is skipped (`amount_too_large`). */
  maxPerRefundMinor: bigint;
}

/** Decides the network's due automatic returns. Returns how many it decided. */
export async function runDueReturns(sql: Sql, chainId: number, opts: ReturnOptions): Promise<number> {
  const anyDue = await sql`select 1 from app.auto_returns where chain_id = ${chainId} and state = 'scheduled' and due_at <= now() limit 1`;
  if (anyDue.length === 0) return 0;
  const indexerPresent = await indexerTablesPresent(sql);
  return sql.begin(async (tx) => {
    const due = await claimDueReturns(tx, chainId, PER_ROUND);
    for (const a of due) await decide(tx, a, opts, indexerPresent);
    return due.length;
  });
}

async function decide(tx: TransactionSql, a: DueReturnRow, opts: ReturnOptions, indexerPresent: boolean): Promise<void> {
  // Turned off since the money came: it stays with the merchant.
  if (!a.enabled) return settleReturn(tx, a.id, { state: "skipped", outcome: "disabled" });
  const accepted = new Set([a.main_token, ...a.tokens.map((t) => t.address.toLowerCase())]);
  const payments = (await paymentsOn(tx, a.session_id, a.chain_id)).filter((p) => accepted.has(p.token_address ?? a.main_token));
  const amount = autoReturnAmount(a.reason, {
    required: a.required,
    expiresAt: a.expires_at,
    fundingChainId: a.funding_chain_id,
    underpaid: a.status_reason === "underpaid",
    chainId: a.chain_id,
    payments: payments.map((p) => ({ amount: p.amount, blockTimestamp: p.block_timestamp, reverted: p.reverted })),
  });
  if (amount === 0n) return settleReturn(tx, a.id, { state: "skipped", outcome: "nothing_to_return" });
  try {
    // A savepoint: a refusal of this one leaves the others of the round (and its own outcome) to commit.
    const refund = await tx.savepoint((sp) =>
      createRefund(sp, { merchantId: a.merchant_id, environment: a.environment as Environment }, {
        sessionId: a.session_id,
        ask: { amountUnits: amount, chainId: a.chain_id, upToRest: true },
        reason: a.reason,
        metadata: { automaticReturn: a.id },
        maxPerRefundMinor: opts.maxPerRefundMinor,
        indexerPresent,
        automatic: true,
      }),
    );
    await settleReturn(tx, a.id, { state: "refunded", refundId: refund.id });
  } catch (e) {
    // An amount that is no whole number of the token's base units (logic.ts unitToTokenUnits):
    // the same facts would refuse it on every pass, so it is decided, not retried.
    if (e instanceof RangeError) return settleReturn(tx, a.id, { state: "skipped", outcome: "not_whole_base_units" });
    if (!(e instanceof ApiError)) throw e; // the database: roll back, the timer stays due
    // Refused by the refund rules: nothing left to refund (`refund_exceeds_refundable`), above the
    // per-refund limit, a split the tokens cannot take. The merchant sees why.
    const outcome = e.code === "refund_exceeds_refundable" || e.code === "session_not_refundable" ? "nothing_to_return" : e.code;
    await settleReturn(tx, a.id, { state: "skipped", outcome });
  }
}
