/**
 * The pages served beside the API, by family: the path a family lives under and the security
 * headers every answer there carries — its error answers included. An answer under a page's
 * path can come from its handler, the router (404, 405), the error mapping (500, 503), or the
 * HTTP front before any route runs (413 for a body over the cap, 503 when the request's deadline
 * passed or the server is shutting down). Each of them takes the headers from here, so the
 * deadline's 503 of /dashboard/sign-in is as unframeable as the page, and the checkout's 404 as
 * strict about scripts as the checkout.
 *
 * Pure. The checkout and the API reference name theirs beside their routes; a face (the
 * dashboard) brings its own (app.ts, `Face`).
 */

export interface PageFamily {
  /** "/dashboard": that path itself and every path under "/dashboard/". */
  prefix: string;
  /** The security headers of the family's pages (CSP, frame-ancestors, X-Frame-Options, nosniff, …). */
  headers: Readonly<Record<string, string>>;
  /** The path as the request log may show it, for a family whose paths hold a secret (a refund link's id). */
  loggedPath?: (path: string) => string;
}

/** The family `path` belongs to (the longest prefix that holds it), or undefined for the API's own routes. */
export function familyOf(families: readonly PageFamily[], path: string): PageFamily | undefined {
  let best: PageFamily | undefined;
  for (const f of families) {
    const base = f.prefix.replace(/\/+$/, "");
    const holds = path === base || path.startsWith(`${base}/`);
    if (holds && (!best || base.length > best.prefix.replace(/\/+$/, "").length)) best = f;
  }
  return best;
}
