/**
 * The recorded authorizations (app.payment_authorizations): one per session, written for the
 * relayer only while the session is PENDING — checked under the session row's lock, the lock the
 * session actor takes, so a payment detected meanwhile and an authorization never both win. One
 * the chain has already carried out (someone else submitted the payer's signature before it
 * reached us: sessions/carried-out.ts) is written as `mined`, whatever the session's status: it records
 * what happened, and the relayer has nothing to do for it.
 */
import { eq } from "drizzle-orm";
import { getAddress } from "viem";
import type { Db } from "../db/client.ts";
import { paymentAuthorizations, paymentSessions } from "../db/schema.ts";
import type { AuthorizationTerms, SubmittedAuthorization } from "./authorization.ts";

export type AuthorizationRow = typeof paymentAuthorizations.$inferSelect;

export async function findAuthorization(db: Db, sessionId: string): Promise<AuthorizationRow | undefined> {
  const [row] = await db.select().from(paymentAuthorizations).where(eq(paymentAuthorizations.sessionId, sessionId));
  return row;
}

/** Whether a submission is the recorded authorization again (a retry). */
export function sameAuthorization(row: AuthorizationRow, sub: SubmittedAuthorization): boolean {
  return (
    row.chainId === sub.chainId &&
    row.fromAddress === sub.from.toLowerCase() &&
    (sub.to === undefined || row.toAddress === sub.to.toLowerCase()) &&
    row.value === sub.value.toString() &&
    row.validAfter === sub.validAfter.toString() &&
    row.validBefore === sub.validBefore.toString() &&
    row.nonce === sub.nonce.toLowerCase() &&
    row.signature === sub.signature.toLowerCase()
  );
}

export type RecordOutcome =
  | { kind: "recorded"; row: AuthorizationRow }
  /** Another request recorded one first (the same or not: the caller compares). */
  | { kind: "exists"; row: AuthorizationRow }
  | { kind: "not_pending"; status: string };

/** Records a checked authorization if the session is still PENDING and has none. */
export function recordAuthorization(
  db: Db,
  sessionId: string,
  token: string,
  terms: AuthorizationTerms,
  sub: SubmittedAuthorization,
): Promise<RecordOutcome> {
  return db.transaction(async (tx) => {
    const [session] = await tx.select({ status: paymentSessions.status }).from(paymentSessions).where(eq(paymentSessions.id, sessionId)).for("update");
    const [existing] = await tx.select().from(paymentAuthorizations).where(eq(paymentAuthorizations.sessionId, sessionId));
    if (existing) return { kind: "exists", row: existing };
    if (session?.status !== "PENDING") return { kind: "not_pending", status: session?.status ?? "gone" };
    const [row] = await tx
      .insert(paymentAuthorizations)
      .values(recordOf(sessionId, token, terms, sub))
      .returning();
    return { kind: "recorded", row: row! };
  });
}

/** The row of a submitted authorization, as the terms and the submission say (addresses and the signature lowercase). */
export function recordOf(sessionId: string, token: string, terms: AuthorizationTerms, sub: SubmittedAuthorization) {
  return {
    sessionId,
    chainId: sub.chainId,
    tokenAddress: token.toLowerCase(),
    fromAddress: sub.from.toLowerCase(),
    toAddress: terms.to.toLowerCase(),
    value: terms.value.toString(),
    validAfter: terms.validAfter.toString(),
    validBefore: terms.validBefore.toString(),
    nonce: terms.nonce.toLowerCase(),
    signature: sub.signature.toLowerCase(),
  };
}

/**
 * Records an authorization the chain has already carried out, by transaction `txHash` (not ours),
 * as `mined`, unless the session has a record already (the caller compares). The session row is
 * locked as recordAuthorization locks it, so the two never both write.
 */
export function recordCarriedOut(
  db: Db,
  sessionId: string,
  token: string,
  terms: AuthorizationTerms,
  sub: SubmittedAuthorization,
  txHash: string,
): Promise<Exclude<RecordOutcome, { kind: "not_pending" }>> {
  return db.transaction(async (tx) => {
    await tx.select({ id: paymentSessions.id }).from(paymentSessions).where(eq(paymentSessions.id, sessionId)).for("update");
    const [existing] = await tx.select().from(paymentAuthorizations).where(eq(paymentAuthorizations.sessionId, sessionId));
    if (existing) return { kind: "exists", row: existing };
    const [row] = await tx
      .insert(paymentAuthorizations)
      .values({
        ...recordOf(sessionId, token, terms, sub),
        status: "mined",
        txHash: txHash.toLowerCase(),
        detail: `Carried out on-chain by transaction ${txHash.toLowerCase()}, which someone other than the payment service submitted before this authorization reached it; the payment service sent nothing for it.`,
      })
      .returning();
    return { kind: "recorded", row: row! };
  });
}

/** The API's view of a record: addresses checksummed, numbers as decimal strings; never the signature. */
export function authorizationView(row: AuthorizationRow) {
  return {
    paymentSessionId: row.sessionId,
    status: row.status,
    reason: row.reason,
    detail: row.detail,
    txHash: row.txHash,
    chainId: row.chainId,
    tokenAddress: getAddress(row.tokenAddress),
    from: getAddress(row.fromAddress),
    to: getAddress(row.toAddress),
    value: row.value,
    validAfter: row.validAfter,
    validBefore: row.validBefore,
    nonce: row.nonce,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
