/**
 * The API reference, served entirely by this service: `/docs` (Swagger UI), `/docs/json` (the
 * OpenAPI document, openapi.ts) and `/docs/assets/*` (Swagger UI's script and stylesheet from
 * the pinned `swagger-ui-dist` package, and our initialiser). No CDN: the service may run where
 * public CDNs are unreachable or forbidden, and a page that loads someone else's script is only
 * as trustworthy as that someone. The page is static (nothing of the API description is written
 * into its HTML), so no text in the description can break it.
 */
import { Elysia } from "elysia";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { ApiError } from "../../errors.ts";
import type { Doc } from "./openapi.ts";
import type { PageFamily } from "../page-families.ts";

export const REFERENCE_PATH = "/docs";

const here = import.meta.dir;
const swaggerDir = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));

/** Long enough to matter, short enough that an upgrade shows within a day. */
const ASSET_CACHE = "public, max-age=86400";
const ASSETS: Record<string, { file: string; type: string }> = {
  "swagger-ui-bundle.js": { file: join(swaggerDir, "swagger-ui-bundle.js"), type: "text/javascript; charset=utf-8" },
  "swagger-ui.css": { file: join(swaggerDir, "swagger-ui.css"), type: "text/css; charset=utf-8" },
  "init.js": { file: join(here, "init.js"), type: "text/javascript; charset=utf-8" },
};

/**
 * Scripts and styles from this origin only. Swagger UI sets element styles from script, which
 * style-src 'unsafe-inline' allows; no inline script runs. The reference refuses to be framed.
 */
export const REFERENCE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'self'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** The reference's security headers, which its error answers carry too (http/page-families.ts). */
export const REFERENCE_PAGES: PageFamily = {
  prefix: REFERENCE_PATH,
  headers: { "content-security-policy": REFERENCE_CSP, "x-content-type-options": "nosniff", "referrer-policy": "no-referrer" },
};

const pageHeaders = { "content-type": "text/html; charset=utf-8", ...REFERENCE_PAGES.headers, "cache-control": "no-cache" };

/** `document()` is called at the first request, once every route of the app is mounted. */
export function apiReferenceRoutes(document: () => Doc) {
  const page = readFileSync(join(here, "page.html"), "utf8");
  const assets = new Map(Object.entries(ASSETS).map(([name, a]) => [name, { body: readFileSync(a.file), type: a.type }]));
  let doc: string | undefined;
  const html = () => new Response(page, { headers: pageHeaders });
  return new Elysia()
    .get(REFERENCE_PATH, html, { detail: { hide: true } })
    .get(
      `${REFERENCE_PATH}/json`,
      () => {
        doc ??= JSON.stringify(document());
        return new Response(doc, { headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-cache" } });
      },
      { detail: { hide: true } },
    )
    .get(
      `${REFERENCE_PATH}/assets/:name`,
      ({ params }) => {
        const a = assets.get(params.name);
        if (!a) throw new ApiError("route_not_found");
        return new Response(a.body, { headers: { "content-type": a.type, "cache-control": ASSET_CACHE, "x-content-type-options": "nosniff" } });
      },
      { detail: { hide: true } },
    );
}
