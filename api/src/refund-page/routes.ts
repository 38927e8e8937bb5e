/**
 * The payer's refund-link page (docs/refunds.md, "Refund links"), a face beside the API:
 *   GET  /refund/{linkId}          the page: the refund and the claim form, or what became of it
 *   POST /refund/{linkId}          the claim (an urlencoded form with `address`), then 303 back to the page
 *   GET  /refund/assets/{file}     its stylesheet and script
 * The link id in the path is the only credential, so the page is never cached, never framed,
 * and sends no referrer (the URL must not leak to another site). A claim must come from this
 * origin's own page (the dashboard's origin check: another site's form is refused even though
 * the id would be its only lock), and is counted per link in a bucket every process shares
 * (app.rate_buckets, as the checkout's sandbox helpers are) before its body is read.
 */
import { Elysia } from "elysia";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Services } from "../http/services.ts";
import type { PageFamily } from "../http/page-families.ts";
import { takeSharedToken } from "../http/payer-limit.ts";
import { FormError, originProblem, readForm } from "../dashboard/request.ts";
import type { Html } from "../dashboard/html.ts";
import { claimRefundLink, linkPageOf } from "../refunds/link-store.ts";
import { isLinkId, linkHash } from "../refunds/links.ts";
import { addressProblemText, alreadyClaimed, claimForm, linkOutcome, notFound, refused } from "./page.ts";

/** Our own assets only; the one script is ours; forms post only here; never framed. */
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const HEADERS: Record<string, string> = {
  "content-security-policy": CSP,
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "cache-control": "no-store",
};

/** Every answer under /refund carries these, the router's and the HTTP front's errors too (http/page-families.ts). */
export const REFUND_PAGES: PageFamily = {
  prefix: "/refund",
  headers: HEADERS,
  // The link id is a bearer secret: the request log shows only that there was one.
  loggedPath: (path) => path.replace(/^\/refund\/(?!assets\/)[^/]+/, "/refund/{linkId}"),
};

const HIDE = { detail: { hide: true } };

const ASSETS: Record<string, string> = { "refund.css": "text/css; charset=utf-8", "refund.js": "text/javascript; charset=utf-8" };

function page(body: Html, status = 200, extra: Record<string, string> = {}): Response {
  return new Response(body.toString(), { status, headers: { "content-type": "text/html; charset=utf-8", ...HEADERS, ...extra } });
}

export function refundPageRoutes(services: Services) {
  const { sql } = services.database;
  const assets = new Map(Object.keys(ASSETS).map((f) => [f, readFileSync(join(import.meta.dir, "assets", f))]));
  const perHour = services.config.refunds.claimsPerHour;
  const deps = { networks: services.networks, relayerKey: services.config.sweeps.relayerPrivateKey?.reveal() };

  async function claim(request: Request, linkId: string): Promise<Response> {
    if (originProblem(request)) return page(refused("Not sent", "The claim came from another site, so it was not accepted. Open the refund link itself and claim there."), 403);
    // Counted per link, once the link is known: behind a proxy every payer has the proxy's address,
    // and a bucket per address would let anyone stop every payer's claims with posts to made-up ids.
    if (!isLinkId(linkId) || !(await linkPageOf(sql, linkId))) return page(notFound(), 404);
    const taken = await takeSharedToken(sql, `refund-claim:${linkHash(linkId)}`, perHour / 3600, perHour);
    if (!taken.ok) {
      const minutes = Math.ceil(taken.retryAfterSeconds / 60);
      return page(refused("Too many claims", `Too many claims were made on this refund link. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`), 429, {
        "retry-after": String(taken.retryAfterSeconds),
      });
    }
    let address: string;
    try {
      address = (await readForm(request)).get("address") ?? "";
    } catch (e) {
      if (e instanceof FormError) return page(refused("Not sent", e.message), e.status);
      throw e;
    }
    // Checked whole (a value cut to a length, then trimmed, could hide a second address).
    const outcome = await claimRefundLink(sql, linkId, address, deps);
    // Back to the page by its absolute path: relative to /refund/{id}/ it would miss it.
    if (outcome.ok) return new Response(null, { status: 303, headers: { ...HEADERS, location: `/refund/${linkId}` } });
    switch (outcome.problem) {
      case "not_found":
        return page(notFound(), 404);
      case "not_open":
        return outcome.page.status === "claimed" ? page(alreadyClaimed(outcome.page), 409) : page(linkOutcome(outcome.page), 410);
      default:
        return page(claimForm(outcome.page, { error: addressProblemText(outcome.problem, outcome.page), value: address.slice(0, 200) }), 422);
    }
  }

  return new Elysia()
    .get(
      "/refund/assets/:file",
      ({ params }) => {
        const body = assets.get(params.file);
        if (!body) return page(notFound(), 404);
        return new Response(body, { headers: { ...HEADERS, "content-type": ASSETS[params.file]!, "cache-control": "public, max-age=31536000, immutable" } });
      },
      HIDE,
    )
    .get(
      "/refund/:linkId",
      async ({ params }) => {
        const p = await linkPageOf(sql, params.linkId);
        if (!p) return page(notFound(), 404);
        if (p.status === "open") return page(claimForm(p));
        return page(linkOutcome(p), p.status === "claimed" && p.state !== "CANCELED" ? 200 : 410);
      },
      HIDE,
    )
    .post("/refund/:linkId", ({ request, params }) => claim(request, params.linkId), HIDE);
}
