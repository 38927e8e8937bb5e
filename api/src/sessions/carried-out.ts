/**
 * Whether the chain has already carried out a submitted authorization for its session: anyone
 * who saw the payer's signature (a wallet, a relay, a front-runner) may submit it before the
 * checkout's POST reaches us. The route asks this before it refuses a submission for a nonce
 * already used, a session no longer PENDING or a window closing, and answers what happened
 * instead: the record, `mined`, with the transaction that paid (http/authorizations.ts).
 *
 * What happened is what the session itself sees: a transfer the indexer paired with an
 * AuthorizationUsed of the session's nonce, by `from`, to the session's settlement address, of
 * the session's token and amount (indexed.ts) — the very payment the session actor
 * counts. Until the indexer has its block, the answer is "not seen" and the route's refusal
 * stands; the session reaches FUNDED from the same index all the same.
 */
import type { Sql } from "postgres";
import { readIndexedAlone } from "./indexed.ts";
import type { AuthorizationTerms, SubmittedAuthorization } from "../gasless/authorization.ts";

/** The indexed payment that carried out `sub` for the session (its transaction), or undefined. */
export async function carriedOutPayment(
  sql: Sql,
  sessionId: string,
  token: string,
  terms: AuthorizationTerms,
  sub: SubmittedAuthorization,
): Promise<{ txHash: string } | undefined> {
  const facts = await readIndexedAlone(sql, sessionId);
  if (facts === "not_ready") return undefined;
  const paid = facts.authorized.find(
    (a) =>
      a.chainId === sub.chainId &&
      a.from === sub.from.toLowerCase() &&
      a.to === terms.to.toLowerCase() &&
      a.token === token.toLowerCase() &&
      a.value === terms.value,
  );
  return paid ? { txHash: paid.txHash.toLowerCase() } : undefined;
}
