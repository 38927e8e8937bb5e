/**
 * The postMessage protocol between the SDK (merchant's page) and the hosted checkout (our
 * iframe). Every message carries `paysession: 1`; each side checks the sender's origin and
 * window before reading anything:
 *
 *   checkout → SDK   { type: "ready" }                         loaded, waiting for the session
 *   SDK → checkout   { type: "init", merchantId, paymentSessionId, paymentSessionToken }
 *                    sent to the checkout's origin only, to the iframe's window only
 *   checkout → SDK   { type: "interactive", status, reason }   the session is on screen
 *                    { type: "status", status, reason }        the session's status changed
 *                    { type: "close", status, reason }         the payer closed the checkout
 *                    { type: "fail", code, message }           the session cannot be opened
 *
 * After `init` the checkout sends only to the origin that sent `init`, and listens to nothing
 * else. The token never travels in a URL (no query string, no fragment from the SDK), so it
 * reaches no server log, no Referer and no browser history.
 */

export const PROTOCOL = 1 as const;

export type SessionStatus = "PENDING" | "FUNDED" | "SUCCEEDED" | "CANCELED" | "ERROR";

export type ToCheckout = { paysession: 1; type: "init"; merchantId: string; paymentSessionId: string; paymentSessionToken: string };

export type FromCheckout =
  | { paysession: 1; type: "ready" }
  | { paysession: 1; type: "interactive" | "status" | "close"; status: SessionStatus; reason: string }
  | { paysession: 1; type: "fail"; code: string; message: string };

const STATUSES: readonly string[] = ["PENDING", "FUNDED", "SUCCEEDED", "CANCELED", "ERROR"];

/** A message from the checkout, or undefined when `data` is not one (anything else on the page's message bus). */
export function readFromCheckout(data: unknown): FromCheckout | undefined {
  if (typeof data !== "object" || data === null) return undefined;
  const m = data as Record<string, unknown>;
  if (m.paysession !== PROTOCOL || typeof m.type !== "string") return undefined;
  if (m.type === "ready") return { paysession: 1, type: "ready" };
  if (m.type === "fail") {
    return typeof m.code === "string" && typeof m.message === "string" ? { paysession: 1, type: "fail", code: m.code, message: m.message } : undefined;
  }
  if ((m.type === "interactive" || m.type === "status" || m.type === "close") && STATUSES.includes(m.status as string) && typeof m.reason === "string") {
    return { paysession: 1, type: m.type, status: m.status as SessionStatus, reason: m.reason };
  }
  return undefined;
}

/** A message to the checkout, or undefined. */
export function readToCheckout(data: unknown): ToCheckout | undefined {
  if (typeof data !== "object" || data === null) return undefined;
  const m = data as Record<string, unknown>;
  if (m.paysession !== PROTOCOL || m.type !== "init") return undefined;
  if (typeof m.merchantId !== "string" || typeof m.paymentSessionId !== "string" || typeof m.paymentSessionToken !== "string") return undefined;
  return { paysession: 1, type: "init", merchantId: m.merchantId, paymentSessionId: m.paymentSessionId, paymentSessionToken: m.paymentSessionToken };
}
