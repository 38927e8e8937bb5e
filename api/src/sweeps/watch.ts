/**
 * The watching half of a network's sweeper: every unfinished transaction of the relayer
 * (whoever signed it: a process that died leaves them to the others), after reconciling the
 * records with the chain (reconcile.ts). Look up the receipt of every hash ever signed for its
 * nonce; once one is mined and deep enough, record the outcome of each sweep (interpretReceipt).
 * Not mined: rebroadcast the same signed bytes when the node lost them; after
 * SERVICE_SWEEP_STUCK_SECONDS without progress re-sign with the SAME nonce and fees + 25 % (the
 * new hash is recorded before it is broadcast). A nonce the chain used for none of our hashes
 * releases its sweeps, queued again without counting the attempt. A transaction of kind
 * `authorization` (send-authorization.ts) is followed the same way; only what its receipt
 * means differs (authorization-outcome.ts). Its statements are named functions in statements/watch.ts.
 */
import type { Address, Hex, TransactionReceipt } from "viem";
import { keccak256, TransactionReceiptNotFoundError } from "viem";
import { wakeSessions } from "../effects/wake.ts";
import {
  confirmSweeps,
  markTransactionSent,
  openTransactions,
  recordReplacement,
  recordTransactionMined,
  releaseTransactionSweeps,
  sweepsOfTransaction,
  type OpenTransactionRow,
} from "./statements/watch.ts";
import { bumpFees, interpretReceipt, isConfirmed, planBatch, withGasMargin, type Fees } from "./plan.ts";
import { reconcileWithChain } from "./reconcile.ts";
import { planSubmission } from "../gasless/submission.ts";
import { recordAuthorizationMined } from "./authorization-outcome.ts";
import { authorizationsOf, requeueAuthorizations } from "./statements/authorizations.ts";
import { recordRefundsMined, refundCallOf } from "./send-refunds.ts";
import { requeueRefunds } from "./statements/refunds.ts";
import type { SweepChain } from "./chain.ts";
import { findInChain } from "../../../shared/error-chain.ts";

const FEE_BUMP_PERCENT = 25;
/**
 * How long a spent nonce with none of our receipts is looked at again before its sweeps are
 * released (queued again). Were it ours after all, the released sweeps would find their
 * deposits empty and send nothing (send.ts), so this only spares needless rounds.
 */
const NONCE_SPENT_GRACE_MS = 3_000;

type TxRow = OpenTransactionRow;

/** Advances every unfinished transaction of this relayer. Returns how many are still open. */
export async function watch(c: SweepChain): Promise<number> {
  // The chain first: records it no longer backs are dropped and their sweeps queued again.
  await reconcileWithChain({
    sql: c.sql,
    client: c.client,
    chainId: c.net.chainId,
    relayer: c.relayer,
    relayerAddress: c.account.address,
    log: c.log,
    firstSeen: c.reconcileSeen,
    ...(c.opts.reconcileGraceMs !== undefined ? { graceMs: c.opts.reconcileGraceMs } : {}),
  });
  const open = await openTransactions(c.sql, c.net.chainId, c.relayer);
  let still = 0;
  for (const row of open) {
    if (c.stopping) break;
    if (!(await advance(c, row))) still++;
  }
  return still;
}

/**
 * The receipt of whichever of a nonce's hashes was mined; null when none is. Only "no such
 * receipt" means not mined: any other RPC error is thrown (the pass is retried), so an
 * unreachable node is never read as a transaction that vanished.
 */
async function receiptOf(c: SweepChain, hashes: readonly Hex[]): Promise<TransactionReceipt | null> {
  for (const hash of [...hashes].reverse()) {
    try {
      return await c.client.getTransactionReceipt({ hash });
    } catch (e) {
      if (!findInChain(e, (x) => x instanceof TransactionReceiptNotFoundError)) throw e;
    }
  }
  return null;
}

