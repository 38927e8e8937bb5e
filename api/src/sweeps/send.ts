/**
 * The sending half of a network's sweeper: in one database transaction holding a per-(chain,
 * relayer) advisory lock (so nonces are handed out one at a time; a process that does not get it
 * skips the round) claim due queued sweeps with FOR UPDATE SKIP LOCKED (none whose deposit
 * already has a sweep in flight), fail the sandbox-forced ones at once, stop those past their
 * session's budget (guard.ts), plan one sweep call (planBatch: one set of tokens — a session's
 * accepted stablecoins, or a recovery's one token — each deposit once),
 * leave out deposits that are already empty, estimate gas, check the relayer can pay, pick the
 * nonce max(last live recorded + 1, chain's pending nonce), sign, and record the transaction
 * (`signed`, its hash and bytes) with its sweeps `sending` and attempts + 1. Only after that
 * commit is the transaction broadcast (then `sent`). Nothing is sent while the factory has no
 * code on the network or the relayer-spend guard says wait: due sweeps then wait, recorded.
 * Its statements are named functions in statements/send.ts.
 */
import { zeroAddress, type Address } from "viem";
import { wakeSessions } from "../effects/wake.ts";
import { planBatch, withGasMargin, type BatchPlan, type SweepRow } from "./plan.ts";
import { relayerVerdict, sessionOverBudget } from "./guard.ts";
import { isRevert, firstLine, type SignedTx, type SweepChain } from "./chain.ts";
import {
  anySweepDue,
  claimDueSweeps,
  confirmEmptySweeps,
  deferDueSweeps,
  failForcedSweeps,
  failOverBudgetSweeps,
  markSweepsSending,
  relayerTransactionsLately,
  waitForRelayerFunds,
} from "./statements/send.ts";

export const FORCED_FAILURE_ERROR = "simulated sweep failure (sandbox)";

interface ClaimedRow extends SweepRow {
  forceFailure: boolean;
  /** Attempts of every sweep and of the authorization of this session on this network: the transactions it already cost. */
  sessionAttempts: number;
}

const erc20BalanceAbi = [
  { type: "function", name: "balanceOf", stateMutability: "view", inputs: [{ name: "a", type: "address" }], outputs: [{ name: "", type: "uint256" }] },
] as const;

/** Claims, plans, signs, records and broadcasts one batch. Returns how many sweeps it handled. */
export async function sendDue(c: SweepChain): Promise<number> {
  if (!(await anySweepDue(c.sql, c.net.chainId))) return 0;
  // Nothing is sent while the network cannot take a sweep or the relayer has spent its
  // budget: the due sweeps wait, with the reason recorded on each (and logged once).
  const blocked = (await factoryMissing(c)) ?? (await overSpent(c));
  if (blocked) {
    await deferDue(c, blocked.reason, blocked.waitMs);
    return 0;
  }
  c.setWaiting(undefined);
  const fees = await c.marketFees();
  let toSend: SignedTx | undefined;
  const handled = await c.sql.begin(async (tx) => {
    if (!(await c.lockNonces(tx))) return 0;
    const rows = await claimDueSweeps(tx, c.net.chainId, c.s.batchSize);
    if (rows.length === 0) return 0;
    const claimed: ClaimedRow[] = rows.map((r) => ({
      id: r.id,
      sessionId: r.session_id,
      depositAddress: r.deposit_address,
      settlementAddress: r.settlement_address,
      tokens: r.tokens,
      unit: r.unit,
      attempts: r.attempts,
      forceFailure: r.force_sweep_failure,
      sessionAttempts: r.session_attempts,
    }));

    // Sandbox: "force the next sweep of this session to fail" — nothing is sent.
    const forced = claimed.filter((r) => r.forceFailure);
    if (forced.length > 0) {
      const sessions = [...new Set(forced.map((r) => r.sessionId))];
      await failForcedSweeps(tx, forced.map((r) => r.id), sessions, c.s.maxAttempts, FORCED_FAILURE_ERROR);
      await wakeSessions(tx, sessions);
      c.log(`sweeper ${c.net.name}: forced failure of ${forced.length} sweep(s) (sandbox)`);
    }
    // The per-session budget: a session that already cost this many transactions gets no more.
    const overBudget = claimed.flatMap((r) => {
      const reason = r.forceFailure ? undefined : sessionOverBudget(r.sessionAttempts, c.s);
      return reason ? [{ id: r.id, sessionId: r.sessionId, error: reason }] : [];
    });
    if (overBudget.length > 0) {
      await failOverBudgetSweeps(tx, overBudget.map((r) => r.id), overBudget[0]!.error);
      await wakeSessions(tx, [...new Set(overBudget.map((r) => r.sessionId))]);
      c.log(`sweeper ${c.net.name}: ${overBudget.length} sweep(s) stopped by the relayer-spend guard (per-session limit ${c.s.maxTxPerSession})`);
    }
    const stopped = new Set(overBudget.map((r) => r.id));
    const rest = claimed.filter((r) => !r.forceFailure && !stopped.has(r.id));
    const settledEarly = forced.length + overBudget.length;
    if (rest.length === 0) return settledEarly;

    let plan = planBatch(rest, c.factory);
    if (plan.mismatched.length > 0) {
      await c.recordFailedAttempts(tx, plan.mismatched.map((m) => ({ id: m.id, error: m.error })), true);
    }
    if (!plan.call) return settledEarly + plan.mismatched.length;

    // Never pay for a sweep of an empty deposit: someone else may have swept it (the factory's
    // sweep is open to anyone). Its rounds are done, having moved nothing; the session settles
    // on the outflow the indexer sees, whoever sent it.
    const empty = await emptyDeposits(c, plan);
    if (empty.length > 0) {
      const ids = plan.deposits.filter((d) => empty.includes(d.depositAddress.toLowerCase())).flatMap((d) => d.sweepIds);
      await wakeSessions(tx, [...new Set(await confirmEmptySweeps(tx, ids))]);
      c.log(`sweeper ${c.net.name}: ${ids.length} sweep(s) found their deposit already empty; nothing sent for them`);
      plan = planBatch(rest.filter((r) => !ids.includes(r.id) && !plan.mismatched.some((m) => m.id === r.id)), c.factory);
      if (!plan.call) return settledEarly + plan.mismatched.length + ids.length;
    }
    const sweepIds = plan.deposits.flatMap((d) => d.sweepIds);

    let gas: bigint;
    try {
      gas = withGasMargin(await c.client.estimateGas({ account: c.account.address, to: plan.call.to, data: plan.call.data }));
    } catch (e) {
      if (!isRevert(e)) throw e; // an RPC problem: roll back, the sweeps stay due
      await c.recordFailedAttempts(tx, sweepIds.map((id) => ({ id, error: `gas estimation reverted: ${firstLine(e)}` })), true);
      return settledEarly + plan.mismatched.length + sweepIds.length;
    }
    // A relayer that cannot pay for the transaction makes the sweeps wait instead of fail.
    const reason = await relayerShortfall(c, gas, fees.maxFeePerGas, "a sweep");
    if (reason) {
      await waitForRelayerFunds(tx, sweepIds, reason);
      c.setWaiting(reason);
      return 0;
    }
    const signed = await c.recordSigned(tx, "sweep", plan.call, gas, fees);
    await markSweepsSending(tx, sweepIds, signed.txId);
    toSend = signed;
    return settledEarly + plan.mismatched.length + sweepIds.length;
  });
  if (toSend) await c.dispatch(toSend, `${handled} sweep(s)`);
  return handled;
}

