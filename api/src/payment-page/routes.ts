/**
 * The payer's payment-link page (docs/payment-links.md), a face beside the API:
 *   GET  /pay/{linkId}                      the page: what is paid for, the amount (or its field), Continue; a QR code of itself
 *   POST /pay/{linkId}                      a visit that proceeds (urlencoded `visit`, and `amount` when the payer chooses it):
 *                                           a payment session through the one create path, then 303 to the hosted checkout
 *   GET  /pay/{linkId}/done/{sessionId}     where the checkout sends the payer back: the merchant's redirectUrl once paid, else a receipt or the wait
 *   GET  /pay/assets/{file}                 its stylesheet
 * No script at all: everything before the wallet step is plain HTML forms, and the wallet step is
 * the checkout's. A visit must come from this origin's own page (the dashboard's origin check),
 * and is counted per client address in a bucket every process shares (app.rate_buckets, as the
 * refund page's claims are) before its body is read: a page that anyone may post to must not let
 * one client fill the sessions table.
 */
import { Elysia } from "elysia";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { and, eq } from "drizzle-orm";
import { newSecret, isId } from "../../../shared/ids.ts";
import type { Config } from "../config.ts";
import { ApiError } from "../errors.ts";
import { paymentSessions } from "../db/schema.ts";
import type { Services } from "../http/services.ts";
import type { PageFamily } from "../http/page-families.ts";
import { takeSharedToken } from "../http/payer-limit.ts";
import { clientAddress } from "../http/client-address.ts";
import { environmentOfHost } from "../http/auth.ts";
import { requestHash } from "../http/idempotency.ts";
import { FormError, originProblem, readForm } from "../dashboard/request.ts";
import type { Html } from "../dashboard/html.ts";
import { linkStatus, linkUrl, redirectTarget, visitAmount } from "../payment-links/rules.ts";
import { linkForPage } from "../payment-links/store.ts";
import { sessionBody, startFromLink, visitKey } from "../payment-links/start.ts";
import { afterCheckout, closedPage, notFound, payForm, refused, type PageLink } from "./page.ts";

/** Our own stylesheet only, no script at all; forms post here, and a visit's 303 goes on to the checkout of the link's base address. */
function headersFor(config: Pick<Config, "publicUrl" | "sandboxPublicUrl">): Record<string, string> {
  const origins = [...new Set([config.publicUrl.origin, config.sandboxPublicUrl.origin])].join(" ");
  return {
    "content-security-policy": `default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self' ${origins}; frame-ancestors 'none'; base-uri 'none'`,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
    "permissions-policy": "camera=(), microphone=(), geolocation=(), payment=()",
    "cache-control": "no-store",
  };
}

/** Every answer under /pay carries these, the router's and the HTTP front's errors too (http/page-families.ts). A link's id is public: the log shows it. */
export function payPages(config: Pick<Config, "publicUrl" | "sandboxPublicUrl">): PageFamily {
  return { prefix: "/pay", headers: headersFor(config) };
}

const HIDE = { detail: { hide: true } };
const ASSETS: Record<string, string> = { "pay.css": "text/css; charset=utf-8" };

