/**
 * One step of one session actor (docs/session-lifecycle.md, "The session actor"): in a single transaction, lock the session,
 * gather its facts (indexed transfers into its deposit addresses with their confirmations,
 * its payment by authorization, its sweeps), run the pure `decide` and the pure money plan
 * (money-plan.ts: which movements of money it reports, and how), and commit the transition, its
 * event, its webhook deliveries, its money events and ledger rows, its sweep requests and its
 * next wake-up together. The row lock makes steps of one session strictly sequential
 * whichever runner or API request takes them; a crash before the commit leaves everything as
 * it was, and decide and the plan, given the same facts, decide the same again.
 */
import type { PendingQuery, Row, Sql, TransactionSql } from "postgres";
import { SESSION_STATUSES, type SessionStatus } from "../../../shared/status.ts";
import { col, decodeFirst, decodeRows, rowShape } from "../db/rows.ts";
import type { NetworkConfig } from "../../../shared/chains/config.ts";
import { newSweepId, queueSweepStatement } from "../effects/sweep-queue.ts";
import { pipelinedTransaction } from "../db/pipelined-transaction.ts";
import { lockedSessionFromSql, recordTransition } from "./repository.ts";
import { decide, type Decision, type Facts, type SessionState, type SweepRound } from "./decide.ts";
import { readReportedMovements, reportedMovements, writeMoneyReports } from "./funds.ts";
import { planMoneyReports, returnsOpened } from "./money-plan.ts";
import { startReturnTimerStatement } from "../effects/auto-return-timer.ts";
import { forgetOnMissingTable, indexedPastExpiry, readIndexed } from "./indexed.ts";
import { authorizedOutflows, authorizedPayments, confirmedIncoming, confirmedOutflows, presentMovements, settledTransactions } from "./movements.ts";


export interface StepRequest {
  cancelRequest?: "payer" | "merchant";
  /**
   * Written with the cancel this request makes, in the step's transaction (the dashboard's
   * security-history line: the cancel and its record commit together or not at all).
   */
  withCancel?: (tx: TransactionSql) => PendingQuery<Row[]>;
  simulateError?: boolean;
}

export interface StepResult {
  found: boolean;
  status?: SessionStatus;
  decision?: Decision;
}

/**
 * `skipLocked`: a runner passes true, so a session another runner is stepping is left to it
 * (`found: false`); the API waits instead, so a cancel is decided on the latest state.
 */
export interface StepOptions {
  skipLocked?: boolean;
  now?: Date;
  /** The enabled networks (their minimum sweep amounts); absent: no minimum. */
  networks?: readonly NetworkConfig[];
}

export async function stepSession(sql: Sql, sessionId: string, request: StepRequest = {}, opts: StepOptions = {}): Promise<StepResult> {
  try {
    return await stepOnce(sql, sessionId, request, opts);
  } catch (e) {
    // The indexer's tables went away (a rebuild) since this process last saw them: nothing was
    // changed (the transaction is gone); once more, now asking the catalog first (indexed.ts).
    if (!forgetOnMissingTable(e)) throw e;
    return stepOnce(sql, sessionId, request, opts);
  }
}

