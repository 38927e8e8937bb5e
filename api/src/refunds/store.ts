/**
 * Refunds in the database (app.refunds, app.refund_totals; docs/refunds.md). The create reads
 * what the session received (its ledger, app.session_funds) and who paid it (the indexer), asks
 * refunds/logic.ts for the parts, and raises the session's totals with one conditional update per
 * token — `held + amount <= received` — so the database, not this code, keeps the sum of a
 * session's refunds under what it received: concurrent creates queue on the totals' row and each
 * is judged against what the one before it left. A cancel gives the amount back in the same
 * transaction that records it. Each change writes its webhook event in its own transaction (events.ts).
 */
import type { Sql, TransactionSql } from "postgres";
import { and, eq, inArray } from "drizzle-orm";
import { Type } from "@sinclair/typebox";
import type { Db } from "../db/client.ts";
import type { Environment } from "../../../shared/environment.ts";
import { newId } from "../../../shared/ids.ts";
import { ApiError } from "../errors.ts";
import { changeStatement, type ChangedBy } from "../credentials/security-history.ts";
import { refunds, refundWalletPayments, sweepTransactions, type AcceptedToken, type RefundPartColumn } from "../db/schema.ts";
import { after, newestFirst, onePage } from "../db/keyset.ts";
import { col, decodeFirst, decodeRows, rowShape, type RowOf } from "../db/rows.ts";
import { ledgerPaymentsIn } from "../sessions/indexed.ts";
import { merchantActed } from "./auto-returns-store.ts";
import { SWEEP_CHANNEL } from "../effects/sweep-queue.ts";
import { recordRefundEvent } from "./events.ts";
import { REFUND_COLUMNS, refundFromSql, type RefundRow } from "./rows.ts";
import { formatAmount, formatUnitAmount, refundedTotal } from "../../../shared/money.ts";
import { linkHash, newLinkId, sealLinkId } from "./links.ts";
import {
  nextRefundState,
  onePayer,
  planRefund,
  refundableRests,
  REFUND_STATES,
  type Refundable,
  type RefundAsk,
  type RefundReason,
  type SessionNetwork,
} from "./logic.ts";

export type { RefundRow };

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
  /** To a refund link instead of the payer (refunds/links.ts): it waits awaiting_claim with no destination. */
  link?: NewRefundLink;
  /** An automatic return's refund (refunds/auto-returns.ts); absent: the merchant's own. */
  automatic?: boolean;
  /** Paid from the merchant's own wallet (refunds/wallet-store.ts): it waits awaiting_wallet and never leaves the refund balance. */
  funding?: "balance" | "merchant_wallet";
}

