/**
 * Payment links in the database (app.payment_links; docs/payment-links.md): create, list,
 * retrieve, deactivate, a link's sessions, and what its public page reads. A link's `uses` are
 * the sessions it started that did not end CANCELED (an unpaid one that expired gives its use
 * back), counted when read — and, for a visit, under the link's row lock (start.ts), so that
 * concurrent visits are judged one after the other.
 */
import { and, desc, eq, isNull, sql as dsql, type SQL } from "drizzle-orm";
import type { Sql, TransactionSql } from "postgres";
import { Type } from "@sinclair/typebox";
import type { Db } from "../db/client.ts";
import { after, newestFirst, onePage } from "../db/keyset.ts";
import { col, decodeFirst, rowShape } from "../db/rows.ts";
import { merchants, paymentLinks, paymentSessions } from "../db/schema.ts";
import type { Environment } from "../../../shared/environment.ts";
import { newId } from "../../../shared/ids.ts";
import type { NewLinkInput } from "./rules.ts";

export type LinkRow = typeof paymentLinks.$inferSelect;
export type LinkWithUses = LinkRow & { uses: number };

/** Sessions of the link in the outer query's row that count as uses: all but CANCELED ones. */
// Spelled out: drizzle writes a one-table query's columns unqualified, which inside this subquery would name the session's id.
const usesOf = dsql<number>`(select count(*)::int from app.payment_sessions s where s.payment_link_id = "payment_links"."id" and s.status <> 'CANCELED')`.mapWith(Number);

export interface Owner {
  merchantId: string;
  environment: Environment;
}

const Inserted = rowShape("payment link inserted", { created_at: col.time, metadata: col.json(Type.Record(Type.String(), Type.String())) });

/** A new link, in the caller's transaction (an Idempotency-Key's: http/payment-links.ts). */
export async function insertLink(q: Sql | TransactionSql, owner: Owner, input: NewLinkInput): Promise<LinkWithUses> {
  const id = newId("paymentLink");
  const big = (v: bigint | null) => (v === null ? null : v.toString());
  const rows = await q`
    insert into app.payment_links (id, merchant_id, environment, amount_minor, min_amount_minor, max_amount_minor, currency, description,
                                   max_uses, expires_at, redirect_url, metadata)
    values (${id}, ${owner.merchantId}, ${owner.environment}, ${big(input.amountMinor)}::bigint, ${big(input.minAmountMinor)}::bigint,
            ${big(input.maxAmountMinor)}::bigint, ${input.currency}, ${input.description}, ${input.maxUses}::int, ${input.expiresAt?.toISOString() ?? null}::timestamptz,
            ${input.redirectUrl}, ${JSON.stringify(input.metadata)}::jsonb)
    returning created_at, metadata`;
  const r = decodeFirst(Inserted, rows)!;
  return { id, merchantId: owner.merchantId, environment: owner.environment, ...input, metadata: r.metadata, deactivatedAt: null, createdAt: r.created_at, uses: 0 };
}

export async function findLink(db: Db, owner: Owner, id: string): Promise<LinkWithUses | undefined> {
  const [row] = await db
    .select({ link: paymentLinks, uses: usesOf })
    .from(paymentLinks)
    .where(and(eq(paymentLinks.id, id), eq(paymentLinks.merchantId, owner.merchantId), eq(paymentLinks.environment, owner.environment)));
  return row && { ...row.link, uses: row.uses };
}

export async function listLinks(db: Db, args: Owner & { limit: number; startingAfter?: string; active?: boolean }): Promise<{ rows: LinkWithUses[]; hasMore: boolean }> {
  const where: SQL[] = [eq(paymentLinks.merchantId, args.merchantId), eq(paymentLinks.environment, args.environment)];
  if (args.startingAfter) where.push(after(paymentLinks, args.startingAfter));
  if (args.active) where.push(isNull(paymentLinks.deactivatedAt));
  const rows = await db
    .select({ link: paymentLinks, uses: usesOf })
    .from(paymentLinks)
    .where(and(...where))
    .orderBy(...newestFirst(paymentLinks))
    .limit(args.limit + 1);
  return onePage(
    rows.map((r) => ({ ...r.link, uses: r.uses })),
    args.limit,
  );
}

/** Deactivates the link (once: a second call keeps the first time); undefined when it is not the owner's. */
export async function deactivateLink(db: Db, owner: Owner, id: string): Promise<LinkWithUses | undefined> {
  const [row] = await db
    .update(paymentLinks)
    .set({ deactivatedAt: dsql`coalesce(${paymentLinks.deactivatedAt}, now())` })
    .where(and(eq(paymentLinks.id, id), eq(paymentLinks.merchantId, owner.merchantId), eq(paymentLinks.environment, owner.environment)))
    .returning();
  return row && findLink(db, owner, row.id);
}

/** What the public page shows: the link, its uses and the merchant's name, by id alone (the id is public). */
export async function linkForPage(db: Db, id: string): Promise<(LinkWithUses & { merchantName: string }) | undefined> {
  const [row] = await db
    .select({ link: paymentLinks, uses: usesOf, merchantName: merchants.name })
    .from(paymentLinks)
    .innerJoin(merchants, eq(merchants.id, paymentLinks.merchantId))
    .where(eq(paymentLinks.id, id));
  return row && { ...row.link, uses: row.uses, merchantName: row.merchantName };
}

/** The link's sessions, newest first (the dashboard's link page). */
export async function sessionsOfLink(db: Db, linkId: string, limit: number) {
  return db.select().from(paymentSessions).where(eq(paymentSessions.paymentLinkId, linkId)).orderBy(desc(paymentSessions.createdAt), desc(paymentSessions.id)).limit(limit);
}

const Locked = rowShape("payment link, locked", {
  deactivated_at: col.nullable(col.time),
  expires_at: col.nullable(col.time),
  max_uses: col.nullable(col.int),
  uses: col.int,
  now: col.time,
});

/**
 * Inside a visit's transaction: the link's row locked (a concurrent visit waits here until this
 * one commits), then its uses counted in a statement of its own — under READ COMMITTED a new
 * snapshot, which sees the session the visit before wrote. undefined: no such link.
 */
export async function lockForVisit(tx: TransactionSql | Sql, id: string) {
  await tx`select id from app.payment_links where id = ${id} for update`;
  const rows = await tx`
    select l.deactivated_at, l.expires_at, l.max_uses, now() as now,
           (select count(*)::int from app.payment_sessions s where s.payment_link_id = l.id and s.status <> 'CANCELED') as uses
      from app.payment_links l where l.id = ${id}`;
  const r = decodeFirst(Locked, rows);
  return r && { deactivatedAt: r.deactivated_at, expiresAt: r.expires_at, maxUses: r.max_uses, uses: r.uses, now: r.now };
}

const Recorded = rowShape("idempotency key taken", { taken: col.bool });

/** Whether an Idempotency-Key's record (its keyed hash) exists for the merchant: a repeated visit replays its session. */
export async function keyRecorded(tx: TransactionSql | Sql, owner: Owner, keyHash: string): Promise<boolean> {
  const rows = await tx`select exists (select from app.idempotency_keys where merchant_id = ${owner.merchantId} and environment = ${owner.environment} and key_hash = ${keyHash}) as taken`;
  return decodeFirst(Recorded, rows)?.taken ?? false;
}
