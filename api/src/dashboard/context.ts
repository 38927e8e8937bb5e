/**
 * The two kinds of dashboard handler. A page (GET) needs a signed-in session, else it
 * redirects to sign-in. An action (POST) needs a signed-in session (else 401) and the
 * session's CSRF token (else 403), is counted against the person's rate limit (else 429), and
 * its body is a small urlencoded form. Both: the environment in the path is checked, every
 * answer carries the security headers, and an error never leaves as a stack trace or a JSON blob.
 *
 * An action calls the same domain functions as the API's routes (webhooks/endpoint-actions.ts,
 * sessions/cancel.ts, sessions/sandbox-tools.ts, …) with typed input, naming the person (`by()`); a
 * refusal comes back as the catalogue's ApiError (`attempt`), whose message the page shows.
 */
import type { Services } from "../http/services.ts";
import type { Environment } from "../../../shared/environment.ts";
import { isDatabaseUnavailable, isRetryableConflict } from "../db/outage.ts";
import { findInChain } from "../../../shared/error-chain.ts";
import { describeError } from "../../../shared/describe-error.ts";
import { html, type Html } from "./html.ts";
import { bare, layout, type Notice, type Section } from "./layout.ts";
import type { Login } from "./logins.ts";
import { clientIp, csrfProblem, currentLogin, FormError, maskDashboardTokens, page, parseEnvironment, readForm, redirect } from "./request.ts";
import { byPerson, type Actor, type ChangedBy } from "../credentials/security-history.ts";
import { ApiError } from "../errors.ts";
import { clearFlashCookie, flashCookie, readFlash, type Flash } from "./flash.ts";
import { secureCookies } from "./logins.ts";
import { allows, MATRIX, permissionOfRoute, ROLE_NAMES, type Role } from "./permissions.ts";
import { freshSecondFactor } from "./two-factor.ts";

export interface PageContext {
  services: Services;
  request: Request;
  login: Login;
  env: Environment;
  params: Record<string, string>;
  query: Record<string, string | undefined>;
  /** The page in the shared layout (clearing a flash the page took). */
  render(section: Section, title: string, body: Html, opts?: { notice?: Notice; status?: number }): Response;
  /** The one-time message the last action left for this page (flash.ts), taken: a reload has it no more. */
  takeFlash(): Flash | undefined;
  /** 303 to `location`, carrying `flash` to that page (POST-redirect-GET: a reload never sends a form again). */
  redirectWith(location: string, flash: Flash): Response;
  actor(): Actor;
  /** The signed-in person as a change's security-history line names them (`via: dashboard`). */
  by(): ChangedBy;
  /**
   * For a sensitive action (a production settlement change or key, a role change, a large
   * refund): the page that asks for a fresh second factor when the person has one and this
   * login has not passed it in the last minutes, else undefined. `back`: where to return after.
   */
  stepUp(back: string): Response | undefined;
}

export interface ActionContext extends PageContext {
  form: URLSearchParams;
}

export function errorPage(status: number, title: string, text: string, headers: Record<string, string> = {}): Response {
  return page(bare(title, html`<div class="card narrow"><h1>${title}</h1><p>${text}</p><p><a href="/dashboard">Back to the dashboard</a></p></div>`), status, headers);
}

export type Attempted<T> = { ok: true; value: T } | { ok: false; error: ApiError };

/** Runs a domain function: what it refuses (the catalogue's ApiError) comes back for the page to show; anything else is thrown. */
export async function attempt<T>(run: () => Promise<T>): Promise<Attempted<T>> {
  try {
    return { ok: true, value: await run() };
  } catch (e) {
    const refusal = findInChain(e, (x) => x instanceof ApiError);
    if (refusal) return { ok: false, error: refusal };
    throw e;
  }
}

function guard(handler: (request: Request) => Promise<Response>) {
  return async (request: Request): Promise<Response> => {
    try {
      return await handler(request);
    } catch (e) {
      const refused = findInChain(e, (x) => x instanceof FormError);
      if (refused) return errorPage(refused.status, "That did not work", refused.message);
      // As the API's error mapping (http/app.ts): the database away or slow past the statement
      // timeout, or a conflict that rolled the work back, is a 503 that says when to come back.
      if (isDatabaseUnavailable(e) || isRetryableConflict(e)) return errorPage(503, "Try again shortly", "The database is not answering. Retry in a moment.", { "retry-after": "1" });
      console.error(JSON.stringify({ level: "error", msg: "dashboard unhandled", path: maskDashboardTokens(new URL(request.url).pathname), error: describeError(e, { stack: true }) }));
      return errorPage(500, "Something went wrong", "That is our bug, and it was logged. Try again, or go back.");
    }
  };
}

/** What the router hands a dashboard handler: `route` is the matched pattern, which names its permission. */
interface RouteArgs {
  request: Request;
  params: Record<string, string>;
  query: Record<string, string | undefined>;
  route: string;
}

/**
 * The one check of the permission matrix (permissions.ts): the 403 page when the person's role
 * may not use this route in this environment, else undefined. A route the table lacks is refused
 * for everyone (fail closed; permissions.test.ts keeps the table whole).
 */
function roleRefusal(login: Login, method: string, route: string, env: Environment): Response | undefined {
  const permission = permissionOfRoute(method, route);
  const role = login.user.role as Role;
  if (permission && allows(role, permission, env)) return undefined;
  const what = permission ? MATRIX[permission].what : "use this page";
  return errorPage(403, "Not allowed for your role", `As ${ROLE_NAMES[role] ?? role} you cannot ${what}${permission && MATRIX[permission].sandbox.includes(role) ? " in production" : ""}. Ask an owner or administrator of your account.`);
}

