/**
 * A cancel request is a fact fed to the session's actor, decided on the latest state under
 * the actor's lock: refused once a payment is detected (even unconfirmed) or once the
 * session left PENDING.
 */
import type { Sql } from "postgres";
import type { SessionStatus } from "../../../shared/status.ts";
import { stepSession } from "./actor.ts";

export type CancelOutcome =
  | { canceled: true }
  | { canceled: false; status: SessionStatus; message: string }
  /** The indexer is rebuilding: the session's payments cannot be known right now. */
  | { canceled: false; notReady: true };

export async function requestCancel(sql: Sql, sessionId: string, by: "payer" | "merchant"): Promise<CancelOutcome> {
  const r = await stepSession(sql, sessionId, { cancelRequest: by });
  if (r.found && !r.decision) return { canceled: false, notReady: true };
  const t = r.decision?.transition;
  // Canceled, by this request or by the expiry it came after.
  if (t?.to === "CANCELED") return { canceled: true };
  const status = r.status ?? "PENDING";
  return {
    canceled: false,
    status,
    message:
      r.decision?.refused === "payment_detected"
        ? "A payment to this session was detected; it can no longer be canceled."
        : `The payment session is ${status}; only a PENDING session can be canceled.`,
  };
}
