/**
 * A merchant's settlement addresses, per environment and network (bounded indexing keeps
 * their transfers: they are in the view app.watched_addresses).
 */
import { and, asc, eq } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { merchantSettlements } from "../db/schema.ts";
import type { Environment } from "../../../shared/environment.ts";

export interface Settlement {
  chainId: number;
  address: string;
  updatedAt: Date;
}

/** `db` may be a transaction (webhooks/account-announcement.ts changes an address in one with its event). */
export async function setSettlement(db: Pick<Db, "insert">, merchantId: string, environment: Environment, chainId: number, address: string): Promise<Settlement> {
  const lower = address.toLowerCase();
  const [row] = await db
    .insert(merchantSettlements)
    .values({ merchantId, environment, chainId, address: lower })
    .onConflictDoUpdate({
      target: [merchantSettlements.merchantId, merchantSettlements.environment, merchantSettlements.chainId],
      set: { address: lower, updatedAt: new Date() },
    })
    .returning();
  return { chainId: row!.chainId, address: row!.address, updatedAt: row!.updatedAt };
}

export async function listSettlements(db: Db, merchantId: string, environment: Environment): Promise<Settlement[]> {
  const rows = await db
    .select()
    .from(merchantSettlements)
    .where(and(eq(merchantSettlements.merchantId, merchantId), eq(merchantSettlements.environment, environment)))
    .orderBy(asc(merchantSettlements.chainId));
  return rows.map((r) => ({ chainId: r.chainId, address: r.address, updatedAt: r.updatedAt }));
}
