/**
 * What the dashboard shows of refunds, read from the stores the API reads (refunds/store.ts,
 * refunds/balances.ts): a session's refunds as the API shows them, each listed session's refunded
 * standing (the Transactions badge), and the refund balance per network and token beside what the
 * waiting refunds need. The judgements (which badge, which balance is low) are pure functions here.
 */
import type { Sql } from "postgres";
import { and, eq } from "drizzle-orm";
import type { Environment } from "../../../shared/environment.ts";
import { refundedTotal } from "../../../shared/money.ts";
import type { Services } from "../http/services.ts";
import { refunds } from "../db/schema.ts";
import { col, decodeRows, rowShape } from "../db/rows.ts";
import { hashOf, listRefunds, transactionHashes, type RefundRow } from "../refunds/store.ts";
import { refundView, type RefundView } from "../refunds/view.ts";
import { refundViews } from "../refunds/read-views.ts";
import type { LinkBases } from "../refunds/link-store.ts";
import { refundBalances, type RefundBalanceView } from "../refunds/balances.ts";

type Owner = { merchantId: string; environment: Environment };

/** What a refund link's URL is made of, as the API's refund routes build it. */
const linkBases = (services: Services): LinkBases => ({ encryptionKey: services.encryptionKey, publicUrl: services.config.publicUrl, sandboxPublicUrl: services.config.sandboxPublicUrl });

/** A session's refunds, newest first, as the API's GET /payment-sessions/{id}/refunds shows them (its first 100), links' claim URLs included. */
export async function sessionRefunds(services: Services, owner: Owner, sessionId: string): Promise<RefundView[]> {
  const { rows } = await listRefunds(services.database.db, { ...owner, sessionId, limit: 100 });
  return refundViews(services.database, linkBases(services), rows);
}

/**
 * The Approvals list: the environment's claimed refund links that wait for the merchant
 * (PENDING, awaiting_approval), oldest claim first, with the address each was claimed with (the
 * parts' destination). Its first 200: each approval takes it off the list.
 */
export async function refundsAwaitingApproval(services: Services, owner: Owner): Promise<RefundView[]> {
  const rows = await services.database.db
    .select()
    .from(refunds)
    .where(and(eq(refunds.merchantId, owner.merchantId), eq(refunds.environment, owner.environment), eq(refunds.state, "PENDING"), eq(refunds.waitingReason, "awaiting_approval")))
    .orderBy(refunds.updatedAt, refunds.id)
    .limit(200);
  return refundViews(services.database, linkBases(services), rows);
}

async function viewsOf(services: Services, rows: RefundRow[]): Promise<RefundView[]> {
  const hashes = await transactionHashes(services.database.db, rows);
  return rows.map((r) => refundView(r, hashOf(hashes, r)));
}

export type RefundBadge = "refunded" | "partly_refunded" | undefined;

/** The list's badge: everything received is held by live refunds ("Refunded"), some of it ("Partly refunded"), or none. */
export function refundBadge(held: bigint, received: bigint): RefundBadge {
  if (held <= 0n) return undefined;
  return held >= received ? "refunded" : "partly_refunded";
}

export interface RefundStanding {
  /** The API's `amountRefunded`: what the session's live refunds hold, "x.yy" (more places when the unit has them). */
  amountRefunded: string;
  badge: RefundBadge;
}

const Standing = rowShape("sessions' refunded standing", { session_id: col.text, decimals: col.int, held: col.wholeNumber, received: col.wholeNumber });

/**
 * Per session of the list that has refunds: what its live refunds hold and what it received,
 * per network in that network's unit (app.refund_totals against the ledger, app.session_funds).
 */
