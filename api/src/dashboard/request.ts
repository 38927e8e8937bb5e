/**
 * What every dashboard request goes through: the response headers (strict CSP, never framed,
 * never cached), the signed-in session from its cookie, the form body, and the CSRF check on
 * every state-changing request.
 */
import type { Services } from "../http/services.ts";
import { ENVIRONMENTS, type Environment } from "../../../shared/environment.ts";
import { Html } from "./html.ts";
import { cookieName, findLogin, LOGIN_COOKIE, readCookie, secureCookies, type Login } from "./logins.ts";
import { timingSafeEqual } from "node:crypto";
import { clientAddress } from "../http/client-address.ts";
import type { PageFamily } from "../http/page-families.ts";
import { BaseError } from "../../../shared/base-error.ts";

/** Our own assets only; no inline script or style; never in a frame; forms post only here. */
export const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy": CSP,
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "permissions-policy": "camera=(), microphone=(), geolocation=(), payment=()",
  "cache-control": "no-store",
};

/** A path with the secret of a reset or invitation link replaced (for every log line that names a path). */
export function maskDashboardTokens(path: string): string {
  return path.replace(/^\/dashboard\/(reset-password|invitations)\/[^/]+/, "/dashboard/$1/{token}");
}

/** Every answer under /dashboard carries them, the HTTP front's and the router's errors too (http/page-families.ts). */
export const DASHBOARD_PAGES: PageFamily = {
  prefix: "/dashboard",
  headers: SECURITY_HEADERS,
  // A reset or invitation link's path is a credential until used: never in a log line.
  loggedPath: (path) => maskDashboardTokens(path),
};

export function page(body: Html | string, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(body.toString(), { status, headers: { "content-type": "text/html; charset=utf-8", ...SECURITY_HEADERS, ...headers } });
}

export function redirect(location: string, headers: Record<string, string> = {}): Response {
  return new Response(null, { status: 303, headers: { location, ...SECURITY_HEADERS, ...headers } });
}

export function parseEnvironment(raw: string): Environment | undefined {
  return ENVIRONMENTS.find((e) => e === raw);
}

export async function currentLogin(services: Services, request: Request): Promise<Login | undefined> {
  const token = readCookie(request.headers.get("cookie"), cookieName(LOGIN_COOKIE, secureCookies(services.config.publicUrl)));
  return token ? findLogin(services.database.db, token) : undefined;
}

/** The client's address: the socket peer, or the client a trusted proxy names (http/client-address.ts). */
export function clientIp(request: Request): string | null {
  return clientAddress(request);
}

const MAX_FORM_BYTES = 16 * 1024;

export class FormError extends BaseError {
  override name = "FormError";
  constructor(
    readonly status: number,
    message: string,
    opts: { cause?: unknown } = {},
  ) {
    super(message, opts);
  }
}

/** An urlencoded form body, at most 16 KB; anything else is refused. */
export async function readForm(request: Request): Promise<URLSearchParams> {
  const type = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") throw new FormError(415, "Send the form as application/x-www-form-urlencoded.");
  const buf = await request.arrayBuffer();
  if (buf.byteLength > MAX_FORM_BYTES) throw new FormError(413, "The form is too large.");
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(buf);
  } catch (e) {
    throw new FormError(400, "The form is not UTF-8.", { cause: e });
  }
  return new URLSearchParams(text);
}

export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * A state-changing request must come from one of our own pages and carry the session's CSRF
 * token. The token is the lock; the origin check is a second one (SameSite=Lax already keeps
 * the cookie off cross-site posts).
 */
export function csrfProblem(request: Request, form: URLSearchParams, expected: string): string | undefined {
  const foreign = originProblem(request);
  if (foreign) return foreign;
  const sent = form.get("_csrf");
  if (!sent || !sameSecret(sent, expected)) return "The form is missing its security token or it is stale. Reload the page and try again.";
  return undefined;
}

const FOREIGN = "The request came from another site.";

/**
 * Whether a POST came from a page of another origin, as far as the browser tells. Another
 * port of this host or a sibling subdomain is another origin, even though the browser calls it
 * the same *site* and sends it cookies: such a page can plant a cookie here (cookies know no
 * ports), so sign-in, whose only other lock is a cookie matched against a form field, depends
 * on this check. Browsers send `Sec-Fetch-Site` (same-origin, same-site, cross-site, none) and
 * `Origin`; `Origin: null` (sandboxed frames, data: pages, privacy settings) counts as ours only
 * when Sec-Fetch-Site vouches for it. A request with neither header (curl, old browsers) passes:
 * it is not a browser being steered by another page.
 */
export function originProblem(request: Request): string | undefined {
  const site = request.headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin" && site !== "none") return FOREIGN;
  const origin = request.headers.get("origin");
  if (origin === null) return undefined;
  if (origin === "null") return site === "same-origin" ? undefined : FOREIGN;
  return origin === new URL(request.url).origin || sameHost(origin, request) ? undefined : FOREIGN;
}

/** Behind a proxy the request's URL is the proxy's: the browser's Host header names the origin's host. */
function sameHost(origin: string, request: Request): boolean {
  try {
    return new URL(origin).host === (request.headers.get("host") ?? "");
  } catch {
    return false;
  }
}