export function paymentPageRoutes(services: Services) {
  const { sql, db } = services.database;
  const { config } = services;
  const HEADERS = headersFor(config);
  const assets = new Map(Object.keys(ASSETS).map((f) => [f, readFileSync(join(import.meta.dir, "assets", f))]));
  const perHour = config.paymentLinks.startsPerHour;
  const baseOf = (environment: string) => (environment === "sandbox" ? config.sandboxPublicUrl : config.publicUrl);

  function page(body: Html, status = 200, extra: Record<string, string> = {}): Response {
    return new Response(body.toString(), { status, headers: { "content-type": "text/html; charset=utf-8", ...HEADERS, ...extra } });
  }
  const see = (location: string) => new Response(null, { status: 303, headers: { ...HEADERS, location } });

  async function load(linkId: string) {
    return isId("paymentLink", linkId) ? linkForPage(db, linkId) : undefined;
  }
  const form = (link: PageLink, opts: { error?: string; value?: string } = {}) => payForm(link, { url: linkUrl(baseOf(link.environment), link.id), visit: newSecret(), ...opts });

  async function visit(request: Request, linkId: string): Promise<Response> {
    if (originProblem(request)) return page(refused("Not sent", "The form came from another site, so it was not accepted. Open the payment link itself and pay there."), 403);
    const link = await load(linkId);
    if (!link) return page(notFound(), 404);
    const taken = await takeSharedToken(sql, `pay-link:${clientAddress(request) ?? "unknown"}`, perHour / 3600, perHour);
    if (!taken.ok) {
      const minutes = Math.ceil(taken.retryAfterSeconds / 60);
      return page(refused("Too many payments started", `Too many payments were started from your address. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`), 429, {
        "retry-after": String(taken.retryAfterSeconds),
      });
    }
    let fields: URLSearchParams;
    try {
      fields = await readForm(request);
    } catch (e) {
      if (e instanceof FormError) return page(refused("Not sent", e.message), e.status);
      throw e;
    }
    const status = linkStatus(link, new Date());
    if (status !== "active") return page(closedPage(link, status), 410);
    const typed = fields.get("amount") ?? undefined;
    const amount = visitAmount(link, typed);
    if (!amount.ok) return page(form(link, { error: amount.problem, value: (typed ?? "").slice(0, 40) }), 422);
    const key = visitKey(link.id, fields.get("visit") ?? undefined);
    let started;
    try {
      started = await startFromLink(services, link, amount.amountMinor, key ? { key, hash: requestHash(sessionBody(link, amount.amountMinor)) } : undefined);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      switch (e.code) {
        case "payment_link_inactive":
        case "payment_link_expired":
        case "payment_link_used_up":
          return page(closedPage(link, e.code === "payment_link_inactive" ? "inactive" : e.code === "payment_link_expired" ? "expired" : "used_up"), 410);
        case "amount_too_small":
        case "amount_too_large":
        case "amount_invalid":
          return page(form(link, { error: e.message, value: (typed ?? "").slice(0, 40) }), 422);
        case "idempotency_key_reused":
          return page(form(link, { error: "This form was already sent with another amount. Check the amount and press Continue again." }), 409);
        case "settlement_address_missing":
        case "network_unavailable":
          return page(refused("Payments are not available", `${link.merchantName} cannot take payments here right now. Try again later, or ask them.`), 503);
        default:
          throw e;
      }
    }
    // The session goes in the fragment, which the browser never sends to a server; the checkout
    // reads it, removes it from the address bar and history, and returns the payer to done/.
    const fragment = new URLSearchParams({
      merchantId: started.merchantId,
      paymentSessionId: started.paymentSessionId,
      paymentSessionToken: started.paymentSessionToken,
      returnUrl: `/pay/${link.id}/done/${started.paymentSessionId}`,
    });
    // On the link's own base address when this host is the other environment's (auth.ts environmentOfHost): its token is only good there.
    const host = environmentOfHost(services, request);
    const checkout = host && host !== link.environment ? new URL("checkout/v1/", baseOf(link.environment)).toString() : "/checkout/v1/";
    return see(`${checkout}#${fragment}`);
  }

  async function done(linkId: string, sessionId: string): Promise<Response> {
    const link = await load(linkId);
    if (!link || !isId("paymentSession", sessionId)) return page(notFound(), 404);
    const [s] = await db
      .select()
      .from(paymentSessions)
      .where(and(eq(paymentSessions.id, sessionId), eq(paymentSessions.paymentLinkId, link.id)));
    if (!s) return page(notFound(), 404);
    const paid = s.status === "SUCCEEDED" || s.status === "FUNDED";
    if (paid && link.redirectUrl) return see(redirectTarget(link.redirectUrl, s.id));
    return page(afterCheckout(link, { paymentSessionId: s.id, amountMinor: s.amountMinor, currency: s.currency, status: s.status, updatedAt: s.updatedAt }));
  }

  return new Elysia()
    .get(
      "/pay/assets/:file",
      ({ params }) => {
        const body = assets.get(params.file);
        if (!body) return page(notFound(), 404);
        return new Response(body, { headers: { ...HEADERS, "content-type": ASSETS[params.file]!, "cache-control": "public, max-age=31536000, immutable" } });
      },
      HIDE,
    )
    .get(
      "/pay/:linkId",
      async ({ params }) => {
        const link = await load(params.linkId);
        if (!link) return page(notFound(), 404);
        const status = linkStatus(link, new Date());
        return status === "active" ? page(form(link)) : page(closedPage(link, status), 410);
      },
      HIDE,
    )
    .post("/pay/:linkId", ({ request, params }) => visit(request, params.linkId), HIDE)
    .get("/pay/:linkId/done/:sessionId", ({ params }) => done(params.linkId, params.sessionId), HIDE);
}
