/**
 * Refunds in the database (app.refunds, app.refund_totals; docs/refunds.md). The create reads
 * what the session received (its ledger, app.session_funds) and who paid it (the indexer), asks
 * refunds/logic.ts for the parts, and raises the session's totals with one conditional update per
 * token — `held + amount <= received` — so the database, not this code, keeps the sum of a
 * session's refunds under what it received: concurrent creates queue on the totals' row and each
 * is judged against what the one before it left. A cancel gives the amount back in the same
 * transaction that records it.
 */
import type { Sql, TransactionSql } from "postgres";
import { and, eq, inArray } from "drizzle-orm";
import { Type } from "@sinclair/typebox";
import type { Db } from "../db/client.ts";
import type { Environment } from "../../../shared/environment.ts";
import { newId } from "../../../shared/ids.ts";
import { ApiError } from "../errors.ts";
import { refunds, sweepTransactions, type AcceptedToken, type RefundPartColumn } from "../db/schema.ts";
import { after, newestFirst, onePage } from "../db/keyset.ts";
import { col, decodeFirst, decodeRow, decodeRows, rowShape, type RowOf } from "../db/rows.ts";
import { ledgerPaymentsIn } from "../sessions/indexed.ts";
import { merchantActed } from "./auto-returns-store.ts";
import { SWEEP_CHANNEL } from "../effects/sweep-queue.ts";
import { formatAmount, formatUnitAmount, refundedTotal } from "../../../shared/money.ts";
import {
  nextRefundState,
  onePayer,
  planRefund,
  refundableRests,
  REFUND_STATES,
  type RefundAsk,
  type RefundReason,
  type SessionNetwork,
} from "./logic.ts";

export type RefundRow = typeof refunds.$inferSelect;

export interface RefundScope {
  merchantId: string;
  environment: Environment;
}

export interface NewRefund {
  sessionId: string;
  ask: RefundAsk;
  reason: RefundReason;
  metadata: Record<string, string>;
  /** SERVICE_REFUND_MAX_PER_REFUND, in minor units. */
  maxPerRefundMinor: bigint;
  /** Whether the indexer's tables are here (indexed.ts indexerTablesPresent): who paid is read there. */
  indexerPresent: boolean;
  /** An automatic return's refund (refunds/auto-returns.ts); absent: the merchant's own. */
  automatic?: boolean;
}

const SessionOfRefund = rowShape("session to refund", { id: col.text, currency: col.text });
const NetworkOfSession = rowShape("session's networks to refund on", {
  chain_id: col.int,
  token_address: col.text,
  decimals: col.int,
  tokens: col.json(Type.Array(Type.Object({ address: Type.String(), symbol: Type.String(), decimals: Type.Number() }))),
});
const HeldRow = rowShape("refund totals", { chain_id: col.int, token_address: col.text, held: col.wholeNumber });
const Raised = rowShape("raise refund total", { held: col.wholeNumber });

/** The session's networks as logic.ts takes them (a deposit without its token list has only its main token). */
function networksOf(rows: readonly RowOf<typeof NetworkOfSession>[]): SessionNetwork[] {
  return rows.map((d) => ({
    chainId: d.chain_id,
    mainToken: d.token_address.toLowerCase(),
    unitDecimals: d.decimals,
    tokens: (d.tokens.length > 0 ? d.tokens : [{ address: d.token_address, symbol: "USD stablecoin", decimals: d.decimals } satisfies AcceptedToken]).map((t) => ({
      ...t,
      address: t.address.toLowerCase(),
    })),
  }));
}

/**
 * Creates a refund in `tx` (with withIdempotency's transaction when a key came). Throws the
 * catalogue's error when the session is not the merchant's (404), received nothing refundable, or
 * has less left than asked; nothing is written then.
 */
