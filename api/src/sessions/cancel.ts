/**
 * A cancel request is a fact fed to the session's actor, decided on the latest state under
 * the actor's lock: refused once a payment is detected (even unconfirmed) or once the
 * session left PENDING. The merchant's cancel (cancelSession) is called by the API's route and
 * by the dashboard alike; the payer's by the checkout's route.
 */
import type { Sql } from "postgres";
import { ApiError } from "../errors.ts";
import { isId } from "../../../shared/ids.ts";
import type { Environment } from "../../../shared/environment.ts";
import type { Database } from "../db/client.ts";
import { stepSession } from "./actor.ts";
import { findSession } from "./repository.ts";
import { changeStatement, type ChangedBy } from "../credentials/security-history.ts";

/**
 * The merchant cancels its own session `id` (else the 404 naming it), or gets the catalogue
 * error the API answers with. `person`: a signed-in person asked (the dashboard); the security
 * history gets its line in the cancel's own transaction. A key's cancel has no line: it is the
 * merchant's server doing its business, not a person's act.
 */
export async function cancelSession(database: Pick<Database, "db" | "sql">, owner: { merchantId: string; environment: Environment }, id: string, person?: ChangedBy): Promise<void> {
  const row = isId("paymentSession", id) ? await findSession(database.db, owner.merchantId, owner.environment, id) : undefined;
  if (!row) throw new ApiError("resource_not_found", `No payment session ${JSON.stringify(id.slice(0, 64))} in this account and environment.`, "id");
  await requestCancel(database.sql, row.id, "merchant", person);
}

/**
 * Cancels the session, or throws the catalogue error both cancel endpoints answer with.
 * `person`: see cancelSession.
 */
export async function requestCancel(sql: Sql, sessionId: string, by: "payer" | "merchant", person?: ChangedBy): Promise<void> {
  const r = await stepSession(sql, sessionId, {
    cancelRequest: by,
    ...(person ? { withCancel: (tx) => changeStatement(tx, person, "payment_session_canceled", { paymentSessionId: sessionId }) } : {}),
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
