/**
 * The relayer's second job, beside sweeping: submit the payers' recorded EIP-3009
 * authorizations (app.payment_authorizations, `recorded`) on the sweeper's own machinery
 * (chain.ts): the same per-(chain, relayer) nonce lock and sequence, the transaction recorded
 * before it is broadcast, then followed to its outcome by watch.ts like any sweep transaction
 * (receipts, rebroadcast of the same bytes, same-nonce re-sign when stuck, reconcile.ts when the
 * chain loses it). Several due authorizations of one token go in one transaction through
 * AuthorizationBatch once it is deployed on the network (gasless/submission.ts planSubmission);
 * otherwise one per transaction.
 *
 * Nothing is sent while the network has it switched off (SERVICE_GASLESS_<KEY>), the
 * relayer-spend guard says wait (guard.ts: the same per-minute and per-hour counts as sweeps),
 * the fee is above the network's ceiling (SERVICE_GASLESS_MAX_FEE_GWEI_<KEY>) or the relayer
 * cannot pay for it: the records wait, the reason on each. Under each session row's lock (the
 * lock the actor and the route take; a session locked by them now is left for the next pass), a
 * record whose session left PENDING, whose window is closing, whose session spent its relayer
 * budget, that the chain says is used already (a stranger submitted the payer's signature first)
 * or whose own simulation reverts or takes more than one submission's gas budget fails for good,
 * and nothing is sent for it.
 *
 * It never changes a session's status: the payment is the indexer's to see, like any other.
 * Its statements are named functions in statements/authorizations.ts.
 */
import { BaseError, type Address } from "viem";
import { gaslessMaxFeeWei } from "../../../shared/chains/config.ts";
import {
  authorizationCall,
  capacity,
  gasRefusal,
  planSubmission,
  refusalOfRevert,
  sendRefusal,
  USED_ELSEWHERE,
  waitingDetail,
  type RecordedAuthorization,
  type Refusal,
} from "../gasless/submission.ts";
import { firstLine, isRevert, type SignedTx, type SweepChain } from "./chain.ts";
import { sessionOverBudget } from "./guard.ts";
import { withGasMargin } from "./plan.ts";
import { overSpent } from "./send.ts";
import { usedOnChain } from "./authorization-outcome.ts";
import {
  anyAuthorizationDue,
  authorizationTransactionInFlight,
  claimDueAuthorizations,
  deferDueAuthorizations,
  failAuthorization,
  markAuthorizationsSending,
  recordedAuthorization,
  waitForRelayerCapacity,
} from "./statements/authorizations.ts";
import type { TransactionSql } from "postgres";

/** Waits before a record is looked at again, by why it waits. */
const WAIT_MS = { gasless_off: 60_000, fee_above_ceiling: 15_000, relayer_unfunded: 30_000 } as const;

