/**
 * The dashboard's door: `/dashboard` (home when signed in, else the sign-in page) and its two
 * assets, the stylesheet and the script, served from memory with the security headers.
 */
import { Elysia } from "elysia";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { errorPage } from "../context.ts";
import { currentLogin, redirect, SECURITY_HEADERS } from "../request.ts";
import { HIDE, HOME, type DashboardKit } from "./kit.ts";

const ASSETS: Record<string, string> = {
  "dashboard.css": "text/css; charset=utf-8",
  "dashboard.js": "text/javascript; charset=utf-8",
  "refund-wallet.js": "text/javascript; charset=utf-8",
  "passkeys.js": "text/javascript; charset=utf-8",
  // @simplewebauthn/browser's own bundle, as published (the passkey ceremony in the browser).
  "webauthn.js": "text/javascript; charset=utf-8",
};
const ASSET_FILES: Record<string, string> = { "webauthn.js": join(import.meta.dir, "..", "..", "..", "..", "node_modules", "@simplewebauthn", "browser", "dist", "bundle", "index.umd.min.js") };

export function entryRoutes({ services, guard }: DashboardKit) {
  const assets = new Map(Object.keys(ASSETS).map((f) => [f, readFileSync(ASSET_FILES[f] ?? join(import.meta.dir, "..", "assets", f))]));
  return new Elysia()
    .get("/dashboard", ({ request }) => guard(async (r) => redirect((await currentLogin(services, r)) ? HOME : "/dashboard/sign-in"))(request), HIDE)
    .get(
      "/dashboard/assets/:file",
      ({ params }) => {
        const body = assets.get(params.file);
        if (!body) return errorPage(404, "No such file", "Nothing here.");
        return new Response(body, { headers: { "content-type": ASSETS[params.file]!, ...SECURITY_HEADERS, "cache-control": "public, max-age=3600" } });
      },
      HIDE,
    );
}