/** One look at one unfinished transaction. Returns true when it is finished. */
async function advance(c: SweepChain, row: TxRow): Promise<boolean> {
  const hashes = row.tx_hashes;
  const receipt = await receiptOf(c, hashes);
  if (receipt) {
    const head = await c.client.getBlockNumber({ cacheTime: 0 });
    if (!isConfirmed(receipt.blockNumber, head, c.net.confirmations)) return false;
    if (row.kind === "authorization") await recordAuthorizationMined(c, row.id, receipt);
    else if (row.kind === "refund") await recordRefundsMined(c, row.id, receipt);
    else await recordMined(c, row, receipt);
    return true;
  }
  const spent = BigInt(await c.client.getTransactionCount({ address: c.account.address, blockTag: "latest" }));
  if (spent > row.nonce) {
    // The nonce is used. By one of ours whose receipt is not served yet (a node may count a
    // block's nonces a moment before it serves its receipts)? Give it a few passes first.
    if (await receiptOf(c, hashes)) return false;
    const firstSeen = c.nonceSpentSeen.get(row.id) ?? Date.now();
    c.nonceSpentSeen.set(row.id, firstSeen);
    if (Date.now() - firstSeen < NONCE_SPENT_GRACE_MS) return false;
    c.nonceSpentSeen.delete(row.id);
    await releaseNonce(c, row);
    return true;
  }
  c.nonceSpentSeen.delete(row.id);
  const newest = hashes.at(-1);
  const known = newest ? await c.client.getTransaction({ hash: newest }).catch(() => null) : null;
  const mine = newest ? c.signed.get(newest) : undefined;
  // The node lost it (or never got it, or this process restarted): the very same bytes again.
  const raw = mine?.raw ?? (row.raw_tx && row.tx_hash === newest ? row.raw_tx : undefined);
  if (!known && raw && newest) await c.broadcast(row.id, newest, raw);
  else if (known && row.state === "signed" && newest) {
    await markTransactionSent(c.sql, row.id, newest);
  }
  if (row.age_ms >= c.s.stuckMs) await replace(c, row, newest, known, mine);
  return false;
}

/** Re-signs a stuck (or lost) transaction with the same nonce, same sweeps and higher fees. */
async function replace(c: SweepChain, 
  row: TxRow,
  newest: Hex | undefined,
  known: { input: Hex; to: Address | null; gas: bigint; maxFeePerGas?: bigint; maxPriorityFeePerGas?: bigint } | null,
  mine: { raw: Hex; fees: Fees; gas: bigint } | undefined,
): Promise<void> {
  const sweeps = row.kind === "sweep" ? await sweepsOf(c, row.id) : [];
  let data: Hex | undefined = known?.input;
  let to: Address = known?.to ?? c.factory;
  if (!data && row.kind === "refund") {
    // The same refunds, the same call (refundCallOf): only the fees move.
    const call = await refundCallOf(c.sql, c, row.id);
    if (!call) return;
    ({ to, data } = call);
  } else if (!data && row.kind === "authorization") {
    // The same authorizations, the same call (planSubmission is deterministic): only the fees move.
    const plan = planSubmission(await authorizationsOf(c.sql, row.id), await c.authorizationBatch(), Number.MAX_SAFE_INTEGER);
    if (!plan) {
      c.log(`sweeper ${c.net.name}: transaction ${row.id} (nonce ${row.nonce}) has no authorization left to re-sign`);
      return;
    }
    ({ to, data } = plan.call);
  } else if (!data) {
    const plan = planBatch(sweeps.map((s) => ({ ...s, attempts: 0 })), c.factory);
    if (!plan.call) {
      c.log(`sweeper ${c.net.name}: transaction ${row.id} (nonce ${row.nonce}) has no sweeps left to re-sign`);
      return;
    }
    data = plan.call.data;
    to = plan.call.to;
  }
  let gas = known?.gas ?? mine?.gas;
  if (gas === undefined) {
    gas = await c.client
      .estimateGas({ account: c.account.address, to, data })
      .then(withGasMargin)
      .catch(() => 150_000n + 80_000n * BigInt(Math.max(1, sweeps.length)));
  }
  const previous: Fees = {
    maxFeePerGas: known?.maxFeePerGas ?? mine?.fees.maxFeePerGas ?? BigInt(row.max_fee_per_gas ?? "0"),
    maxPriorityFeePerGas: known?.maxPriorityFeePerGas ?? mine?.fees.maxPriorityFeePerGas ?? 0n,
  };
  const fees = bumpFees(previous, await c.marketFees(), FEE_BUMP_PERCENT);
  const raw = await c.sign(row.nonce, { to, data }, gas, fees);
  const hash = keccak256(raw);
  // Recorded before it is broadcast, and only if nobody replaced it meanwhile.
  if (!(await recordReplacement(c.sql, { id: row.id, newest: newest ?? null, hash, raw, maxFeePerGas: fees.maxFeePerGas }))) return;
  c.signed.set(hash, { raw, fees, gas });
  c.log(
    `sweeper ${c.net.name}: nonce ${row.nonce} not mined after ${Math.round(row.age_ms / 1000)} s: replaced ${newest ?? "-"} by ${hash} (max fee ${previous.maxFeePerGas} → ${fees.maxFeePerGas})`,
  );
  await c.opts.hooks?.beforeBroadcast?.({ hash, nonce: row.nonce, replacement: true });
  await c.broadcast(row.id, hash, raw);
}