/** Claims, checks, signs, records and broadcasts one transaction of due authorizations. Returns how many records it settled (sent or failed). */
export async function sendAuthorization(c: SweepChain): Promise<number> {
  if (!(await anyAuthorizationDue(c.sql, c.net.chainId))) return 0;
  // While one authorization transaction of ours is unmined, new ones gather for the next: it
  // could not land before that one anyway (one nonce sequence), and they then share a
  // transaction through AuthorizationBatch instead of paying 21,000 gas each. The cost: one
  // that comes while another is in flight waits for that one's block.
  if (await authorizationTransactionInFlight(c.sql, c.net.chainId, c.relayer)) return 0;
  if (!c.net.gasless) {
    await deferDue(c, "gasless_off", waitingDetail("gasless_off", ""), WAIT_MS.gasless_off);
    return 0;
  }
  const guard = await overSpent(c);
  if (guard) {
    await deferDue(c, "spend_guard", waitingDetail("spend_guard", `(${guard.reason})`), guard.waitMs);
    return 0;
  }
  const fees = await c.marketFees();
  const ceiling = gaslessMaxFeeWei(c.net);
  if (fees.maxFeePerGas > ceiling) {
    const can = capacity(fees.maxFeePerGas, ceiling, 0n, 0n);
    await deferDue(c, "fee_above_ceiling", can.ok ? "" : can.detail, WAIT_MS.fee_above_ceiling);
    return 0;
  }
  const batch = await c.authorizationBatch();

  let toSend: { signed: SignedTx; what: string } | undefined;
  const settled = await c.sql.begin(async (tx) => {
    if (!(await c.lockNonces(tx))) return 0;
    // The sessions' rows first, as the actor and the route lock them: a cancel, an expiry or a
    // payment seen meanwhile and this send never both win. One they hold now waits a pass.
    const rows = await claimDueAuthorizations(tx, c.net.chainId, batch ? c.s.batchSize : 1);
    if (rows.length === 0) return 0;

    let failed = 0;
    const open: RecordedAuthorization[] = [];
    for (const row of rows) {
      // Attempts on a record still `recorded`: sent before in a batch that did not carry it out.
      const auth = { ...recordedAuthorization(row), retried: row.attempts > 0 };
      const refusal = sendRefusal({ status: row.session_status }, BigInt(auth.validBefore), row.now_seconds, sessionOverBudget(row.session_attempts, c.s));
      if (refusal) failed += await fail(c, tx, auth.sessionId, refusal);
      else open.push(auth);
    }
    // Each one's own simulation: used already (a stranger submitted the payer's signature
    // first, or the payer canceled it) or refused by the token → nothing is sent for it. The
    // money, if it moved, is on-chain for the indexer to see. An RPC problem throws: roll back,
    // the records stay due.
    const checked = await Promise.all(open.map((a) => check(c, a)));
    const ready: { auth: RecordedAuthorization; gas: bigint }[] = [];
    for (const [i, verdict] of checked.entries()) {
      const auth = open[i]!;
      if ("refusal" in verdict) failed += await fail(c, tx, auth.sessionId, verdict.refusal);
      else ready.push({ auth, gas: verdict.gas });
    }

    let plan = planSubmission(ready.map((r) => r.auth), batch, c.s.batchSize);
    if (!plan) return failed;
    const own = new Map(ready.map((r) => [r.auth.sessionId, r.gas]));
    // Each carried out in the batch costs at most its own estimate (which includes a whole
    // transaction's 21,000): their sum is the limit. The batch's own estimate alone could be too
    // low: the contract catches a transfer that runs out of gas, so the estimator's search
    // "succeeds" with less gas than the transfers need.
    let gas = plan.authorizations.reduce((sum, a) => sum + own.get(a.sessionId)!, 0n);
    if (plan.batched) {
      try {
        const estimate = await c.client.estimateGas({ account: c.account.address as Address, to: plan.call.to, data: plan.call.data });
        if (estimate > gas) gas = estimate;
      } catch (e) {
        if (!isRevert(e)) throw e;
        // Never expected (the contract catches each transfer's failure): send the oldest alone.
        c.log(`sweeper ${c.net.name}: the AuthorizationBatch call reverted in its estimate (${firstLine(e)}); sending one authorization alone`);
        plan = planSubmission(plan.authorizations, undefined, 1)!;
        gas = own.get(plan.authorizations[0]!.sessionId)!;
      }
    }
    gas = withGasMargin(gas);
    const ids = plan.authorizations.map((a) => a.sessionId);
    const balance = await c.client.getBalance({ address: c.account.address });
    const can = capacity(fees.maxFeePerGas, ceiling, balance, gas);
    if (!can.ok) {
      await waitForRelayerCapacity(tx, ids, can.reason, can.detail, WAIT_MS.relayer_unfunded);
      c.setAuthorizationsWaiting(can.reason, can.detail);
      return failed;
    }
    const signed = await c.recordSigned(tx, "authorization", plan.call, gas, fees);
    await markAuthorizationsSending(tx, ids, signed.txId);
    toSend = { signed, what: plan.batched ? `${ids.length} authorizations through AuthorizationBatch` : "1 authorization" };
    c.setAuthorizationsWaiting(undefined);
    return failed + ids.length;
  });
  if (toSend) await c.dispatch(toSend.signed, toSend.what);
  return settled;
}

/** One authorization's own call, simulated: its gas, or why it must not be sent (refused, or dearer than one payment's budget). */
async function check(c: SweepChain, auth: RecordedAuthorization): Promise<{ gas: bigint } | { refusal: Refusal }> {
  if (await usedOnChain(c, auth)) return { refusal: USED_ELSEWHERE };
  const call = authorizationCall(auth);
  try {
    const gas = await c.client.estimateGas({ account: c.account.address as Address, to: call.to, data: call.data });
    const tooDear = gasRefusal(gas);
    return tooDear ? { refusal: tooDear } : { gas };
  } catch (e) {
    if (!isRevert(e)) throw e;
    return { refusal: refusalOfRevert(revertText(e)) };
  }
}

/** A final refusal: the record fails with its reason, and nothing is sent for it. */
async function fail(c: SweepChain, tx: TransactionSql, sessionId: string, refusal: Refusal): Promise<number> {
  await failAuthorization(tx, sessionId, refusal.reason, refusal.detail);
  c.log(`sweeper ${c.net.name}: authorization of ${sessionId} not sent (${refusal.reason}): ${refusal.detail}`);
  return 1;
}

/** Every due record of this network waits `waitMs`, its reason recorded; nothing counts as an attempt. */
async function deferDue(c: SweepChain, reason: "gasless_off" | "spend_guard" | "fee_above_ceiling", detail: string, waitMs: number): Promise<void> {
  await deferDueAuthorizations(c.sql, c.net.chainId, reason, detail, waitMs);
  c.setAuthorizationsWaiting(reason, detail);
}

/** The revert's words (viem puts the token's reason in the details), for refusalOfRevert. */
function revertText(e: unknown): string {
  if (e instanceof BaseError) return [e.details, e.shortMessage].filter(Boolean).join(": ");
  return firstLine(e);
}
