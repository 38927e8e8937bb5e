/**
 * The relayer's second job, beside sweeping: submit the payers' recorded EIP-3009
 * authorizations (app.payment_authorizations, `recorded`), one transferWithAuthorization per
 * transaction, on the sweeper's own machinery (chain.ts): the same per-(chain, relayer) nonce
 * lock and sequence, the transaction recorded before it is broadcast, then followed to its
 * outcome by watch.ts like any sweep transaction (receipts, rebroadcast of the same bytes,
 * same-nonce re-sign when stuck, reconcile.ts when the chain loses it).
 *
 * Nothing is sent while the network has it switched off (SERVICE_GASLESS_<KEY>), the
 * relayer-spend guard says wait (guard.ts: the same per-minute and per-hour counts as sweeps),
 * the fee is above the network's ceiling (SERVICE_GASLESS_MAX_FEE_GWEI_<KEY>) or the relayer
 * cannot pay for it: the record waits, the reason on it. Under the session row's lock (the
 * lock the actor and the route take), a record whose session left PENDING, whose window is
 * closing, whose session spent its relayer budget, or that the chain says is used already (a
 * stranger submitted the payer's signature first) fails for good, and nothing is sent for it.
 *
 * It never changes a session's status: the payment is the indexer's to see, like any other.
 */
import { BaseError, getAddress, type Address } from "viem";
import { gaslessMaxFeeWei } from "../../../shared/chains/config.ts";
import { eip3009Abi } from "../../../shared/contracts/eip3009.ts";
import { col, decodeFirst, rowShape } from "../db/rows.ts";
import {
  authorizationCall,
  capacity,
  refusalOfRevert,
  sendRefusal,
  USED_ELSEWHERE,
  waitingDetail,
  type Refusal,
} from "../gasless/submission.ts";
import { SESSION_STATUSES } from "../../../shared/status.ts";
import { firstLine, isRevert, type SignedTx, type SweepChain } from "./chain.ts";
import { sessionOverBudget } from "./guard.ts";
import { withGasMargin } from "./plan.ts";
import { overSpent } from "./send.ts";
import { RECORDED_COLUMNS, recordedAuthorization } from "./authorization-outcome.ts";
import type { TransactionSql } from "postgres";

/** Waits before a record is looked at again, by why it waits. */
const WAIT_MS = { gasless_off: 60_000, fee_above_ceiling: 15_000, relayer_unfunded: 30_000 } as const;

const DueRow = rowShape("authorizations: next due", { session_id: col.text });

const ClaimedRow = rowShape("authorizations: claimed under the session lock", {
  ...RECORDED_COLUMNS,
  session_status: col.oneOf(SESSION_STATUSES),
  now_seconds: col.wholeNumber,
  session_attempts: col.int,
});