/** Why nothing can be swept on this network now: the deposit factory has no code there. Checked until it has. */
async function factoryMissing(c: SweepChain): Promise<{ reason: string; waitMs: number } | undefined> {
  if (c.factoryPresent) return undefined;
  const code = await c.client.getCode({ address: c.factory });
  if (code && code !== "0x") {
    c.factoryPresent = true;
    return undefined;
  }
  return {
    reason: `waiting: the deposit factory ${c.factory} is not deployed on ${c.net.name} (bun run admin factory:deploy --chain ${c.net.chainId})`,
    waitMs: 30_000,
  };
}

/**
 * Why the relayer cannot pay for a transaction of `gas` at `maxFeePerGas` (`what` it would send),
 * read from its balance now; undefined when it can. The sweeps', refunds' and wallet refunds' check.
 */
export async function relayerShortfall(c: SweepChain, gas: bigint, maxFeePerGas: bigint, what: string): Promise<string | undefined> {
  const balance = await c.client.getBalance({ address: c.account.address });
  const cost = gas * maxFeePerGas;
  return balance < cost ? `waiting: the relayer ${c.account.address} holds ${balance} wei on ${c.net.name}, ${what} may cost ${cost}; fund it` : undefined;
}

/** The relayer-spend guard's verdict on this network (guard.ts). */
export async function overSpent(c: SweepChain): Promise<{ reason: string; waitMs: number } | undefined> {
  const counts = await relayerTransactionsLately(c.sql, c.net.chainId, c.relayer);
  const verdict = relayerVerdict({ lastMinute: counts.minute, lastHour: counts.hour }, c.s);
  return verdict.ok ? undefined : { reason: verdict.reason, waitMs: verdict.waitMs };
}

/** Due sweeps wait `waitMs` with `reason` recorded on them; nothing counts as an attempt. */
async function deferDue(c: SweepChain, reason: string, waitMs: number): Promise<void> {
  await deferDueSweeps(c.sql, c.net.chainId, reason, waitMs);
  c.setWaiting(reason);
}

/** The planned deposits that hold none of the batch's tokens (native coin, for a native-only recovery). */
async function emptyDeposits(c: SweepChain, plan: BatchPlan): Promise<string[]> {
  const held = await Promise.all(
    plan.deposits.map(async (d) => {
      if (plan.tokens.length === 0) return c.client.getBalance({ address: d.depositAddress });
      const balances = await Promise.all(
        plan.tokens.map((token) => c.client.readContract({ address: token, abi: erc20BalanceAbi, functionName: "balanceOf", args: [d.depositAddress] })),
      );
      return balances.reduce((sum, b) => sum + b, 0n);
    }),
  );
  return plan.deposits.filter((_, i) => held[i] === 0n).map((d) => d.depositAddress.toLowerCase());
}