async function stepOnce(sql: Sql, sessionId: string, request: StepRequest, opts: StepOptions): Promise<StepResult> {
  // Three round trips (db/pipelined-transaction.ts): BEGIN, the lock with the reads, the writes
  // with COMMIT behind them — block → FUNDED waits on each round trip, and under load on the
  // machine's busy cores too.
  return pipelinedTransaction(sql, async (tx, writes) => {
    // Sent together (postgres.js pipelines a transaction's queries): the server runs them in
    // the order sent, so the reads run after the lock statement, each seeing what committed
    // before it; one round trip instead of five. The order is forced: postgres.js sends a query
    // when it is first awaited, and the async readers below await theirs at once — without
    // execute() the lock would go last and the reads see a state from before it (a double
    // sweep: lifecycle.test.ts "two runners at once"). Locked elsewhere (skipLocked): reads unused.
    const locked = (
      opts.skipLocked
        ? tx`
          select id, merchant_id, environment, status, status_reason, expires_at, funding_chain_id, funding_amount, sequence, now() as db_now
            from app.payment_sessions where id = ${sessionId} for update skip locked`
        : tx`
          select id, merchant_id, environment, status, status_reason, expires_at, funding_chain_id, funding_amount, sequence, now() as db_now
            from app.payment_sessions where id = ${sessionId} for update`
    ).execute();
    const depositRows = tx`
      select chain_id, address, settlement_address, token_address, required_base_units::text, confirmations
        from app.session_deposits where session_id = ${sessionId} order by chain_id`.execute();
    const reported = readReportedMovements(tx, sessionId).execute();
    const [lockedRows, depositList, indexed, sweeps, reportedRows] = await Promise.all([locked, depositRows, readIndexed(tx, sessionId), readSweepRounds(tx, sessionId), reported]);
    const s = decodeFirst(StepSession, lockedRows);
    if (!s) return { found: false };
    const deposits = decodeRows(DepositFactRow, depositList);
    const known = reportedMovements(reportedRows);
    if (indexed === "not_ready") {
      // While the indexer rebuilds, missing rows are not reorgs: look again shortly.
      writes.send(tx`update app.payment_sessions set wake_at = now() + interval '1 second' where id = ${sessionId}`);
      return { found: true, status: s.status };
    }
    const state: SessionState = {
      status: s.status,
      expiresAt: s.expires_at,
      networks: deposits.map((d) => ({
        chainId: d.chain_id,
        requiredBaseUnits: BigInt(d.required_base_units),
        confirmationsRequired: d.confirmations,
        minSweepBaseUnits: opts.networks?.find((n) => n.chainId === d.chain_id)?.minSweepBaseUnits ?? 0n,
      })),
      ...(s.funding_chain_id !== null && s.funding_amount !== null ? { funding: { chainId: s.funding_chain_id, amount: s.funding_amount } } : {}),
    };
    const now = opts.now ?? s.db_now;
    const outflows = confirmedOutflows(indexed.outflows, deposits);
    const authorized = authorizedPayments(indexed.authorized, deposits.map((d) => ({ chainId: d.chain_id, settlementAddress: d.settlement_address })));
    const facts: Facts = {
      transfers: indexed.transfers,
      authorized,
      outflows,
      sweeps,
      ...(request.cancelRequest ? { cancelRequest: request.cancelRequest } : {}),
      ...(request.simulateError ? { simulateError: true } : {}),
      ...(state.status === "PENDING" && now >= state.expiresAt
        ? { indexedPastExpiry: await indexedPastExpiry(tx, deposits.map((d) => d.chain_id), state.expiresAt) }
        : {}),
    };
    const decision = decide(state, facts, now);

    // The writes go out together too (db/pipeline.ts), in the order a step always wrote them:
    // the transition, the money it moved, the sweeps it calls for, the next wake-up; the
    // COMMIT follows them without waiting for their answers (db/pipelined-transaction.ts).
    const session = lockedSessionFromSql(lockedRows[0]);
    let transitionEventId: string | undefined;
    if (decision.transition) {
      const t = decision.transition;
      transitionEventId = recordTransition(writes, tx, session, {
        ...t, // to, and the reason with its detail
        funding: t.funding ? { chainId: t.funding.chainId, amount: t.funding.amount.toString() } : undefined,
      }).eventId;
      if (request.withCancel && t.to === "CANCELED" && t.reason === `canceled_by_${request.cancelRequest}`) writes.send(request.withCancel(tx));
    }
    const status = session.status;
    // Every movement of money is reported once: with the transition that it caused, or as an
    // event of its own (late or extra funds, a later sweep of them, a token it does not accept,
    // a movement the chain took back). Which and how: money-plan.ts; its stray sweeps before the decision's.
    const t = decision.transition;
    const money = planMoneyReports(
      {
        recorded: known,
        status,
        transition: t?.chainId !== undefined && transitionEventId ? { eventId: transitionEventId, to: t.to, chainId: t.chainId } : undefined,
        expiresAt: state.expiresAt,
        fundingChainId: t?.funding?.chainId ?? state.funding?.chainId,
        deposits,
      },
      {
        incoming: confirmedIncoming([...facts.transfers, ...authorized], state.networks),
        // A payment by authorization is settled money too, in its own transaction.
        outgoing: settledTransactions([...authorizedOutflows(authorized, state.networks), ...outflows], sweeps),
        strays: indexed.strays,
        present: presentMovements({ ...indexed, transfers: [...indexed.transfers, ...indexed.strays], authorized }, deposits, sweeps),
      },
    );
    writeMoneyReports(writes, tx, session, money.reports);
    // Money that arrived when it should not have starts its automatic return's timer (when the
    // merchant has them on: the statement reads the setting), committed with the money.
    const opened = returnsOpened(money, { status, statusReason: session.statusReason, expiresAt: state.expiresAt, ...(t ? { transitionReason: t.reason } : {}) });
    for (const o of opened) {
      writes.send(startReturnTimerStatement(tx, { sessionId, merchantId: session.merchantId, environment: session.environment, chainId: o.chainId, reason: o.reason }));
    }
    for (const sweep of money.sweeps) writes.send(queueSweepStatement(tx, { id: newSweepId(), sessionId, ...sweep }));
    for (const effect of decision.effects) {
      const d = deposits.find((x) => x.chain_id === effect.chainId);
      if (!d) continue;
      writes.send(
        queueSweepStatement(tx, {
          id: newSweepId(),
          sessionId,
          chainId: d.chain_id,
          depositAddress: d.address,
          settlementAddress: d.settlement_address,
          tokenAddress: d.token_address,
          amount: effect.amount,
        }),
      );
    }
    writes.send(tx`update app.payment_sessions set wake_at = ${decision.wakeAt?.toISOString() ?? null}::timestamptz where id = ${sessionId}`);
    return { found: true, status, decision };
  });
}