/** Claims, checks, signs, records and broadcasts one due authorization. Returns how many it settled (0 or 1). */
export async function sendAuthorization(c: SweepChain): Promise<number> {
  const due = decodeFirst(
    DueRow,
    await c.sql`
      select session_id from app.payment_authorizations
       where chain_id = ${c.net.chainId} and status = 'recorded' and next_attempt_at <= now()
       order by next_attempt_at, created_at limit 1`,
  );
  if (!due) return 0;
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

  let toSend: SignedTx | undefined;
  const settled = await c.sql.begin(async (tx) => {
    if (!(await c.lockNonces(tx))) return 0;
    // The session's row first, as the actor and the route lock it: a cancel, an expiry or a
    // payment seen meanwhile and this send never both win.
    const row = decodeFirst(
      ClaimedRow,
      await tx`
        with s as (select id, status from app.payment_sessions where id = ${due.session_id} for update)
        select a.session_id, a.token_address, a.from_address, a.to_address, a.value::text as value,
               a.valid_after::text as valid_after, a.valid_before::text as valid_before, a.nonce, a.signature,
               s.status as session_status, extract(epoch from now())::bigint as now_seconds,
               ((select coalesce(sum(o.attempts), 0) from app.sweeps o where o.session_id = a.session_id and o.chain_id = a.chain_id)
                + a.attempts)::int as session_attempts
          from app.payment_authorizations a join s on s.id = a.session_id
         where a.session_id = ${due.session_id} and a.status = 'recorded' and a.next_attempt_at <= now()
         for update of a skip locked`,
    );
    if (!row) return 0;
    const auth = recordedAuthorization(row);
    const refusal = sendRefusal({ status: row.session_status }, BigInt(auth.validBefore), row.now_seconds, sessionOverBudget(row.session_attempts, c.s));
    if (refusal) return fail(c, tx, auth.sessionId, refusal);

    // Used already (a stranger submitted the payer's signature first, or the payer canceled
    // it): nothing to send. The money, if it moved, is on-chain for the indexer to see.
    const used = await c.client.readContract({
      address: getAddress(auth.tokenAddress),
      abi: eip3009Abi,
      functionName: "authorizationState",
      args: [getAddress(auth.fromAddress), auth.nonce],
    });
    if (used) return fail(c, tx, auth.sessionId, USED_ELSEWHERE);

    const call = authorizationCall(auth);
    let gas: bigint;
    try {
      gas = withGasMargin(await c.client.estimateGas({ account: c.account.address as Address, to: call.to, data: call.data }));
    } catch (e) {
      if (!isRevert(e)) throw e; // an RPC problem: roll back, the record stays due
      return fail(c, tx, auth.sessionId, refusalOfRevert(revertText(e)));
    }
    const balance = await c.client.getBalance({ address: c.account.address });
    const can = capacity(fees.maxFeePerGas, ceiling, balance, gas);
    if (!can.ok) {
      await tx`
        update app.payment_authorizations
           set reason = ${can.reason}, detail = ${can.detail}, next_attempt_at = now() + ${WAIT_MS.relayer_unfunded} * interval '1 millisecond', updated_at = now()
         where session_id = ${auth.sessionId}`;
      c.setAuthorizationsWaiting(can.reason, can.detail);
      return 0;
    }
    const signed = await c.recordSigned(tx, "authorization", call, gas, fees);
    await tx`
      update app.payment_authorizations
         set status = 'sending', attempts = attempts + 1, transaction_id = ${signed.txId}, reason = null, detail = null, updated_at = now()
       where session_id = ${auth.sessionId}`;
    toSend = signed;
    c.setAuthorizationsWaiting(undefined);
    return 1;
  });
  if (toSend) await c.dispatch(toSend, "1 authorization");
  return settled;
}

/** A final refusal: the record fails with its reason, and nothing is sent for it. */
async function fail(c: SweepChain, tx: TransactionSql, sessionId: string, refusal: Refusal): Promise<number> {
  await tx`
    update app.payment_authorizations set status = 'failed', reason = ${refusal.reason}, detail = ${refusal.detail}, updated_at = now()
     where session_id = ${sessionId}`;
  c.log(`sweeper ${c.net.name}: authorization of ${sessionId} not sent (${refusal.reason}): ${refusal.detail}`);
  return 1;
}

/** Every due record of this network waits `waitMs`, its reason recorded; nothing counts as an attempt. */
async function deferDue(c: SweepChain, reason: "gasless_off" | "spend_guard" | "fee_above_ceiling", detail: string, waitMs: number): Promise<void> {
  await c.sql`
    update app.payment_authorizations
       set reason = ${reason}, detail = ${detail}, next_attempt_at = now() + ${waitMs} * interval '1 millisecond', updated_at = now()
     where chain_id = ${c.net.chainId} and status = 'recorded' and next_attempt_at <= now()`;
  c.setAuthorizationsWaiting(reason, detail);
}

/** The revert's words (viem puts the token's reason in the details), for refusalOfRevert. */
function revertText(e: unknown): string {
  if (e instanceof BaseError) return [e.details, e.shortMessage].filter(Boolean).join(": ");
  return firstLine(e);
}
