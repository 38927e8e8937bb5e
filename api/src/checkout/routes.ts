/**
 * The browser half, served by the API:
 *   GET /sdk/v1/paysession.js    the SDK, script-tag build (window.Paysession)
 *   GET /sdk/v1/paysession.mjs   the SDK, ESM build
 *   GET /checkout/v1/            the hosted checkout page (framed by the SDK's modal)
 *   GET /checkout/v1/checkout.js, /checkout/v1/checkout.css   its assets
 * Every asset is ours (no CDN, no third-party request of any kind). The checkout page has a
 * strict Content-Security-Policy — scripts, styles and requests to our own origin only, no
 * inline script, images only from data: (wallet icons) — and may be framed by any site
 * (frame-ancestors *): that is what the SDK's modal does.
 *
 * Caching: the SDK's address is stable within a major version (/v1/), so it is cached for a
 * day and revalidated by ETag — a fix reaches merchants' pages within a day without a change
 * on their side. The checkout's script and stylesheet carry their content hash in their URL
 * and are cached for a year; the page itself is revalidated every time.
 */
import { Elysia } from "elysia";
import { bundle, checkoutPage, stylesheet, type Asset } from "./bundles.ts";
export const CHECKOUT_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors *",
  "base-uri 'none'",
  "form-action 'none'",
].join("; ");

/** The checkout page's security headers, which its error answers carry too (http/page-families.ts). */
/** The checkout's page family (http/page-families.ts): every answer under its path carries these headers, errors too. */
export const CHECKOUT_PAGES: { prefix: string; headers: Readonly<Record<string, string>> } = {
  prefix: "/checkout/v1",
  headers: { "content-security-policy": CHECKOUT_CSP, "x-content-type-options": "nosniff", "referrer-policy": "no-referrer" },
};

const SDK_CACHE = "public, max-age=86400, stale-while-revalidate=604800";
const HASHED_CACHE = "public, max-age=31536000, immutable";

function serve(request: Request, asset: Asset, cacheControl: string, extra: Record<string, string> = {}): Response {
  const etag = `"${asset.hash}"`;
  const headers: Record<string, string> = {
    "content-type": asset.contentType,
    "cache-control": cacheControl,
    etag,
    "x-content-type-options": "nosniff",
    // The SDK is loaded cross-origin by merchants' pages (and as a module, which needs CORS).
    "access-control-allow-origin": "*",
    ...extra,
  };
  if (request.headers.get("if-none-match") === etag) return new Response(null, { status: 304, headers });
  return new Response(asset.body, { headers });
}

export function checkoutRoutes() {
  const page = async ({ request }: { request: Request }) => {
    // The router matches /checkout/v1 too; the page's asset URLs are relative to /checkout/v1/
    // (so a path prefix in front of the service keeps working): send it there.
    const url = new URL(request.url);
    if (!url.pathname.endsWith("/")) return new Response(null, { status: 308, headers: { location: `${url.pathname}/` } });
    return serve(request, await checkoutPage(), "no-cache", CHECKOUT_PAGES.headers);
  };
  return new Elysia()
    .get("/sdk/v1/paysession.js", async ({ request }) => serve(request, await bundle("sdk.js"), SDK_CACHE), { detail: { hide: true } })
    .get("/sdk/v1/paysession.mjs", async ({ request }) => serve(request, await bundle("sdk.mjs"), SDK_CACHE), { detail: { hide: true } })
    .get("/checkout/v1/", page, { detail: { hide: true } })
    .get("/checkout/v1/checkout.js", async ({ request }) => serve(request, await bundle("checkout.js"), HASHED_CACHE), { detail: { hide: true } })
    .get("/checkout/v1/checkout.css", ({ request }) => serve(request, stylesheet(), HASHED_CACHE), { detail: { hide: true } });
}
