/**
 * The sweeper reconciles its records with the chain before it trusts them. The chain is the
 * truth: a reorg deeper than the confirmations, a node that fails over to one that is behind,
 * a dropped transaction, or a local chain that lost its last seconds in a crash can all take
 * back transactions the database holds as mined. Left alone, every later transaction waits
 * forever behind the missing nonce and the money of the lost sweeps sits on the deposits.
 *
 * Each pass, with one RPC call (the relayer's mined nonce count `latest`):
 *   vanished  — a `mined` transaction with nonce ≥ latest is not on the chain any more (a mined
 *               nonce n means the count is > n). Once its receipt is also gone, and still after a
 *               grace period (a node may lag for a moment), it is `dropped` and its confirmed
 *               sweeps are queued again: swept anew, from the chain's nonce. The session actor
 *               sees the settlement it had counted disappear and reports it (funds_reverted),
 *               then the new sweep (funds_settled) — never silently.
 *   stranded  — an unfinished transaction above the first nonce from `latest` that none of ours
 *               holds can never be mined: it is `dropped` after the grace period, its sweeps
 *               queued again (the attempt not counted). So a nonce gap never blocks later sweeps.
 * A dropped row gives its nonce back (the unique index skips `dropped`), so the next transaction
 * is signed with the chain's own nonce.
 */
import type { Sql } from "postgres";
import { TransactionReceiptNotFoundError, type Address, type Hex, type PublicClient } from "viem";
import { wakeSessions } from "../effects/wake.ts";
import { dropTransaction, requeueDroppedSweeps, transactionsFromNonce } from "./statements/reconcile.ts";
import { requeueAuthorizations } from "./statements/authorizations.ts";
import { requeueRefunds } from "./statements/refunds.ts";
import { findInChain } from "../../../shared/error-chain.ts";

/** How long a mismatch with the chain must last before anything is dropped. */
export const RECONCILE_GRACE_MS = 10_000;

export interface ReconcileContext {
  sql: Sql;
  client: PublicClient;
  chainId: number;
  /** Lowercase, as stored. */
  relayer: string;
  relayerAddress: Address;
  log: (line: string) => void;
  /** Transaction id → when the mismatch was first seen (kept by the caller across passes). */
  firstSeen: Map<string, number>;
  graceMs?: number;
  now?: () => number;
}

/** Planned drops from the rows and the chain's count, pure. */
export function planReconcile(
  latest: bigint,
  rows: readonly { id: string; nonce: bigint; state: string }[],
): { vanished: string[]; stranded: string[] } {
  const vanished = rows.filter((r) => r.state === "mined" && r.nonce >= latest).map((r) => r.id);
  const open = rows.filter((r) => (r.state === "signed" || r.state === "sent") && r.nonce >= latest).sort((a, b) => (a.nonce < b.nonce ? -1 : 1));
  const stranded: string[] = [];
  let expected = latest;
  for (const r of open) {
    if (r.nonce === expected) expected++;
    else if (r.nonce > expected) stranded.push(r.id); // a nonce below it is held by nobody: it can never be mined
  }
  return { vanished, stranded };
}

export async function reconcileWithChain(ctx: ReconcileContext): Promise<{ dropped: number }> {
  const now = ctx.now ?? Date.now;
  const grace = ctx.graceMs ?? RECONCILE_GRACE_MS;
  const latest = BigInt(await ctx.client.getTransactionCount({ address: ctx.relayerAddress, blockTag: "latest" }));
  const rows = (await transactionsFromNonce(ctx.sql, ctx.chainId, ctx.relayer, latest)).map((r) => ({ id: r.id, nonce: r.nonce, state: r.state, txHash: r.tx_hash }));
  const plan = planReconcile(latest, rows);
  const suspects = new Set([...plan.vanished, ...plan.stranded]);
  for (const id of [...ctx.firstSeen.keys()]) if (!suspects.has(id)) ctx.firstSeen.delete(id); // the chain caught up
  let dropped = 0;
  for (const id of suspects) {
    const since = ctx.firstSeen.get(id) ?? now();
    ctx.firstSeen.set(id, since);
    if (now() - since < grace) continue;
    const row = rows.find((r) => r.id === id)!;
    if (row.state === "mined" && row.txHash && (await receiptExists(ctx.client, row.txHash))) {
      ctx.firstSeen.delete(id); // its receipt is there after all: the count was stale
      continue;
    }
    const why =
      row.state === "mined"
        ? `the chain no longer has this transaction (the relayer's mined nonce count is ${latest}); its sweeps are queued again`
        : `nonce ${row.nonce} can never be mined: the chain lost a transaction below it (mined nonce count ${latest}); its sweeps are queued again`;
    const sessions = await ctx.sql.begin(async (tx) => {
      if (!(await dropTransaction(tx, id, why))) return [];
      const requeued = await requeueDroppedSweeps(tx, id, `swept again: ${why}`);
      await requeueAuthorizations(tx, id, `sent again: ${why}`, ["sending", "mined"]);
      await requeueRefunds(tx, id, ["SENT", "SUCCEEDED"]);
      const ids = [...new Set(requeued)];
      await wakeSessions(tx, ids);
      return ids;
    });
    ctx.firstSeen.delete(id);
    dropped++;
    ctx.log(`sweeper chain ${ctx.chainId}: dropped transaction ${row.txHash ?? id} (nonce ${row.nonce}, was ${row.state}): ${why} (${sessions.length} session(s))`);
  }
  return { dropped };
}

async function receiptExists(client: PublicClient, hash: Hex): Promise<boolean> {
  try {
    await client.getTransactionReceipt({ hash });
    return true;
  } catch (e) {
    if (findInChain(e, (x) => x instanceof TransactionReceiptNotFoundError)) return false;
    throw e;
  }
}
