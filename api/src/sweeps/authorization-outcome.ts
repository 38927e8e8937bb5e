/**
 * What happens to the recorded authorizations of a relayer transaction (kind `authorization`,
 * send-authorization.ts: one alone, or several through AuthorizationBatch) once it has an
 * outcome, for watch.ts and reconcile.ts. Each is judged on its own, from the receipt's logs:
 *
 *   the token's Transfer(from → settlement, value) and AuthorizationUsed(from, nonce) are there
 *                                       → `mined`, with the hash (gasless/submission.ts receiptPaid);
 *   they are not, and the chain says the nonce is used (a stranger's transaction carried it first)
 *                                       → `failed` for good: `used_elsewhere`;
 *   they are not, the nonce is unused, and it was sent alone (the transaction reverted)
 *                                       → `failed` for good: `reverted`;
 *   they are not, the nonce is unused, and it was one of a batch (the batch caught its failure,
 *   or the whole batch reverted: a contract payer's EIP-1271 check can swallow the batch's gas,
 *   so a reverted batch says nothing against the others in it)
 *                                       → `recorded` again, to be checked and sent anew, alone this
 *                                         time (planSubmission): one payer cannot hold the others
 *                                         back twice; its attempts count against the session's
 *                                         relayer budget;
 *   the transaction's nonce taken by another of the relayer's transactions, or the chain lost it
 *                                       → `recorded` again (it never ran, or no longer has).
 *
 * Its statements are named functions in statements/authorizations.ts.
 */
import { getAddress, type TransactionReceipt } from "viem";
import { eip3009Abi } from "../../../shared/contracts/eip3009.ts";
import { receiptPaid, USED_ELSEWHERE, type RecordedAuthorization, type Refusal } from "../gasless/submission.ts";
import type { SweepChain } from "./chain.ts";
import { authorizationDueAgain, authorizationsOf, recordAuthorizationTransactionMined, settleAuthorization } from "./statements/authorizations.ts";

/** Whether the chain says the authorization's nonce is used (by anyone: our transaction, a stranger's, or the payer's cancel). */
export function usedOnChain(c: SweepChain, auth: RecordedAuthorization): Promise<boolean> {
  return c.client.readContract({
    address: getAddress(auth.tokenAddress),
    abi: eip3009Abi,
    functionName: "authorizationState",
    args: [getAddress(auth.fromAddress), auth.nonce],
  });
}

type Outcome = { sessionId: string; status: "mined" | "failed" | "recorded"; failure?: Refusal };

/** A mined (and confirmed) authorization transaction: each authorization's outcome, with the transaction's, in one database transaction. */
export async function recordAuthorizationMined(c: SweepChain, txId: string, receipt: TransactionReceipt): Promise<void> {
  const auths = await authorizationsOf(c.sql, txId);
  const batched = auths.length > 1;
  const outcomes: Outcome[] = await Promise.all(
    auths.map(async (auth): Promise<Outcome> => {
      if (receiptPaid(receipt, auth)) return { sessionId: auth.sessionId, status: "mined" };
      if (await usedOnChain(c, auth)) return { sessionId: auth.sessionId, status: "failed", failure: USED_ELSEWHERE };
      if (batched) {
        const detail =
          receipt.status === "success"
            ? `Not carried out in the relayer's batch ${receipt.transactionHash}; checked and sent again, alone.`
            : `The relayer's batch ${receipt.transactionHash} reverted as a whole (another authorization in it can cause that); checked and sent again, alone.`;
        return { sessionId: auth.sessionId, status: "recorded", failure: { reason: "reverted", detail } };
      }
      return {
        sessionId: auth.sessionId,
        status: "failed",
        failure: { reason: "reverted", detail: `The relayer's transaction ${receipt.transactionHash} did not carry the transfer out (${receipt.status}); it is not sent again.` },
      };
    }),
  );
  const paid = outcomes.filter((o) => o.status === "mined").length;
  const recorded = await c.sql.begin(async (tx) => {
    const lastError = paid === outcomes.length ? null : `${outcomes.length - paid} of ${outcomes.length} not carried out`;
    if (!(await recordAuthorizationTransactionMined(tx, txId, receipt, lastError))) return false; // recorded already (by another sweeper, or an earlier pass)
    for (const o of outcomes) {
      // Back in line, its attempt counted: checked alone at the next pass.
      if (o.status === "recorded") await authorizationDueAgain(tx, o.sessionId, txId, o.failure!.detail);
      else await settleAuthorization(tx, { sessionId: o.sessionId, txId, status: o.status, txHash: receipt.transactionHash, reason: o.failure?.reason ?? null, detail: o.failure?.detail ?? null });
    }
    return true;
  });
  if (!recorded) return;
  const told = outcomes.map((o) => `${o.sessionId} ${o.status === "mined" ? "paid" : o.status === "recorded" ? "due again" : `failed (${o.failure?.reason})`}`);
  c.log(`sweeper ${c.net.name}: ${receipt.transactionHash} mined in block ${receipt.blockNumber} (gas ${receipt.gasUsed}): authorization${outcomes.length === 1 ? "" : "s"} of ${told.join(", ") || "?"}`);
}