export async function createRefund(tx: TransactionSql, scope: RefundScope, r: NewRefund): Promise<RefundRow> {
  const session = decodeFirst(
    SessionOfRefund,
    await tx`select id, currency from app.payment_sessions where id = ${r.sessionId} and merchant_id = ${scope.merchantId} and environment = ${scope.environment}`,
  );
  if (!session) throw sessionNotFound(r.sessionId);
  // The merchant refunding first takes over the session's automatic returns still waiting. First,
  // before the totals: a worker deciding one holds its timer, then the totals, never the reverse.
  if (!r.automatic) await merchantActed(tx, r.sessionId, "merchant_refunded");
  const networks = networksOf(decodeRows(NetworkOfSession, await tx`select chain_id, token_address, decimals, tokens from app.session_deposits where session_id = ${r.sessionId} order by chain_id`));
  const ledger = await ledgerPaymentsIn(tx, r.sessionId, r.indexerPresent);
  const held = decodeRows(HeldRow, await tx`select chain_id, token_address, held::text as held from app.refund_totals where session_id = ${r.sessionId}`);
  const rests = refundableRests(
    networks,
    ledger.map((l) => ({ chainId: l.chain_id, token: l.token_address, amount: l.amount, reverted: l.reverted })),
    held.map((h) => ({ chainId: h.chain_id, token: h.token_address, held: h.held })),
  );
  const plan = planRefund(r.ask, rests);
  if (!plan.ok) {
    switch (plan.problem) {
      case "not_refundable":
        throw new ApiError("session_not_refundable");
      case "exceeds": {
        const left = plan.rest !== undefined && plan.unitDecimals !== undefined ? ` (${formatUnitAmount(plan.rest, plan.unitDecimals)} left)` : "";
        throw new ApiError("refund_exceeds_refundable", `${ERROR_EXCEEDS}${left}.`, "amount");
      }
      case "chain_required":
        throw new ApiError("parameter_missing", "The session has money left to refund on more than one network: name the network with chainId.", "chainId");
      case "token_unknown":
        throw new ApiError("parameter_invalid", "token is not a stablecoin this session received on that network.", "token");
      case "split_impossible":
        throw new ApiError("parameter_invalid", "The amount cannot be split over the session's tokens in whole base units: name the token to refund in.", "token");
    }
  }
  if (plan.amount > r.maxPerRefundMinor * 10n ** BigInt(plan.unitDecimals - 2)) {
    throw new ApiError("amount_too_large", `A refund may be at most ${formatAmount(r.maxPerRefundMinor)} here (SERVICE_REFUND_MAX_PER_REFUND).`, "amount");
  }
  // The cap, kept by the database: each token's total raised only if it stays within what was
  // received. In token order, so two creates over the same tokens never wait on each other crosswise.
  for (const part of [...plan.parts].sort((a, b) => (a.token < b.token ? -1 : a.token > b.token ? 1 : 0))) {
    const main = networks.find((n) => n.chainId === part.chainId)!.mainToken;
    await tx`insert into app.refund_totals (session_id, chain_id, token_address) values (${r.sessionId}, ${part.chainId}, ${part.token}) on conflict do nothing`;
    const raised = decodeFirst(
      Raised,
      await tx`
        update app.refund_totals t set held = t.held + ${part.amount.toString()}::numeric
         where t.session_id = ${r.sessionId} and t.chain_id = ${part.chainId} and t.token_address = ${part.token}
           and t.held + ${part.amount.toString()}::numeric <= (
             select coalesce(sum(f.amount), 0) from app.session_funds f
              where f.session_id = ${r.sessionId} and f.chain_id = ${part.chainId} and f.direction = 'in' and f.reverted_at is null
                and coalesce(f.token_address, ${main}) = ${part.token})
        returning t.held::text as held`,
    );
    if (!raised) throw new ApiError("refund_exceeds_refundable", `${ERROR_EXCEEDS}: another refund took it meanwhile.`, "amount");
  }
  const tokenOf = (token: string) => networks.find((n) => n.chainId === plan.chainId)!.tokens.find((t) => t.address === token)!;
  const parts: RefundPartColumn[] = plan.parts.map((p) => {
    const payers = ledger.filter((l) => l.chain_id === p.chainId && !l.reverted && (l.token_address ?? networks.find((n) => n.chainId === p.chainId)!.mainToken).toLowerCase() === p.token).map((l) => l.payer);
    const t = tokenOf(p.token);
    return { token: p.token, symbol: t.symbol, decimals: t.decimals, amount: p.amount.toString(), baseUnits: p.baseUnits.toString(), destination: onePayer(payers) ?? null };
  });
  const waiting = parts.some((p) => p.destination === null) ? "destination_unknown" : null;
  const rows = await tx`
    insert into app.refunds (id, session_id, merchant_id, environment, chain_id, amount, unit_decimals, currency, reason, metadata, parts, state, waiting_reason)
    values (${newId("refund")}, ${r.sessionId}, ${scope.merchantId}, ${scope.environment}, ${plan.chainId}, ${plan.amount.toString()}::numeric, ${plan.unitDecimals},
            ${session.currency}, ${r.reason}, ${JSON.stringify(r.metadata)}::jsonb, ${JSON.stringify(parts)}::jsonb, 'PENDING', ${waiting})
    returning ${tx.unsafe(REFUND_COLUMNS)}`;
  // The sweeper's loops look now (a NOTIFY only shortens their wait: sent at commit).
  if (!waiting) await tx`select pg_notify(${SWEEP_CHANNEL}, '')`;
  return refundFromSql(rows[0]);
}