export interface NewRefundLink {
  expiresInSeconds: number;
  requireApproval: boolean;
  /** The service's encryption key, which the link id is sealed under for the merchant's view. */
  encryptionKey: Buffer;
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

/** What a refund would be, before anything is written: the create's own reading and plan (previewRefund). */
export interface RefundPreview {
  sessionId: string;
  currency: string;
  chainId: number;
  /** In the session's unit on that network. */
  amount: bigint;
  unitDecimals: number;
  parts: RefundPartColumn[];
  /** The networks' main tokens (what a ledger row without a token is in), for the cap's statement. */
  mainTokenOf: Map<number, string>;
  /** Why it would wait at once (no single payer to send to), else null. */
  waitingReason: "destination_unknown" | "awaiting_claim" | null;
}

/**
 * What `createRefund` would create, read and planned exactly as it does, writing nothing: the
 * dashboard's review step shows it before the person confirms. Throws the catalogue's errors the
 * create throws for the same ask (404, not refundable, exceeds, too large, …). The create checks
 * the cap again in its own transaction: a refund made meanwhile is refused there, never overdrawn.
 */
export async function previewRefund(tx: Sql | TransactionSql, scope: RefundScope, r: NewRefund): Promise<RefundPreview> {
  const session = decodeFirst(
    SessionOfRefund,
    await tx`select id, currency from app.payment_sessions where id = ${r.sessionId} and merchant_id = ${scope.merchantId} and environment = ${scope.environment}`,
  );
  if (!session) throw sessionNotFound(r.sessionId);
  const { networks, ledger, rests } = await readRefundable(tx, r.sessionId, r.indexerPresent);
  const plan = planRefund(r.ask, rests);
  if (!plan.ok) {
    switch (plan.problem) {
      case "not_refundable":
        throw new ApiError("session_not_refundable");
      case "exceeds": {
        const left = plan.rest !== undefined && plan.unitDecimals !== undefined ? ` (${formatUnitAmount(plan.rest, plan.unitDecimals)} left)` : "";
        throw new ApiError("refund_exceeds_refundable", `${ERROR_EXCEEDS}${left}.`, "amount");
      }
      case "chain_unknown":
        throw new ApiError("parameter_invalid", "chainId is not a network this payment session could be paid on.", "chainId");
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
  const net = networks.find((n) => n.chainId === plan.chainId)!;
  const parts: RefundPartColumn[] = plan.parts.map((p) => {
    const payers = ledger.filter((l) => l.chain_id === p.chainId && !l.reverted && (l.token_address ?? net.mainToken).toLowerCase() === p.token).map((l) => l.payer);
    const t = net.tokens.find((x) => x.address === p.token)!;
    // A refund to a link has no destination until the payer claims it.
    return { token: p.token, symbol: t.symbol, decimals: t.decimals, amount: p.amount.toString(), baseUnits: p.baseUnits.toString(), destination: r.link ? null : (onePayer(payers) ?? null) };
  });
  return {
    sessionId: session.id,
    currency: session.currency,
    chainId: plan.chainId,
    amount: plan.amount,
    unitDecimals: plan.unitDecimals,
    parts,
    mainTokenOf: new Map(networks.map((n) => [n.chainId, n.mainToken])),
    waitingReason: r.link ? "awaiting_claim" : parts.some((p) => p.destination === null) ? "destination_unknown" : null,
  };
}

/** What a session may still refund, per network and token (the form's default amount: their sum). */
export async function refundableOf(sql: Sql | TransactionSql, sessionId: string, indexerPresent: boolean): Promise<Refundable[]> {
  return (await readRefundable(sql, sessionId, indexerPresent)).rests;
}

/** The session's networks, its ledger with who paid, and the rests these leave after its live refunds. */
async function readRefundable(sql: Sql | TransactionSql, sessionId: string, indexerPresent: boolean) {
  const networks = networksOf(decodeRows(NetworkOfSession, await sql`select chain_id, token_address, decimals, tokens from app.session_deposits where session_id = ${sessionId} order by chain_id`));
  const ledger = await ledgerPaymentsIn(sql, sessionId, indexerPresent);
  const held = decodeRows(HeldRow, await sql`select chain_id, token_address, held::text as held from app.refund_totals where session_id = ${sessionId}`);
  const rests = refundableRests(
    networks,
    ledger.map((l) => ({ chainId: l.chain_id, token: l.token_address, amount: l.amount, reverted: l.reverted })),
    held.map((h) => ({ chainId: h.chain_id, token: h.token_address, held: h.held })),
  );
  return { networks, ledger, rests };
}

/**
 * Creates a refund in `tx` (with withIdempotency's transaction when a key came). Throws the
 * catalogue's error when the session is not the merchant's (404), received nothing refundable, or
 * has less left than asked; nothing is written then.
 */
export async function createRefund(tx: TransactionSql, scope: RefundScope, r: NewRefund): Promise<RefundRow> {
  const plan = await previewRefund(tx, scope, r);
  // The merchant refunding first takes over the session's automatic returns still waiting (the
  // session is the merchant's: the preview found it). Before the totals: a worker deciding one
  // holds its timer, then the totals, never the reverse.
  if (!r.automatic) await merchantActed(tx, r.sessionId, "merchant_refunded");
  // The cap, kept by the database: each token's total raised only if it stays within what was
  // received. In token order, so two creates over the same tokens never wait on each other crosswise.
  for (const part of [...plan.parts].sort((a, b) => (a.token < b.token ? -1 : a.token > b.token ? 1 : 0))) {
    const main = plan.mainTokenOf.get(plan.chainId)!;
    await tx`insert into app.refund_totals (session_id, chain_id, token_address) values (${r.sessionId}, ${plan.chainId}, ${part.token}) on conflict do nothing`;
    const raised = decodeFirst(
      Raised,
      await tx`
        update app.refund_totals t set held = t.held + ${part.amount}::numeric
         where t.session_id = ${r.sessionId} and t.chain_id = ${plan.chainId} and t.token_address = ${part.token}
           and t.held + ${part.amount}::numeric <= (
             select coalesce(sum(f.amount), 0) from app.session_funds f
              where f.session_id = ${r.sessionId} and f.chain_id = ${plan.chainId} and f.direction = 'in' and f.reverted_at is null
                and coalesce(f.token_address, ${main}) = ${part.token})
        returning t.held::text as held`,
    );
    if (!raised) throw new ApiError("refund_exceeds_refundable", `${ERROR_EXCEEDS}: another refund took it meanwhile.`, "amount");
  }
  const parts = plan.parts;
  const wallet = r.funding === "merchant_wallet";
  if (wallet && (r.link || parts.length !== 1 || parts[0]!.destination === null)) {
    // Thrown before the insert: the transaction rolls back the totals raised above.
    throw new ApiError(
      "refund_not_payable_from_wallet",
      parts.length !== 1 ? "A refund over two tokens is paid from the refund balance: refund each token separately to pay from your wallet." : "A refund without a known destination cannot be paid from a wallet.",
    );
  }
  // A wallet refund waits for the merchant's wallet from the start: the balance's sender never sees it.
  const waiting = wallet ? "awaiting_wallet" : plan.waitingReason;
  const rows = await tx`
    insert into app.refunds (id, session_id, merchant_id, environment, chain_id, amount, unit_decimals, currency, reason, metadata, parts, state, waiting_reason, funding)
    values (${newId("refund")}, ${r.sessionId}, ${scope.merchantId}, ${scope.environment}, ${plan.chainId}, ${plan.amount.toString()}::numeric, ${plan.unitDecimals},
            ${plan.currency}, ${r.reason}, ${JSON.stringify(r.metadata)}::jsonb, ${JSON.stringify(parts)}::jsonb, 'PENDING', ${waiting}, ${wallet ? "merchant_wallet" : "balance"})
    returning ${tx.unsafe(REFUND_COLUMNS)}`;
  const created = refundFromSql(rows[0]);
  if (r.link) {
    // The id goes out once, in the answer's claimUrl; here it is kept hashed (the lookup) and sealed (the merchant's view).
    const linkId = newLinkId();
    await tx`
      insert into app.refund_links (refund_id, link_hash, link_sealed, expires_at, require_approval)
      values (${created.id}, ${linkHash(linkId)}, ${sealLinkId(r.link.encryptionKey, created.id, linkId)}, now() + ${r.link.expiresInSeconds} * interval '1 second', ${r.link.requireApproval})`;
  }
  // Its refund.created, in the same transaction (after its link: the event shows the link's facts).
  await recordRefundEvent(tx, created.id, "refund.created");
  // The sweeper's loops look now (a NOTIFY only shortens their wait: sent at commit).
  if (!waiting) await tx`select pg_notify(${SWEEP_CHANNEL}, '')`;
  return created;
}

const ERROR_EXCEEDS = "The amount is above what is left to refund of this payment session";

export function sessionNotFound(id: string): ApiError {
  return new ApiError("resource_not_found", `No payment session ${JSON.stringify(id.slice(0, 64))} in this account and environment.`, "id");
}

export function refundNotFound(id: string): ApiError {
  return new ApiError("resource_not_found", `No refund ${JSON.stringify(id.slice(0, 64))} in this account and environment.`, "id");
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

/**
 * The hash of each SENT or finished refund's transaction, by transaction id; a refund the
 * merchant's wallet sent itself (no relayer transaction) by its refund id: read it with hashOf.
 */
export async function transactionHashes(db: Db, rows: readonly RefundRow[]): Promise<Map<string, string>> {
  const ids = [...new Set(rows.flatMap((r) => (r.transactionId ? [r.transactionId] : [])))];
  const own = rows.filter((r) => r.funding === "merchant_wallet" && !r.transactionId).map((r) => r.id);
  const out = new Map<string, string>();
  if (ids.length > 0) {
    const found = await db.select({ id: sweepTransactions.id, hash: sweepTransactions.txHash }).from(sweepTransactions).where(inArray(sweepTransactions.id, ids));
    for (const f of found) if (f.hash) out.set(f.id, f.hash);
  }
  if (own.length > 0) {
    const found = await db.select({ id: refundWalletPayments.refundId, hash: refundWalletPayments.txHash }).from(refundWalletPayments).where(inArray(refundWalletPayments.refundId, own));
    for (const f of found) if (f.hash) out.set(f.id, f.hash);
  }
  return out;
}

/** A refund's transaction hash out of transactionHashes' map. */
export const hashOf = (hashes: ReadonlyMap<string, string>, r: RefundRow): string | undefined => hashes.get(r.transactionId ?? r.id);

const Canceled = rowShape("cancel refund", { state: col.oneOf(REFUND_STATES) });

/**
 * Cancels a PENDING refund of the merchant's and gives its amount back to the session's totals
 * (with `person`, writes its security-history line too), in one transaction that holds the refund's row (so a relayer round cannot send it meanwhile:
 * it claims PENDING refunds FOR UPDATE SKIP LOCKED and binds them in the transaction that signs).
 */
export async function cancelRefund(sql: Sql, scope: RefundScope, id: string, person?: ChangedBy): Promise<RefundRow> {
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
    if (t.webhook) await recordRefundEvent(tx, row.id, t.webhook);
    // A person's cancel (the dashboard) is recorded in the cancel's own transaction.
    if (person) await changeStatement(tx, person, "refund_canceled", { refundId: id, paymentSessionId: row.sessionId });
    return row;
  });
}

const Approvable = rowShape("approve refund", { state: col.oneOf(REFUND_STATES), waiting_reason: col.nullable(col.text), claimed: col.nullable(col.bool) });

/**
 * Approves a claimed refund link's refund (awaiting_approval): it becomes due and the relayer
 * sends it. One transaction holding the refund's row, as a cancel does, so an approval and a
 * cancel never both win. The API's POST /refunds/{id}/approve and the dashboard both call this
 * (with `person`, the dashboard's, its security-history line commits with the approval).
 */
export async function approveRefund(sql: Sql, scope: RefundScope, id: string, person?: ChangedBy): Promise<RefundRow> {
  return sql.begin(async (tx) => {
    const current = decodeFirst(
      Approvable,
      await tx`
        select r.state, r.waiting_reason, case when l.refund_id is null then null else l.claimed_at is not null end as claimed
          from app.refunds r left join app.refund_links l on l.refund_id = r.id
         where r.id = ${id} and r.merchant_id = ${scope.merchantId} and r.environment = ${scope.environment}
         for update of r`,
    );
    if (!current) throw refundNotFound(id);
    if (current.state !== "PENDING" || current.waiting_reason !== "awaiting_approval") {
      const why =
        current.claimed === null
          ? "this refund has no refund link"
          : current.state !== "PENDING"
            ? `this one is ${current.state}`
            : !current.claimed
              ? "its link has not been claimed yet"
              : "it needs no approval, or was approved already";
      throw new ApiError("refund_not_approvable", `Only a claimed refund waiting for approval can be approved: ${why}.`);
    }
    const rows = await tx`
      update app.refunds set waiting_reason = null, next_attempt_at = now(), updated_at = now()
       where id = ${id} returning ${tx.unsafe(REFUND_COLUMNS)}`;
    await tx`update app.refund_links set approved_at = now() where refund_id = ${id}`;
    const row = refundFromSql(rows[0]);
    if (person) await changeStatement(tx, person, "refund_approved", { refundId: id, paymentSessionId: row.sessionId, amount: formatUnitAmount(BigInt(row.amount), row.unitDecimals) });
    await tx`select pg_notify(${SWEEP_CHANNEL}, '')`;
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

