/**
 * What every dashboard route file is handed (index.ts makes one per app): the services, the
 * two handler kinds with their guards (context.ts: a page needs a signed-in session; an action
 * also its CSRF token and a place in the person's rate limit), and the few pieces several
 * pages share: the notices a redirect may name, the account-and-environment a page reads.
 */
import type { Services } from "../../http/services.ts";
import type { Environment } from "../../../../shared/environment.ts";
import type { Notice } from "../layout.ts";
import { makeContext } from "../context.ts";
import { secureCookies } from "../logins.ts";

/** Every dashboard route is hidden from the API reference: they are pages, not API. */
export const HIDE = { detail: { hide: true } };
/** Where a person lands after signing in: the sandbox's home page. */
export const HOME = "/dashboard/sandbox";
/** A page cursor (?after=, ?before=) that is not a row of this account and environment. */
export const BAD_PAGE_LINK = "That page link is not valid; showing the newest.";
export const SIGNED_OUT = "You are signed out.";

/** Fixed texts for ?notice= after a redirect: nothing a link could inject. */
const NOTICES: Record<string, Notice> = {
  "key-revoked": { kind: "ok", text: "The key is revoked. Requests with it are refused from now on." },
  "endpoint-saved": { kind: "ok", text: "Endpoint saved." },
  "endpoint-deleted": { kind: "ok", text: "Endpoint deleted. Nothing more is sent to it." },
  "secret-rotated": { kind: "ok", text: "New secret made. The previous one stays valid for 24 hours; deploy the new one." },
  "settlement-changed": { kind: "ok", text: "Settlement address changed. New sessions settle there; it is recorded and announced to your webhook endpoints." },
  "redelivered": { kind: "ok", text: "The event is queued for delivery again." },
  "canceled": { kind: "ok", text: "The payment is canceled: it can no longer be paid, and your webhook endpoints are told." },
  "refund-created": { kind: "ok", text: "Refund created. It goes out from your refund balance by itself; this page shows where it is." },
  "refund-link-created": { kind: "ok", text: "Refund link created. Copy its URL below and send it to the payer only; the refund goes out once they claim it." },
  "refund-approved": { kind: "ok", text: "Refund approved. It goes out from your refund balance to the claimed address by itself." },
  "refund-settings-saved": { kind: "ok", text: "Refund settings saved. They apply to money that arrives from now on; the change is in the security history." },
  "automatic-returns-kept": { kind: "ok", text: "Kept: this payment's waiting automatic returns will not send anything back." },
  "refund-wallet-signed": { kind: "ok", text: "Your wallet's payment is recorded. This page shows the refund until it has arrived." },
  "refund-canceled": { kind: "ok", text: "The refund is canceled; its amount can be refunded again." },
  "refund-balance-funded": { kind: "ok", text: "Test tokens minted to your refund balance. Refunds waiting for money go out by themselves." },
  "payment-link-created": { kind: "ok", text: "Payment link created. Copy its address below and send it, or print its page's QR code." },
  "payment-link-deactivated": { kind: "ok", text: "Payment link deactivated. Its page takes no more payments; the payments it started are as they were." },
  "tool-done": { kind: "ok", text: "Done. The session moves on by itself; this page shows where it is now." },
  "signed-out": { kind: "ok", text: SIGNED_OUT },
  "password-changed": { kind: "ok", text: "Password changed. Every other device is signed out; this one stays signed in." },
  "signed-out-others": { kind: "ok", text: "Every other device is signed out." },
  "no-other-devices": { kind: "ok", text: "No other device was signed in." },
  "two-factor-required": { kind: "error", text: "Your account requires two-factor sign-in. Set it up here to go on." },
  "two-factor-yourself-first": { kind: "error", text: "Turn on two-factor sign-in for yourself first, then require it of everyone." },
  "passkey-added": { kind: "ok", text: "Passkey added. It stands in for the code at sign-in and before sensitive changes." },
  "passkey-removed": { kind: "ok", text: "Passkey removed." },
  "two-factor-off": { kind: "ok", text: "Two-factor sign-in is off. You sign in with your password alone." },
  "two-factor-required-on": { kind: "ok", text: "Two-factor sign-in is required: members without it set it up at their next page." },
  "two-factor-required-off": { kind: "ok", text: "Two-factor sign-in is no longer required." },
  "invitation-sent": { kind: "ok", text: "Invitation sent. The link works once, for 7 days, for that email only." },
  "invitation-revoked": { kind: "ok", text: "Invitation revoked: its link no longer works." },
  "role-changed": { kind: "ok", text: "Role changed. It applies from the member's next request." },
  "member-removed": { kind: "ok", text: "Member removed. Their sessions have ended." },
  "ownership-transferred": { kind: "ok", text: "Ownership transferred. You are an administrator now." },
};
export const noticeOf = (q: Record<string, string | undefined>) => (q.notice ? NOTICES[q.notice] : undefined);

/** The account and environment a page or action reads and changes: the signed-in person's merchant, the path's environment. */
export function owner(c: { login: { merchant: { id: string } }; env: Environment }) {
  return { merchantId: c.login.merchant.id, environment: c.env };
}

export function dashboardKit(services: Services) {
  const { pageRoute, actionRoute, guard } = makeContext(services);
  return {
    services,
    db: services.database.db,
    sql: services.database.sql,
    /** Cookies carry Secure when the service is served over https. */
    secure: secureCookies(services.config.publicUrl),
    pageRoute,
    actionRoute,
    guard,
  };
}

export type DashboardKit = ReturnType<typeof dashboardKit>;