async function sweepsOf(c: SweepChain, txId: string) {
  return (await sweepsOfTransaction(c.sql, txId)).map((r) => ({
    id: r.id,
    sessionId: r.session_id,
    depositAddress: r.deposit_address,
    settlementAddress: r.settlement_address,
    tokens: r.tokens,
    unit: r.unit,
  }));
}

/** A mined (and confirmed) transaction: the outcome of each of its sweeps, in one database transaction. */
async function recordMined(c: SweepChain, row: TxRow, receipt: TransactionReceipt): Promise<void> {
  const sweeps = await sweepsOf(c, row.id);
  const outcomes = interpretReceipt(receipt, sweeps, c.factory);
  const recorded = await c.sql.begin(async (tx) => {
    if (!(await recordTransactionMined(tx, row.id, receipt))) return false; // recorded already (by another sweeper, or an earlier pass)
    const confirmed = outcomes.flatMap((o) => (o.outcome === "confirmed" ? [{ id: o.id, swept: o.sweptAmount.toString() }] : []));
    if (confirmed.length > 0) {
      await wakeSessions(tx, [...new Set(await confirmSweeps(tx, row.id, confirmed))]);
    }
    const failed = outcomes.flatMap((o) => (o.outcome === "failed" ? [{ id: o.id, error: o.error }] : []));
    await c.recordFailedAttempts(tx, failed, false, row.id);
    return true;
  });
  if (!recorded) return;
  const nConfirmed = outcomes.filter((o) => o.outcome === "confirmed").length;
  c.log(
    `sweeper ${c.net.name}: ${receipt.transactionHash} mined in block ${receipt.blockNumber} (gas ${receipt.gasUsed}): ${nConfirmed} confirmed, ${outcomes.length - nConfirmed} failed`,
  );
}

/** The nonce was used by a transaction that is none of ours: its sweeps were never attempted, queue them again. */
async function releaseNonce(c: SweepChain, row: TxRow): Promise<void> {
  await c.sql.begin(async (tx) => {
    if (!(await releaseTransactionSweeps(tx, row.id))) return;
    await requeueAuthorizations(tx, row.id, "its transaction's nonce was used by another transaction of the relayer");
    await requeueRefunds(tx, row.id);
  });
  c.log(`sweeper ${c.net.name}: nonce ${row.nonce} was used by another transaction; what it carried is queued again`);
}
