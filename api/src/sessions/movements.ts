/**
 * The money a step sees, worked out from its facts without I/O: which outflows count as
 * settled, the settled money one entry per transaction, the confirmed incoming transfers, and
 * every movement the chain (as indexed) or our receipts still show. The actor (actor.ts)
 * gathers the facts and hands these to money-plan.ts, whose plan it writes; decide.ts counts
 * settled money with the same rule (`settledTransactions`), so the two never disagree on a transaction.
 */
import type { AuthorizedPayment, Network, Outflow, SweepRound, Transfer } from "./facts.ts";

/** What a step knows of one deposit address (a row of app.session_deposits). */
export interface DepositFact {
  chain_id: number;
  address: string;
  settlement_address: string;
  token_address: string;
  required_base_units: string;
  confirmations: number;
}

/** An outflow as the indexer stores it: to whom, and how deep. */
export interface IndexedOutflow extends Outflow {
  to: string;
  confirmations: number;
}

/** A transfer carried out by an authorization with the session's nonce, as the indexer stores it: to whom. */
export interface IndexedAuthorized extends AuthorizedPayment {
  to: string;
}

/**
 * Payments by authorization that count: to the session's settlement address on their network. A
 * nonce of ours signed over to anyone else paid nobody here (the payer's own affair).
 */
export function authorizedPayments(authorized: readonly IndexedAuthorized[], settlements: readonly { chainId: number; settlementAddress?: string }[]): AuthorizedPayment[] {
  return authorized
    .filter((a) => {
      const to = settlements.find((x) => x.chainId === a.chainId)?.settlementAddress;
      return to !== undefined && a.to.toLowerCase() === to.toLowerCase();
    })
    .map(({ to: _to, ...payment }) => payment);
}

/**
 * Payments by authorization at their network's depth, as money settled: the transaction that
 * paid is the one that reached the settlement address (no sweep follows).
 */
export function authorizedOutflows(payments: readonly AuthorizedPayment[], networks: readonly Network[]): Outflow[] {
  return confirmedIncoming(payments, networks).map((p) => ({ chainId: p.chainId, txHash: p.txHash, amount: p.value }));
}

const txKey = (chainId: number, txHash: string) => `${chainId}:${txHash.toLowerCase()}`;

/** Outflows that count as settled: to the deposit's own settlement address, at the network's depth. */
export function confirmedOutflows(outflows: readonly IndexedOutflow[], deposits: readonly DepositFact[]): Outflow[] {
  return outflows
    .filter((o) => {
      const d = deposits.find((x) => x.chain_id === o.chainId);
      return d !== undefined && o.to.toLowerCase() === d.settlement_address.toLowerCase() && o.confirmations >= d.confirmations;
    })
    .map((o) => ({ chainId: o.chainId, txHash: o.txHash, amount: o.amount }));
}

/**
 * Settled money, one entry per transaction: the indexer's outflows (summed per transaction),
 * then what our confirmed sweeps' receipts show moved in transactions the indexer has not
 * stored yet. A transaction is never counted twice, whichever of the two saw it first.
 */
export function settledTransactions(outflows: readonly Outflow[], sweeps: readonly SweepRound[]): Outflow[] {
  const byTx = new Map<string, Outflow>();
  for (const o of outflows) {
    const key = txKey(o.chainId, o.txHash);
    const prev = byTx.get(key);
    byTx.set(key, { ...o, amount: (prev?.amount ?? 0n) + o.amount });
  }
  for (const w of sweeps) {
    if (w.state !== "confirmed" || !w.txHash || !w.swept || w.swept <= 0n) continue;
    const key = txKey(w.chainId, w.txHash);
    if (!byTx.has(key)) byTx.set(key, { chainId: w.chainId, txHash: w.txHash, amount: w.swept });
  }
  return [...byTx.values()];
}

/** Incoming transfers with value at their network's confirmation depth (none on a network the session does not offer). */
export function confirmedIncoming(transfers: readonly Transfer[], networks: readonly Network[]): Transfer[] {
  return transfers.filter((t) => t.value > 0n && t.confirmations >= (networks.find((n) => n.chainId === t.chainId)?.confirmationsRequired ?? Infinity));
}

/**
 * Every movement the chain (as indexed) or our receipts still show, confirmed or not, as
 * `chainId:in|out:txHash` (lowercase): a reported movement missing here was reverted (money-plan.ts).
 * A payment by authorization is both: money in, and settled, in one transaction.
 */
export function presentMovements(
  indexed: { transfers: readonly Transfer[]; outflows: readonly IndexedOutflow[]; authorized?: readonly AuthorizedPayment[] },
  deposits: readonly DepositFact[],
  sweeps: readonly SweepRound[],
): Set<string> {
  const out = new Set<string>();
  for (const t of indexed.transfers) out.add(`${t.chainId}:in:${t.txHash.toLowerCase()}`);
  for (const a of indexed.authorized ?? []) {
    out.add(`${a.chainId}:in:${a.txHash.toLowerCase()}`);
    out.add(`${a.chainId}:out:${a.txHash.toLowerCase()}`);
  }
  for (const o of indexed.outflows) {
    const d = deposits.find((x) => x.chain_id === o.chainId);
    if (d && o.to.toLowerCase() === d.settlement_address.toLowerCase()) out.add(`${o.chainId}:out:${o.txHash.toLowerCase()}`);
  }
  for (const w of sweeps) if (w.state === "confirmed" && w.txHash) out.add(`${w.chainId}:out:${w.txHash.toLowerCase()}`);
  return out;
}
