/**
 * A cancel request is a fact fed to the session's actor, decided on the latest state under
 * the actor's lock: refused once a payment is detected (even unconfirmed) or once the
 * session left PENDING.
 */
import type { Sql } from "postgres";
import { ApiError } from "../errors.ts";
import { stepSession } from "./actor.ts";
import { securityEventStatement, type Actor } from "../credentials/security-history.ts";
import type { Environment } from "../../../shared/environment.ts";

/**
 * Cancels the session, or throws the catalogue error both cancel endpoints answer with.
 * `person`: a dashboard user asked (not a key, not the payer); the security history gets its
 * line in the cancel's own transaction.
 */
export async function requestCancel(sql: Sql, sessionId: string, by: "payer" | "merchant", person?: { actor: Actor; environment: Environment }): Promise<void> {
  const r = await stepSession(sql, sessionId, {
    cancelRequest: by,
    ...(person ? { withCancel: (tx) => securityEventStatement(tx, person.actor, "payment_session_canceled", { paymentSessionId: sessionId }, person.environment) } : {}),
  });
  if (r.found && !r.decision) {
    // The indexer is rebuilding: the session's payments cannot be known right now.
    throw new ApiError("service_unavailable", "Payments are being re-indexed; retry the cancel shortly.", undefined, { "retry-after": "5" });
  }
  // Canceled, by this request or by the expiry it came after.
  if (r.decision?.transition?.to === "CANCELED") return;
  const status = r.status ?? "PENDING";
  throw new ApiError(
    "session_not_cancelable",
    r.decision?.refused === "payment_detected"
      ? "A payment to this session was detected; it can no longer be canceled."
      : `The payment session is ${status}; only a PENDING session can be canceled.`,
  );
}