/** The session's sweep rounds of its own token, oldest first; recoveries of stray tokens (sweeps/recover.ts) are not its funds. */
async function readSweepRounds(tx: TransactionSql, sessionId: string): Promise<SweepRound[]> {
  const rows = await tx`
    select w.chain_id, w.state, w.amount::text, w.swept_amount::text, w.attempts, w.last_error, t.tx_hash
      from app.sweeps w
      join app.session_deposits d on d.session_id = w.session_id and d.chain_id = w.chain_id and d.token_address = w.token_address
      left join app.sweep_transactions t on t.id = w.transaction_id and t.state = 'mined'
     where w.session_id = ${sessionId} order by w.created_at, w.id`;
  return decodeRows(SweepRoundRow, rows).map((r) => ({
    chainId: r.chain_id,
    state: r.state,
    amount: r.amount,
    ...(r.swept_amount !== null ? { swept: r.swept_amount } : {}),
    ...(r.tx_hash ? { txHash: r.tx_hash } : {}),
    attempts: r.attempts,
    ...(r.last_error ? { error: r.last_error } : {}),
  }));
}

// The rows a step reads, checked (db/rows.ts).
const StepSession = rowShape("step: locked session", {
  status: col.oneOf(SESSION_STATUSES),
  expires_at: col.time,
  funding_chain_id: col.nullable(col.int),
  funding_amount: col.nullable(col.wholeNumber),
  db_now: col.time,
});
const DepositFactRow = rowShape("step: deposits", {
  chain_id: col.int,
  address: col.text,
  settlement_address: col.text,
  token_address: col.text,
  required_base_units: col.numeric,
  confirmations: col.int,
});
const SweepRoundRow = rowShape("step: sweep rounds", {
  chain_id: col.int,
  state: col.oneOf(["queued", "sending", "confirmed", "failed"] as const),
  amount: col.wholeNumber,
  swept_amount: col.nullable(col.wholeNumber),
  attempts: col.int,
  last_error: col.nullable(col.text),
  tx_hash: col.nullable(col.text),
});
