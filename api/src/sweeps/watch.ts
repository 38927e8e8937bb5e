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
 * means differs (authorization-outcome.ts).
 */
import type { Address, Hex, TransactionReceipt } from "viem";
import { keccak256, TransactionReceiptNotFoundError } from "viem";
import { Type } from "@sinclair/typebox";
import { wakeSessions } from "../effects/wake.ts";
import { col, decodeRows, rowShape, type RowOf } from "../db/rows.ts";
import { SWEEP_TOKEN_COLUMNS, sweepTokensSql } from "./tokens.ts";
import { SWEEP_TRANSACTION_STATES } from "./states.ts";
import { bumpFees, interpretReceipt, isConfirmed, planBatch, withGasMargin, type Fees } from "./plan.ts";
import { reconcileWithChain } from "./reconcile.ts";
import { planSubmission } from "../gasless/submission.ts";
import { authorizationsOf, recordAuthorizationMined, requeueAuthorizations } from "./authorization-outcome.ts";
import { recordRefundsMined, refundCallOf, requeueRefunds } from "./send-refunds.ts";
import type { SweepChain } from "./chain.ts";
import { findInChain } from "../../../shared/error-chain.ts";

const FEE_BUMP_PERCENT = 25;
/**
 * How long a spent nonce with none of our receipts is looked at again before its sweeps are
 * released (queued again). Were it ours after all, the released sweeps would find their
 * deposits empty and send nothing (send.ts), so this only spares needless rounds.
 */
const NONCE_SPENT_GRACE_MS = 3_000;

/** An unfinished transaction of the relayer. */
const OpenTransaction = rowShape("open sweep transactions", {
  id: col.text,
  kind: col.oneOf(["sweep", "authorization", "refund"] as const),
  nonce: col.bigint,
  state: col.oneOf(SWEEP_TRANSACTION_STATES),
  /** Every hash signed for its nonce, oldest first. */
  tx_hashes: col.json(Type.Array(col.hex)),
  tx_hash: col.nullable(col.hex),
  /** The signed bytes of tx_hash, kept so that any process can broadcast them again. */
  raw_tx: col.nullable(col.hex),
  max_fee_per_gas: col.nullable(col.numeric),
  age_ms: col.float,
});
type TxRow = RowOf<typeof OpenTransaction>;

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
  const open = decodeRows(
    OpenTransaction,
    await c.sql`
      select id, kind, nonce, state, tx_hashes, tx_hash, raw_tx, max_fee_per_gas::text as max_fee_per_gas,
             (extract(epoch from (now() - coalesce(sent_at, created_at))) * 1000)::float8 as age_ms
        from app.sweep_transactions
       where chain_id = ${c.net.chainId} and relayer = ${c.relayer} and state in ('signed', 'sent')
       order by nonce`,
  );
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
    await c.sql`update app.sweep_transactions set state = 'sent', last_error = null where id = ${row.id} and state = 'signed' and tx_hash = ${newest}`;
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
  const updated = await c.sql`
    update app.sweep_transactions
       set tx_hash = ${hash}, tx_hashes = tx_hashes || ${JSON.stringify([hash])}::jsonb, state = 'signed', raw_tx = ${raw},
           max_fee_per_gas = ${fees.maxFeePerGas.toString()}::numeric, sent_at = now()
     where id = ${row.id} and state in ('signed', 'sent') and tx_hash is not distinct from ${newest ?? null}::text
    returning id`;
  if (updated.length === 0) return;
  c.signed.set(hash, { raw, fees, gas });
  c.log(
    `sweeper ${c.net.name}: nonce ${row.nonce} not mined after ${Math.round(row.age_ms / 1000)} s: replaced ${newest ?? "-"} by ${hash} (max fee ${previous.maxFeePerGas} → ${fees.maxFeePerGas})`,
  );
  await c.opts.hooks?.beforeBroadcast?.({ hash, nonce: row.nonce, replacement: true });
  await c.broadcast(row.id, hash, raw);
}

const TransactionSweep = rowShape("sweeps of a transaction", {
  id: col.text,
  session_id: col.text,
  deposit_address: col.text,
  settlement_address: col.text,
  ...SWEEP_TOKEN_COLUMNS,
});

async function sweepsOf(c: SweepChain, txId: string) {
  const rows = await c.sql`
    select w.id, w.session_id, w.deposit_address, w.settlement_address, ${c.sql.unsafe(sweepTokensSql("w", "d"))}
      from app.sweeps w left join app.session_deposits d on d.session_id = w.session_id and d.chain_id = w.chain_id
     where w.transaction_id = ${txId} and w.state = 'sending'
     order by w.created_at, w.id`;
  return decodeRows(TransactionSweep, rows).map((r) => ({
    id: r.id,
    sessionId: r.session_id,
    depositAddress: r.deposit_address,
    settlementAddress: r.settlement_address,
    tokens: r.tokens,
    unit: r.unit,
  }));
}

const ConfirmedSweep = rowShape("confirm a transaction's sweeps", { session_id: col.text });

/** A mined (and confirmed) transaction: the outcome of each of its sweeps, in one database transaction. */
async function recordMined(c: SweepChain, row: TxRow, receipt: TransactionReceipt): Promise<void> {
  const sweeps = await sweepsOf(c, row.id);
  const outcomes = interpretReceipt(receipt, sweeps, c.factory);
  const recorded = await c.sql.begin(async (tx) => {
    const done = await tx`
      update app.sweep_transactions
         set state = 'mined', tx_hash = ${receipt.transactionHash}, block_number = ${receipt.blockNumber.toString()}::bigint,
             gas_used = ${receipt.gasUsed.toString()}::bigint, effective_gas_price = ${receipt.effectiveGasPrice.toString()}::numeric, mined_at = now(),
             last_error = ${receipt.status === "success" ? null : "reverted"}
       where id = ${row.id} and state in ('signed', 'sent')
      returning id`;
    if (done.length === 0) return false; // recorded already (by another sweeper, or an earlier pass)
    const confirmed = outcomes.flatMap((o) => (o.outcome === "confirmed" ? [{ id: o.id, swept: o.sweptAmount.toString() }] : []));
    if (confirmed.length > 0) {
      const rows = await tx`
        with r as (select * from jsonb_to_recordset(${JSON.stringify(confirmed)}::jsonb) as r(id text, swept text))
        update app.sweeps s set state = 'confirmed', swept_amount = r.swept::numeric, last_error = null, updated_at = now()
          from r where s.id = r.id and s.state = 'sending' and s.transaction_id = ${row.id}
        returning s.session_id`;
      await wakeSessions(tx, [...new Set(decodeRows(ConfirmedSweep, rows).map((r) => r.session_id))]);
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
    const done = await tx`
      update app.sweep_transactions set state = 'failed', last_error = 'nonce used by another transaction of the relayer'
       where id = ${row.id} and state in ('signed', 'sent') returning id`;
    if (done.length === 0) return;
    await tx`
      update app.sweeps set state = 'queued', attempts = greatest(attempts - 1, 0), next_attempt_at = now(), updated_at = now()
       where transaction_id = ${row.id} and state = 'sending'`;
    await requeueAuthorizations(tx, row.id, "its transaction's nonce was used by another transaction of the relayer");
    await requeueRefunds(tx, row.id);
  });
  c.log(`sweeper ${c.net.name}: nonce ${row.nonce} was used by another transaction; what it carried is queued again`);
}