const ERROR_EXCEEDS = "The amount is above what is left to refund of this payment session";

export function sessionNotFound(id: string): ApiError {
  return new ApiError("resource_not_found", `No payment session ${JSON.stringify(id.slice(0, 64))} in this account and environment.`, "id");
}

export function refundNotFound(id: string): ApiError {
  return new ApiError("resource_not_found", `No refund ${JSON.stringify(id.slice(0, 64))} in this account and environment.`, "id");
}

/** A refund's columns as a raw statement returns them (numerics as text: exact). Only this file's statements use it. */
const REFUND_COLUMNS = `id, session_id, merchant_id, environment, chain_id, amount::text as amount, unit_decimals, currency, reason, metadata, parts, state,
  waiting_reason, failure_reason, transaction_id, attempts, next_attempt_at, created_at, updated_at, sent_at, finished_at`;

const RefundSql = rowShape("refund", {
  id: col.text,
  session_id: col.text,
  merchant_id: col.text,
  environment: col.oneOf(["sandbox", "production"] as const),
  chain_id: col.int,
  amount: col.numeric,
  unit_decimals: col.int,
  currency: col.text,
  reason: col.text,
  metadata: col.json(Type.Record(Type.String(), Type.String())),
  parts: col.json(
    Type.Array(
      Type.Object({
        token: Type.String(),
        symbol: Type.String(),
        decimals: Type.Number(),
        amount: Type.String(),
        baseUnits: Type.String(),
        destination: Type.Union([Type.String(), Type.Null()]),
      }),
    ),
  ),
  state: col.oneOf(REFUND_STATES),
  waiting_reason: col.nullable(col.text),
  failure_reason: col.nullable(col.text),
  transaction_id: col.nullable(col.text),
  attempts: col.int,
  next_attempt_at: col.time,
  created_at: col.time,
  updated_at: col.time,
  sent_at: col.nullable(col.time),
  finished_at: col.nullable(col.time),
});

/** A raw statement's refund row as drizzle's reads type it. */
export function refundFromSql(row: unknown): RefundRow {
  const r = decodeRow(RefundSql, row);
  return {
    id: r.id,
    sessionId: r.session_id,
    merchantId: r.merchant_id,
    environment: r.environment,
    chainId: r.chain_id,
    amount: r.amount,
    unitDecimals: r.unit_decimals,
    currency: r.currency,
    reason: r.reason,
    metadata: r.metadata,
    parts: r.parts,
    state: r.state,
    waitingReason: r.waiting_reason,
    failureReason: r.failure_reason,
    transactionId: r.transaction_id,
    attempts: r.attempts,
    nextAttemptAt: r.next_attempt_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    sentAt: r.sent_at,
    finishedAt: r.finished_at,
  };
}

export async function findRefund(db: Db, scope: RefundScope, id: string): Promise<RefundRow | undefined> {
  const [row] = await db
    .select()
    .from(refunds)
    .where(and(eq(refunds.id, id), eq(refunds.merchantId, scope.merchantId), eq(refunds.environment, scope.environment)));
  return row;
}

/** A page of the merchant's refunds, newest first (db/keyset.ts); of one session when `sessionId` is given. */
export async function listRefunds(db: Db, args: RefundScope & { sessionId?: string; limit: number; startingAfter?: string }): Promise<{ rows: RefundRow[]; hasMore: boolean }> {
  const where = [eq(refunds.merchantId, args.merchantId), eq(refunds.environment, args.environment)];
  if (args.sessionId !== undefined) where.push(eq(refunds.sessionId, args.sessionId));
  if (args.startingAfter !== undefined) where.push(after(refunds, args.startingAfter));
  const rows = await db
    .select()
    .from(refunds)
    .where(and(...where))
    .orderBy(...newestFirst(refunds))
    .limit(args.limit + 1);
  return onePage(rows, args.limit);
}