/** The account requires a second factor, the person has none, and this route is not their own account's (where they set it up). */
function mustEnroll(login: Login, method: string, route: string): boolean {
  return login.requireTwoFactor && !login.twoFactor && permissionOfRoute(method, route) !== "own_account";
}

export function makeContext(services: Services) {
  const secure = secureCookies(services.config.publicUrl);
  const build = (request: Request, login: Login, env: Environment, params: Record<string, string>, query: Record<string, string | undefined>): PageContext => {
    let clearFlash = false;
    const path = new URL(request.url).pathname;
    return {
      services,
      request,
      login,
      env,
      params,
      query,
      render: (section, title, body, opts = {}) =>
        page(layout({ login, environment: env, section, title, body, notice: opts.notice, path }), opts.status ?? 200, clearFlash ? { "set-cookie": clearFlashCookie(secure) } : {}),
      takeFlash: () => {
        const { flash, clear } = readFlash(request, services.encryptionKey, login.tokenHash, path, secure);
        clearFlash ||= clear;
        return flash;
      },
      redirectWith: (location, flash) => redirect(location, { "set-cookie": flashCookie(services.encryptionKey, login.tokenHash, location.split("?")[0]!, flash, secure) }),
      actor: () => actorOf(login, request),
      by: () => byPerson(actorOf(login, request), env),
      stepUp: (back) =>
        login.twoFactor && !freshSecondFactor(login.secondFactorAt)
          ? page(
              bare(
                "Confirm it is you",
                html`<div class="card narrow"><h1>Confirm it is you</h1><p>This change needs your second factor from the last few minutes. Nothing was changed.</p><p><a class="button primary" href="/dashboard/two-factor?next=${encodeURIComponent(back)}">Confirm with your authenticator</a></p><p><a href="${back}">Back</a></p></div>`,
              ),
              403,
            )
          : undefined,
    };
  };

  const actorOf = (login: Login, request: Request): Actor => ({ merchantId: login.merchant.id, userId: login.user.id, email: login.user.email, ip: clientIp(request) });

  // Routes without :env (sign-out) act on no environment's data; sandbox stands in.
  const envOf = (params: Record<string, string> | undefined): Environment | undefined => (params?.env === undefined ? "sandbox" : parseEnvironment(params.env));

  /** GET: signed in, or off to the sign-in page (and back here afterwards). */
  function pageRoute(handler: (c: PageContext) => Promise<Response>) {
    return ({ request, params, query, route }: RouteArgs) =>
      guard(async (req) => {
        const login = await currentLogin(services, req);
        if (!login) {
          const url = new URL(req.url);
          return redirect(`/dashboard/sign-in?next=${encodeURIComponent(url.pathname + url.search)}`);
        }
        const env = envOf(params);
        if (!env) return errorPage(404, "No such page", "The environment is either sandbox or production.");
        const url = new URL(req.url);
        if (login.awaitingSecondFactor) return redirect(`/dashboard/two-factor?next=${encodeURIComponent(url.pathname + url.search)}`);
        const refused = roleRefusal(login, "GET", route, env);
        if (refused) return refused;
        if (mustEnroll(login, "GET", route)) return redirect(`/dashboard/${env}/settings/account/two-factor?notice=two-factor-required`);
        return handler(build(req, login, env, params ?? {}, query ?? {}));
      })(request);
  }

  /**
   * POST: signed in (else 401), the session's CSRF token (else 403), within the person's rate
   * limit (else 429), then the action. The limit is the API's (SERVICE_RATE_LIMIT_*), in a bucket
   * per person as a key has one: a sandbox payment sends real transactions, and a held-down
   * button or a script with a stolen cookie should not turn into a flood of them.
   */
  function actionRoute(handler: (c: ActionContext) => Promise<Response>) {
    return ({ request, params, query, route }: RouteArgs) =>
      guard(async (req) => {
        const login = await currentLogin(services, req);
        if (!login) return errorPage(401, "Signed out", "Your session has ended. Sign in again.");
        const form = await readForm(req);
        const problem = csrfProblem(req, form, login.csrfToken);
        if (problem) return errorPage(403, "Refused", problem);
        const verdict = services.limiter.take(`dashboard:${login.user.id}`, Date.now());
        if (!verdict.ok) {
          const wait = verdict.retryAfterSeconds;
          return errorPage(429, "Slow down", `Too many actions in a short time. Try again in ${wait} second${wait === 1 ? "" : "s"}.`, { "retry-after": String(wait) });
        }
        const env = envOf(params);
        if (!env) return errorPage(404, "No such page", "The environment is either sandbox or production.");
        // After the CSRF check: a forged post learns nothing of the person's role.
        // A login waiting for its second factor may only sign out (a half-finished sign-in on a shared computer).
        if (login.awaitingSecondFactor && !(route === "/dashboard/sign-out")) return errorPage(401, "Finish signing in", "Give your second factor first.");
        const refused = roleRefusal(login, "POST", route, env);
        if (refused) return refused;
        if (mustEnroll(login, "POST", route)) return errorPage(403, "Two-factor sign-in required", "Your account requires two-factor sign-in: set it up under Your account first.");
        return handler({ ...build(req, login, env, params ?? {}, query ?? {}), form });
      })(request);
  }

  return { pageRoute, actionRoute, guard };
}
