/**
 * One step of one session actor (DESIGN.md §5): in a single transaction, lock the session,
 * gather its facts (indexed transfers into its deposit addresses with their confirmations,
 * its sweeps), run the pure `decide`, and commit the transition, its event, its webhook
 * deliveries, its sweep requests and its next wake-up together. The row lock makes steps
 * of one session strictly sequential whichever runner or API request takes them; a crash
 * before the commit leaves everything as it was, and decide, given the same facts, decides
 * the same again.
 */
import type { Sql, TransactionSql } from "postgres";
import type { SessionStatus } from "../../../shared/status.ts";
import { queueSweep } from "../sweeps/queue.ts";
import { recordTransition } from "./repository.ts";
import type { ChainHeads } from "./chain-heads.ts";
import { decide, type Decision, type Facts, type SessionState, type Transfer } from "./decide.ts";

/** The Postgres schema the indexer writes (indexer/process.ts). */
export const INDEXER_SCHEMA = "indexer";
/** After this many failed sweeps on a network, funds wait for an operator instead of a new round. */
export const MAX_SWEEP_ROUNDS = 3;

export interface StepRequest {
  cancelRequest?: "payer" | "merchant";
  simulateError?: boolean;
}

export interface StepResult {
  found: boolean;
  status?: SessionStatus;
  decision?: Decision;
}

interface DepositFact {
  chain_id: number;
  address: string;
  settlement_address: string;
  token_address: string;
  required_base_units: string;
  confirmations: number;
}

/**
 * `skipLocked`: a runner passes true, so a session another runner is stepping is left to it
 * (`found: false`); the API waits instead, so a cancel is decided on the latest state.
 */
export interface StepOptions {
  skipLocked?: boolean;
  now?: Date;
  /** The chains' newest blocks (RPC), to tell a lagging indexer at expiry; absent: the indexer's head must pass the expiry. */
  chainHeads?: ChainHeads;
}

export async function stepSession(sql: Sql, sessionId: string, request: StepRequest = {}, opts: StepOptions = {}): Promise<StepResult> {
  return sql.begin(async (tx) => {
    const [s] = opts.skipLocked
      ? await tx`
          select id, merchant_id, environment, status, expires_at, funding_chain_id, funding_amount, sequence, now() as db_now
            from app.payment_sessions where id = ${sessionId} for update skip locked`
      : await tx`
          select id, merchant_id, environment, status, expires_at, funding_chain_id, funding_amount, sequence, now() as db_now
            from app.payment_sessions where id = ${sessionId} for update`;
    if (!s) return { found: false };
    const deposits = (await tx`
      select chain_id, address, settlement_address, token_address, required_base_units::text, confirmations
        from app.session_deposits where session_id = ${sessionId} order by chain_id`) as unknown as DepositFact[];
    const indexed = await readTransfers(tx, sessionId);
    if (indexed === "not_ready") {
      // While the indexer rebuilds, missing rows are not reorgs: look again shortly.
      await tx`update app.payment_sessions set wake_at = now() + interval '1 second' where id = ${sessionId}`;
      return { found: true, status: s.status as SessionStatus };
    }
    // The sweeps of the session's own token; recoveries of stray tokens (sweeps/recover.ts) are not its funds.
    const sweeps = await tx`
      select w.chain_id, w.state, w.amount::text, w.swept_amount::text, w.attempts, w.last_error, t.tx_hash
        from app.sweeps w
        join app.session_deposits d on d.session_id = w.session_id and d.chain_id = w.chain_id and d.token_address = w.token_address
        left join app.sweep_transactions t on t.id = w.transaction_id
       where w.session_id = ${sessionId} order by w.created_at`;
    const state: SessionState = {
      status: s.status as SessionStatus,
      expiresAt: new Date(s.expires_at as string),
      networks: deposits.map((d) => ({ chainId: d.chain_id, requiredBaseUnits: BigInt(d.required_base_units), confirmationsRequired: d.confirmations })),
      ...(s.funding_chain_id != null ? { funding: { chainId: s.funding_chain_id as number, amount: BigInt(s.funding_amount as string) } } : {}),
    };
    const now = opts.now ?? new Date(s.db_now as string);
    const facts: Facts = {
      transfers: indexed,
      sweptOrSweeping: sweptOrSweeping(sweeps as never),
      ...(request.cancelRequest ? { cancelRequest: request.cancelRequest } : {}),
      ...(request.simulateError ? { simulateError: true } : {}),
      ...(state.funding ? sweepOutcome(sweeps as never, state.funding.chainId) : {}),
      ...(state.status === "PENDING" && now >= state.expiresAt
        ? { indexedPastExpiry: await indexedPastExpiry(tx, deposits.map((d) => d.chain_id), state.expiresAt, opts.chainHeads) }
        : {}),
    };
    const decision = decide(state, facts, now);

    let status = state.status;
    if (decision.transition) {
      const t = decision.transition;
      await recordTransition(tx, {
        sessionId,
        previous: state.status,
        to: t.to,
        reason: t.reason,
        detail: t.detail,
        ...(t.to === "FUNDED" ? { funding: { chainId: Number(t.detail.chainId), amount: String(t.detail.amount) } } : {}),
      });
      status = t.to;
    }
    for (const effect of decision.effects) {
      const d = deposits.find((x) => x.chain_id === effect.chainId);
      if (!d) continue;
      await queueSweep(tx, {
        sessionId,
        chainId: d.chain_id,
        depositAddress: d.address,
        settlementAddress: d.settlement_address,
        tokenAddress: d.token_address,
        amount: effect.amount,
      });
    }
    await tx`update app.payment_sessions set wake_at = ${decision.wakeAt?.toISOString() ?? null}::timestamptz where id = ${sessionId}`;
    return { found: true, status, decision };
  });
}