/** The hash of each SENT or finished refund's transaction, by transaction id. */
export async function transactionHashes(db: Db, rows: readonly RefundRow[]): Promise<Map<string, string>> {
  const ids = [...new Set(rows.flatMap((r) => (r.transactionId ? [r.transactionId] : [])))];
  if (ids.length === 0) return new Map();
  const found = await db.select({ id: sweepTransactions.id, hash: sweepTransactions.txHash }).from(sweepTransactions).where(inArray(sweepTransactions.id, ids));
  return new Map(found.flatMap((f) => (f.hash ? [[f.id, f.hash] as const] : [])));
}

const Canceled = rowShape("cancel refund", { state: col.oneOf(REFUND_STATES) });

/**
 * Cancels a PENDING refund of the merchant's and gives its amount back to the session's totals,
 * in one transaction that holds the refund's row (so a relayer round cannot send it meanwhile:
 * it claims PENDING refunds FOR UPDATE SKIP LOCKED and binds them in the transaction that signs).
 */
export async function cancelRefund(sql: Sql, scope: RefundScope, id: string): Promise<RefundRow> {
  return sql.begin(async (tx) => {
    const current = decodeFirst(
      Canceled,
      await tx`select state from app.refunds where id = ${id} and merchant_id = ${scope.merchantId} and environment = ${scope.environment} for update`,
    );
    if (!current) throw refundNotFound(id);
    const t = nextRefundState(current.state, { kind: "cancel" });
    if (!t.ok) throw new ApiError("refund_not_cancelable", `Only a PENDING refund can be canceled: this one is ${current.state}.`);
    const rows = await tx`
      update app.refunds set state = ${t.to}, waiting_reason = null, finished_at = now(), updated_at = now()
       where id = ${id} returning ${tx.unsafe(REFUND_COLUMNS)}`;
    const row = refundFromSql(rows[0]);
    if (t.releases) await releaseTotals(tx, row);
    return row;
  });
}

/** The SENT refunds a relayer transaction carries, locked, oldest first (the sweeper, once its receipt is in). */
export async function lockSentRefundsOf(tx: TransactionSql, transactionId: string): Promise<RefundRow[]> {
  const rows = await tx`select ${tx.unsafe(REFUND_COLUMNS)} from app.refunds where transaction_id = ${transactionId} and state = 'SENT' order by created_at, id for update`;
  return rows.map(refundFromSql);
}

/** Gives a refund's parts back to its session's totals (it was canceled or failed: nothing was paid). */
export async function releaseTotals(tx: TransactionSql, row: RefundRow): Promise<void> {
  for (const p of row.parts) {
    await tx`
      update app.refund_totals set held = held - ${p.amount}::numeric
       where session_id = ${row.sessionId} and chain_id = ${row.chainId} and token_address = ${p.token}`;
  }
}

const Refunded = rowShape("sessions' refunded amounts", { session_id: col.text, held: col.wholeNumber, decimals: col.int });

/**
 * What each session's live refunds hold, as the merchant's view shows it (`amountRefunded`): the
 * sum over its networks and tokens, each in its network's unit, as an exact decimal string.
 */
export async function refundedOf(sql: Sql, sessionIds: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>(sessionIds.map((id) => [id, "0.00"]));
  if (sessionIds.length === 0) return out;
  const rows = decodeRows(
    Refunded,
    await sql`
      select t.session_id, sum(t.held)::text as held, d.decimals
        from app.refund_totals t join app.session_deposits d on d.session_id = t.session_id and d.chain_id = t.chain_id
       where t.session_id in ${sql(sessionIds as string[])}
       group by t.session_id, d.decimals`,
  );
  for (const id of sessionIds) {
    const mine = rows.filter((r) => r.session_id === id);
    if (mine.length > 0) out.set(id, refundedTotal(mine.map((r) => ({ held: r.held, unitDecimals: r.decimals }))));
  }
  return out;
}

