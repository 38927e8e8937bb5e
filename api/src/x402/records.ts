/**
 * An x402 payment's authorization, written for the relayer as the payer view's authorizations
 * are (app.payment_authorizations, gasless/records.ts), with one difference: its nonce is the
 * client's, not the session's. So the nonce is claimed in app.session_nonces in the same
 * transaction — the table every nonce of ours is unique in, the session's own included — which
 * makes a second settle of the same authorization (a replay) fail here even when both passed
 * their checks at once, and lets the runner wake the session by that nonce when the indexer sees
 * it used (sessions/indexed.ts wakeSessionsTouchedAfter). The sweeper is told at once
 * (SWEEP_CHANNEL): a settle waits for its receipt.
 */
import { eq, sql as dsql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { paymentAuthorizations, paymentSessions, sessionNonces } from "../db/schema.ts";
import { SWEEP_CHANNEL } from "../effects/sweep-queue.ts";
import type { AuthorizationTerms, SubmittedAuthorization } from "../gasless/authorization.ts";
import { recordOf, type AuthorizationRow } from "../gasless/records.ts";

export type X402RecordOutcome = { kind: "recorded"; row: AuthorizationRow } | { kind: "nonce_taken" } | { kind: "not_pending"; status: string };

/** Whether a nonce is already one of ours (a session's own, or an x402 payment's recorded before). */
export async function nonceTaken(db: Db, nonce: string): Promise<boolean> {
  const [row] = await db.select({ sessionId: sessionNonces.sessionId }).from(sessionNonces).where(eq(sessionNonces.nonce, nonce.toLowerCase()));
  return row !== undefined;
}

/** Records the checked authorization of a session just made for it, claiming its nonce; nothing is written when the nonce is taken. */
export function recordX402Authorization(db: Db, sessionId: string, token: string, terms: AuthorizationTerms, sub: SubmittedAuthorization): Promise<X402RecordOutcome> {
  return db.transaction(async (tx) => {
    const [session] = await tx.select({ status: paymentSessions.status }).from(paymentSessions).where(eq(paymentSessions.id, sessionId)).for("update");
    if (session?.status !== "PENDING") return { kind: "not_pending", status: session?.status ?? "gone" };
    const claimed = await tx.insert(sessionNonces).values({ nonce: terms.nonce.toLowerCase(), sessionId }).onConflictDoNothing().returning({ nonce: sessionNonces.nonce });
    if (claimed.length === 0) return { kind: "nonce_taken" };
    const [row] = await tx.insert(paymentAuthorizations).values(recordOf(sessionId, token, terms, sub)).returning();
    await tx.execute(dsql`select pg_notify(${SWEEP_CHANNEL}, '')`);
    return { kind: "recorded", row: row! };
  });
}