/**
 * Transfers into the session's deposit addresses with their confirmations, from the
 * indexer's tables; "not_ready" while the indexer (re)builds; none when it never ran.
 */
async function readTransfers(tx: TransactionSql, sessionId: string): Promise<Transfer[] | "not_ready"> {
  const [meta] = await tx`
    select to_regclass(${`${INDEXER_SCHEMA}._ponder_meta`})::text as meta, to_regclass(${`${INDEXER_SCHEMA}.transfers`})::text as transfers,
           to_regclass('indexer_meta.settings')::text as launched`;
  // No table: either no indexer was ever started here (nothing indexed: no transfers), or
  // one is rebuilding its schema (not ready: missing rows are not missing payments).
  if (!meta?.transfers) return meta?.launched ? "not_ready" : [];
  if (meta.meta) {
    const [ready] = await tx.unsafe(`select bool_and((value->>'is_ready')::int = 1) as ready from ${INDEXER_SCHEMA}._ponder_meta where value ? 'is_ready'`);
    if (ready && ready.ready === false) return "not_ready";
  }
  const rows = await tx.unsafe(
    `select t.chain_id, t.tx_hash, t.log_index, t.value::text as value, t.block_timestamp::text as block_timestamp,
            greatest(coalesce(h.block_number, t.block_number) - t.block_number + 1, 0)::int as confirmations
       from app.session_deposits d
       join ${INDEXER_SCHEMA}.transfers t on t.chain_id = d.chain_id and t."to" = d.address
       left join ${INDEXER_SCHEMA}.chain_heads h on h.chain_id = t.chain_id
      where d.session_id = $1`,
    [sessionId],
  );
  return rows.map((r) => ({
    chainId: r.chain_id as number,
    txHash: r.tx_hash as string,
    logIndex: r.log_index as number,
    value: BigInt(r.value as string),
    blockTimestamp: new Date(Number(r.block_timestamp) * 1000),
    confirmations: r.confirmations as number,
  }));
}

interface SweepFact {
  chain_id: number;
  state: string;
  amount: string;
  swept_amount: string | null;
  attempts: number;
  last_error: string | null;
  tx_hash: string | null;
}

/**
 * Per network, what is swept (what confirmed sweeps actually moved) or on its way (queued or
 * sending). Failed rounds count for nothing until MAX_SWEEP_ROUNDS of them failed; then the
 * last one's amount counts once, so funds wait for an operator instead of a new round.
 */
function sweptOrSweeping(sweeps: SweepFact[]): Record<number, bigint> {
  const out: Record<number, bigint> = {};
  const add = (chainId: number, v: bigint) => (out[chainId] = (out[chainId] ?? 0n) + v);
  const failed = new Map<number, SweepFact[]>();
  for (const w of sweeps) {
    if (w.state === "failed") failed.set(w.chain_id, [...(failed.get(w.chain_id) ?? []), w]);
    else if (w.state === "confirmed") add(w.chain_id, BigInt(w.swept_amount ?? w.amount));
    else add(w.chain_id, BigInt(w.amount));
  }
  for (const [chainId, rounds] of failed) if (rounds.length >= MAX_SWEEP_ROUNDS) add(chainId, BigInt(rounds.at(-1)!.amount));
  return out;
}

/** The funding network's sweep outcome: confirmed if any sweep there confirmed; failed if all there failed. */
function sweepOutcome(sweeps: SweepFact[], chainId: number): Pick<Facts, "sweep"> {
  const on = sweeps.filter((w) => w.chain_id === chainId);
  const confirmed = on.filter((w) => w.state === "confirmed");
  if (confirmed.length) {
    const swept = confirmed.reduce((sum, w) => sum + BigInt(w.swept_amount ?? w.amount), 0n);
    return { sweep: { state: "confirmed", txHash: confirmed.at(-1)!.tx_hash ?? "", swept } };
  }
  if (on.length && on.every((w) => w.state === "failed")) {
    const last = on[on.length - 1]!;
    return { sweep: { state: "failed", attempts: last.attempts, error: last.last_error ?? "sweep failed" } };
  }
  return {};
}

/**
 * Per network: has the indexer seen the chain up to `expiresAt`? Yes when its head block is
 * stamped at or after it, or is the chain's newest block (a chain that mined nothing since
 * cannot hold an unseen on-time payment).
 */
async function indexedPastExpiry(tx: TransactionSql, chainIds: number[], expiresAt: Date, chainHeads?: ChainHeads): Promise<Record<number, boolean>> {
  const [exists] = await tx`select to_regclass(${`${INDEXER_SCHEMA}.chain_heads`})::text as t`;
  if (!exists?.t) return {};
  const heads = await tx.unsafe(`select chain_id, block_number::text as n, block_timestamp::text as ts from ${INDEXER_SCHEMA}.chain_heads`);
  const out: Record<number, boolean> = {};
  for (const chainId of chainIds) {
    const h = heads.find((r) => r.chain_id === chainId);
    if (!h) {
      out[chainId] = false;
      continue;
    }
    if (Number(h.ts) * 1000 >= expiresAt.getTime()) {
      out[chainId] = true;
      continue;
    }
    const latest = chainHeads ? await chainHeads.latest(chainId) : undefined;
    out[chainId] = latest !== undefined && BigInt(h.n as string) >= latest;
  }
  return out;
}