export async function refundStandings(sql: Sql, sessionIds: readonly string[]): Promise<Map<string, RefundStanding>> {
  const out = new Map<string, RefundStanding>();
  if (sessionIds.length === 0) return out;
  const rows = decodeRows(
    Standing,
    await sql`
      select t.session_id, d.decimals, sum(t.held)::text as held,
             (select coalesce(sum(f.amount), 0) from app.session_funds f
               where f.session_id = t.session_id and f.chain_id = t.chain_id and f.direction = 'in' and f.reverted_at is null)::text as received
        from app.refund_totals t join app.session_deposits d on d.session_id = t.session_id and d.chain_id = t.chain_id
       where t.session_id in ${sql(sessionIds as string[])}
       group by t.session_id, t.chain_id, d.decimals`,
  );
  for (const id of new Set(rows.map((r) => r.session_id))) {
    const mine = rows.filter((r) => r.session_id === id);
    const held = mine.reduce((s, r) => s + r.held, 0n);
    if (held === 0n) continue;
    const badges = mine.map((r) => refundBadge(r.held, r.received));
    out.set(id, {
      amountRefunded: refundedTotal(mine.map((r) => ({ held: r.held, unitDecimals: r.decimals }))),
      badge: badges.every((b) => b === "refunded" || b === undefined) && badges.some((b) => b === "refunded") ? "refunded" : "partly_refunded",
    });
  }
  return out;
}

/** What the waiting refunds need of one network's token, beside what the balance holds. */
export interface BalanceNeed {
  chainId: number;
  network: string;
  tokenAddress: string;
  tokenSymbol: string;
  decimals: number;
  /** Base units the PENDING refunds with a destination will send from this balance. */
  neededBaseUnits: bigint;
  /** Base units held, read from the chain; null when its RPC did not answer. */
  heldBaseUnits: bigint | null;
  /** The balance is below what the waiting refunds need (unknown balances are not called low). */
  low: boolean;
}

/**
 * Per network and token: what the PENDING refunds that have somewhere to go will send, against
 * the balance read from the chain. Refunds waiting for a destination are left out: nothing could
 * send them, however much the balance held. Pure.
 */
export function balanceNeeds(balances: readonly RefundBalanceView[], pending: readonly (Pick<RefundRow, "chainId" | "parts" | "state"> & { funding?: RefundRow["funding"] })[]): BalanceNeed[] {
  const out: BalanceNeed[] = [];
  for (const b of balances) {
    for (const t of b.tokens) {
      const needed = pending
        // A refund the merchant's own wallet pays needs nothing of the balance.
        .filter((r) => r.state === "PENDING" && r.funding !== "merchant_wallet" && r.chainId === b.chainId && r.parts.every((p) => p.destination !== null))
        .flatMap((r) => r.parts.filter((p) => p.token.toLowerCase() === t.tokenAddress.toLowerCase()))
        .reduce((s, p) => s + BigInt(p.baseUnits), 0n);
      const held = t.balanceBaseUnits === null ? null : BigInt(t.balanceBaseUnits);
      out.push({ chainId: b.chainId, network: b.network, tokenAddress: t.tokenAddress, tokenSymbol: t.tokenSymbol, decimals: t.decimals, neededBaseUnits: needed, heldBaseUnits: held, low: held !== null && held < needed });
    }
  }
  return out;
}

export interface RefundBalancePage {
  balances: RefundBalanceView[];
  needs: BalanceNeed[];
  /** PENDING refunds held back for want of money (waitingReason insufficient_refund_balance), oldest first. */
  waiting: RefundView[];
}

async function pendingRefunds(services: Services, owner: Owner): Promise<RefundRow[]> {
  return services.database.db
    .select()
    .from(refunds)
    .where(and(eq(refunds.merchantId, owner.merchantId), eq(refunds.environment, owner.environment), eq(refunds.state, "PENDING")))
    .orderBy(refunds.createdAt)
    .limit(500);
}

const balancesOf = (services: Services, owner: Owner) => refundBalances(services.networks, services.config.sweeps.relayerPrivateKey?.reveal(), owner.merchantId, owner.environment);

export async function loadRefundBalancePage(services: Services, owner: Owner): Promise<RefundBalancePage> {
  const [balances, pending] = await Promise.all([balancesOf(services, owner), pendingRefunds(services, owner)]);
  const waiting = await viewsOf(services, pending.filter((r) => r.waitingReason === "insufficient_refund_balance"));
  return { balances, needs: balanceNeeds(balances, pending), waiting };
}

/**
 * The home page's notice: the balances below what waiting refunds need. The chain is read only
 * when some refund waits, so a home page without refunds costs no RPC call.
 */
export async function lowRefundBalances(services: Services, owner: Owner): Promise<BalanceNeed[]> {
  const pending = await pendingRefunds(services, owner);
  if (!pending.some((r) => r.parts.every((p) => p.destination !== null))) return [];
  return balanceNeeds(await balancesOf(services, owner), pending).filter((n) => n.low);
}
