/**
 * The merchant dashboard's routes (docs/dashboard.md), mounted on the API's Elysia app.
 * Hidden from Swagger: they are pages, not API.
 */
import { Elysia } from "elysia";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Services } from "../http/services.ts";
import { createApiKey, listApiKeys, revokeApiKey } from "../credentials/store.ts";
import { depositsOf, findSession } from "../sessions/repository.ts";
import { attemptExists, listAttempts } from "../webhooks/attempts.ts";
import { findEndpoint, listEndpoints } from "../webhooks/endpoints.ts";
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  revealWebhookSecret,
  rotateWebhookSecret,
  sendTestEvent,
  updateWebhookEndpoint,
} from "../webhooks/endpoint-actions.ts";
import { redeliverEvent } from "../webhooks/redelivery.ts";
import { cancelSession } from "../sessions/cancel.ts";
import { setSettlementAddress, settlementAddresses } from "../webhooks/settlement-addresses.ts";
import { expireSandboxSession, failNextSweep, paySandboxSession, simulateSandboxError, type SandboxServices } from "../sessions/sandbox-tools.ts";
import type { Merchant } from "../credentials/store.ts";
import { validateBody } from "../http/validate.ts";
import { CreateWebhookEndpointBody, UpdateWebhookEndpointBody } from "../http/webhook-endpoints.schemas.ts";
import { SettlementAddressBody } from "../http/settlement-addresses.schemas.ts";
import { isId, newSecret } from "../../../shared/ids.ts";
import { html } from "./html.ts";
import { listSecurityEvents, recentFailures, recordSecurityEvent } from "../credentials/security-history.ts";
import type { Environment } from "../../../shared/environment.ts";
import { attempt, makeContext, errorPage, type ActionContext } from "./context.ts";
import { cookieName, cookiePath, endLogin, loginCookie, readCookie, secureCookies, signIn } from "./logins.ts";
import { signUp } from "./sign-up.ts";
import { clientIp, currentLogin, originProblem, page, readForm, redirect, sameSecret, SECURITY_HEADERS } from "./request.ts";
import { retryAfterSeconds } from "../credentials/sign-in-throttle.ts";
import { checkPassword, findUserByEmail, normalizeEmail, UserInputError } from "./users.ts";
import { listTransactions, parseFilters, type Filters } from "./transactions.ts";
import { CSV_HEADER, csvRow } from "./csv-export.ts";
import { reconciliationOf } from "./reconciliation.ts";
import { rows, transactionsBody } from "./pages/transactions.ts";
import { transactionBody, type SandboxTool } from "./pages/transaction.ts";
import { loadDetail } from "./detail.ts";
import { signInPage, signUpPage } from "./pages/sign-in.ts";
import { apiKeysBody, securityBody, settlementBody, webhookBody, webhooksBody } from "./pages/settings.ts";
import type { Notice } from "./layout.ts";
import { listEventLines, ownsEvent, parseEventFilters } from "./events.ts";
import { eventsBody, eventsQuery } from "./pages/events.ts";
import { cancelBody } from "./pages/cancel.ts";
import { findEvent } from "../webhooks/events.ts";
import { homePage } from "./home-route.ts";
import { findInChain } from "../../../shared/error-chain.ts";

const HIDE = { detail: { hide: true } };
/** A page cursor (?after=, ?before=) that is not a row of this account and environment. */
const BAD_PAGE_LINK = "That page link is not valid; showing the newest.";
/** Where a person lands after signing in: the sandbox's home page. */
const HOME = "/dashboard/sandbox";
/** Attempts a page on an endpoint's page. */
const ATTEMPTS_PAGE_SIZE = 25;
const ASSETS: Record<string, string> = { "dashboard.css": "text/css; charset=utf-8", "dashboard.js": "text/javascript; charset=utf-8" };
/** Sign-in's and sign-up's own CSRF cookie, before there is a signed-in session to hold a token. */
const PRE_COOKIE = "ps_dashboard_pre";

const SIGNED_OUT = "You are signed out.";
/** Fixed texts for ?notice= after a redirect: nothing a link could inject. */
const NOTICES: Record<string, Notice> = {
  "key-revoked": { kind: "ok", text: "The key is revoked. Requests with it are refused from now on." },
  "endpoint-saved": { kind: "ok", text: "Endpoint saved." },
  "endpoint-deleted": { kind: "ok", text: "Endpoint deleted. Nothing more is sent to it." },
  "secret-rotated": { kind: "ok", text: "New secret made. The previous one stays valid for 24 hours; deploy the new one." },
  "settlement-changed": { kind: "ok", text: "Settlement address changed. New sessions settle there; it is recorded and announced to your webhook endpoints." },
  "redelivered": { kind: "ok", text: "The event is queued for delivery again." },
  "canceled": { kind: "ok", text: "The payment is canceled: it can no longer be paid, and your webhook endpoints are told." },
  "tool-done": { kind: "ok", text: "Done. The session moves on by itself; this page shows where it is now." },
  "signed-out": { kind: "ok", text: SIGNED_OUT },
};
const noticeOf = (q: Record<string, string | undefined>) => (q.notice ? NOTICES[q.notice] : undefined);

/** The sandbox tools a payment's page offers, by the name in its path: the functions the API's sandbox routes call. */
type SandboxToolRun = (services: SandboxServices, merchant: Merchant, id: string) => Promise<unknown>;
const SANDBOX_TOOL_RUNS = new Map<string, SandboxToolRun>(
  Object.entries({
    pay: (s, m, id) => paySandboxSession(s, m, id),
    expire: expireSandboxSession,
    "fail-next-sweep": failNextSweep,
    "simulate-error": simulateSandboxError,
  } satisfies Record<SandboxTool, SandboxToolRun>),
);

function safeNext(next: string | null | undefined): string | undefined {
  return next && /^\/dashboard\/[A-Za-z0-9/_.?=&%-]*$/.test(next) && !next.startsWith("//") ? next : undefined;
}

export function dashboardRoutes(services: Services) {
  const { pageRoute, actionRoute, guard } = makeContext(services);
  const db = services.database.db;
  const sql = services.database.sql;
  const secure = secureCookies(services.config.publicUrl);
  const preCookie = (v: string, maxAge = 3600) => `${cookieName(PRE_COOKIE, secure)}=${v}; Path=${cookiePath(secure)}; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secure ? "; Secure" : ""}`;
  const assets = new Map(Object.keys(ASSETS).map((f) => [f, readFileSync(join(import.meta.dir, "assets", f))]));
  const apiHost = (env: string) => (env === "sandbox" ? services.config.sandboxPublicUrl : services.config.publicUrl).toString().replace(/\/$/, "");

  /** The sign-in form with a fresh pre-session CSRF token (double submit: cookie and field). */
  function signInForm(args: { email?: string; error?: string; next?: string; notice?: string }, status = 200, extra: Record<string, string> = {}) {
    const csrf = newSecret();
    return page(signInPage({ csrf, signUp: services.config.dashboard.signUp, ...args }), status, { "set-cookie": preCookie(csrf), ...extra });
  }
  /**
   * Sign-in and sign-up have no session yet: their form token is matched against a cookie of
   * their own (double submit). Cookies know no ports, so a page on another port of this host
   * could plant that cookie; the origin check is what refuses its post.
   */
  const preOk = async (request: Request, form: URLSearchParams) => {
    if (originProblem(request)) return false;
    const cookie = readCookie(request.headers.get("cookie"), cookieName(PRE_COOKIE, secure));
    const sent = form.get("_csrf");
    return !!cookie && !!sent && sameSecret(cookie, sent);
  };

  return (
    new Elysia()
      .get("/dashboard", ({ request }) => guard(async (r) => redirect((await currentLogin(services, r)) ? HOME : "/dashboard/sign-in"))(request), HIDE)
      .get(
        "/dashboard/assets/:file",
        ({ params }) => {
          const body = assets.get(params.file);
          if (!body) return errorPage(404, "No such file", "Nothing here.");
          return new Response(body, { headers: { "content-type": ASSETS[params.file]!, ...SECURITY_HEADERS, "cache-control": "public, max-age=3600" } });
        },
        HIDE,
      )
      // ---------------------------------------------------------------- sign-in, sign-out, sign-up
      .get(
        "/dashboard/sign-in",
        ({ request, query }) =>
          guard(async (r) => {
            if (await currentLogin(services, r)) return redirect(safeNext(query.next) ?? HOME);
            return signInForm({ next: safeNext(query.next), notice: query.notice === "signed-out" ? SIGNED_OUT : undefined });
          })(request),
        HIDE,
      )
      .post(
        "/dashboard/sign-in",
        ({ request }) =>
          guard(async (r) => {
            const form = await readForm(r);
            const next = safeNext(form.get("next"));
            if (!(await preOk(r, form))) return signInForm({ next, error: "The form expired. Sign in again." }, 403);
            const rawEmail = (form.get("email") ?? "").slice(0, 254);
            const password = form.get("password") ?? "";
            const email = normalizeEmail(rawEmail) ?? rawEmail.trim().toLowerCase();
            const ip = clientIp(r);
            const failures = await recentFailures(db, email, ip);
            const wait = retryAfterSeconds(failures.byEmail, failures.byIp, new Date());
            if (wait > 0) {
              return signInForm({ email: rawEmail, next, error: `Too many failed sign-ins. Try again in ${wait} seconds.` }, 429, { "retry-after": String(wait) });
            }
            const found = await findUserByEmail(db, email);
            const user = await checkPassword(found, password);
            if (!user) {
              await recordSecurityEvent(db, { merchantId: found?.merchantId ?? null, userId: found?.id ?? null, email, ip }, "sign_in_failed");
              return signInForm({ email: rawEmail, next, error: "Wrong email or password." }, 401);
            }
            // The login and its security-history line commit together (logins.ts).
            const { token } = await signIn(db, user, ip);
            const headers = new Headers({ location: next ?? HOME, ...SECURITY_HEADERS });
            headers.append("set-cookie", loginCookie(token, secure));
            headers.append("set-cookie", preCookie("", 0));
            return new Response(null, { status: 303, headers });
          })(request),
        HIDE,
      )
      .post(
        "/dashboard/sign-out",
        actionRoute(async (c) => {
          await endLogin(db, c.login.tokenHash, c.actor());
          return redirect("/dashboard/sign-in?notice=signed-out", { "set-cookie": loginCookie("", secure, 0) });
        }),
        HIDE,
      )
      .get(
        "/dashboard/sign-up",
        ({ request }) =>
          guard(async () => {
            if (!services.config.dashboard.signUp) return errorPage(404, "Sign-up is off", "Accounts are created by your Paysession operator.");
            const csrf = newSecret();
            return page(signUpPage({ csrf }), 200, { "set-cookie": preCookie(csrf) });
          })(request),
        HIDE,
      )
      .post(
        "/dashboard/sign-up",
        ({ request }) =>
          guard(async (r) => {
            if (!services.config.dashboard.signUp) return errorPage(404, "Sign-up is off", "Accounts are created by your Paysession operator.");
            const form = await readForm(r);
            const again = (error: string, status: number) => {
              const csrf = newSecret();
              return page(signUpPage({ csrf, error, email: form.get("email") ?? "", name: form.get("name") ?? "" }), status, { "set-cookie": preCookie(csrf) });
            };
            if (!(await preOk(r, form))) return again("The form expired. Try again.", 403);
            const name = (form.get("name") ?? "").trim().slice(0, 100);
            if (!name) return again("Give your business a name.", 400);
            const email = normalizeEmail(form.get("email") ?? "");
            if (!email) return again("That is not an email address.", 400);
            if (await findUserByEmail(db, email)) return again("An account with that email exists. Sign in instead.", 409);
            // The merchant, its user, the login and its line: one transaction (sign-up.ts).
            let token: string;
            try {
              ({ token } = await signUp(db, { name, email, password: form.get("password") ?? "", ip: clientIp(r) }));
            } catch (e) {
              const refused = findInChain(e, (x) => x instanceof UserInputError);
              if (refused) return again(refused.message, 400);
              throw e;
            }
            return redirect(HOME, { "set-cookie": loginCookie(token, secure) });
          })(request),
        HIDE,
      )
      .get("/dashboard/:env", pageRoute(homePage(sql)), HIDE)
      // ---------------------------------------------------------------- transactions
      .get(
        "/dashboard/:env/transactions",
        pageRoute(async (c) => {
          const { filters, problems } = parseFilters(c.query);
          const owner = { merchantId: c.login.merchant.id, environment: c.env };
          // A cursor must be one of this account's sessions, or it would page by another's.
          const cursorId = c.query.after ?? c.query.before;
          const cursorOk = !cursorId || (isId("paymentSession", cursorId) && (await findSession(db, owner.merchantId, c.env, cursorId)) !== undefined);
          const cursor = cursorOk ? { after: c.query.after, before: c.query.before } : {};
          const page = await listTransactions(sql, owner, filters, cursor);
          const firstPage = !cursor.after && !cursor.before;
          const anyAtAll = page.rows.length > 0 || (await sql`select 1 from app.payment_sessions where merchant_id = ${owner.merchantId} and environment = ${c.env} limit 1`).length > 0;
          const deposits = await depositsOf(db, page.rows.map((r) => r.id));
          return c.render("transactions", "Transactions", transactionsBody({ env: c.env, filters, problems, page, deposits, firstPage, anyAtAll, apiHost: apiHost(c.env) }), cursorOk ? {} : { notice: { kind: "error", text: BAD_PAGE_LINK } });
        }),
        HIDE,
      )
      .get(
        "/dashboard/:env/transactions/rows",
        pageRoute(async (c) => {
          const { filters } = parseFilters(c.query);
          const page = await listTransactions(sql, { merchantId: c.login.merchant.id, environment: c.env }, filters);
          return new Response(rows(c.env, page, await depositsOf(db, page.rows.map((r) => r.id))).toString(), {
            headers: { "content-type": "text/html; charset=utf-8", ...SECURITY_HEADERS },
          });
        }),
        HIDE,
      )
      .get(
        "/dashboard/:env/transactions.csv",
        pageRoute(async (c) => {
          const { filters } = parseFilters(c.query);
          const owner = { merchantId: c.login.merchant.id, environment: c.env };
          // Streamed a keyset page at a time: an export of 100,000 rows never sits in memory whole.
          const pageAfter = async (after: string | undefined) => {
            const p = await listTransactions(sql, owner, filters, { after }, 1000);
            const rec = await reconciliationOf(sql, p.rows);
            return { lines: p.rows.map((r) => csvRow(r, rec.get(r.id))), next: p.next };
          };
          // The first page is read before the answer starts: a database that does not answer then
          // gets the 503 page, not a 200 whose download breaks off (a later page that fails can
          // only end the download short, which the browser reports as failed).
          let first: { lines: string[]; next: string | undefined } | undefined = await pageAfter(undefined);
          let after: string | undefined;
          const stream = new ReadableStream<string>({
            start(ctrl) {
              ctrl.enqueue(CSV_HEADER);
            },
            async pull(ctrl) {
              const p = first ?? (await pageAfter(after));
              first = undefined;
              for (const line of p.lines) ctrl.enqueue(line);
              after = p.next;
              if (!after) ctrl.close();
            },
          });
          return new Response(stream, {
            headers: {
              "content-type": "text/csv; charset=utf-8",
              "content-disposition": `attachment; filename="transactions-${c.env}.csv"`,
              ...SECURITY_HEADERS,
            },
          });
        }),
        HIDE,
      )
      .get(
        "/dashboard/:env/transactions/:id",
        pageRoute(async (c) => {
          const d = await loadDetail(services, c.login.merchant, c.env, c.params.id!);
          if (!d) return c.render("transactions", "Not found", html`<p>No payment session ${c.params.id} in this account's ${c.env}.</p>`, { status: 404 });
          return c.render("transactions", `Payment ${d.view.amount} ${d.view.currency}`, transactionBody(c.env, c.login, d), { notice: noticeOf(c.query) });
        }),
        HIDE,
      )
      .post(
        "/dashboard/:env/transactions/:id/sandbox/:tool",
        actionRoute(async (c) => {
          const run = SANDBOX_TOOL_RUNS.get(c.params.tool!);
          if (c.env !== "sandbox" || !run) return errorPage(404, "No such tool", "Sandbox tools exist only in the sandbox.");
          const res = await attempt(() => run(services, c.login.merchant, c.params.id!));
          if (!res.ok) return toolError(c, res.error.message, res.error.status);
          return redirect(`/dashboard/${c.env}/transactions/${c.params.id}?notice=tool-done`);
        }),
        HIDE,
      )
      .post(
        "/dashboard/:env/transactions/:id/events/:eventId/redeliver",
        actionRoute(async (c) => {
          // The event must belong to this session (and so to this merchant and environment).
          const d = await loadDetail(services, c.login.merchant, c.env, c.params.id!);
          if (!d || !d.events.some((e) => e.event.id === c.params.eventId)) return errorPage(404, "Not found", "No such event in this account.");
          const res = await attempt(() => redeliverEvent(services.database, owner(c), c.by(), c.params.eventId!));
          if (!res.ok) return toolError(c, res.error.message, res.error.status);
          return redirect(`/dashboard/${c.env}/transactions/${c.params.id}?notice=redelivered`);
        }),
        HIDE,
      )
      // A confirmation step, not a script's confirm(): it works under the CSP and without script.
      .get(
        "/dashboard/:env/transactions/:id/cancel",
        pageRoute(async (c) => {
          const d = await loadDetail(services, c.login.merchant, c.env, c.params.id!);
          if (!d) return c.render("transactions", "Not found", html`<p>No payment session ${c.params.id} in this account's ${c.env}.</p>`, { status: 404 });
          return c.render("transactions", "Cancel this payment?", cancelBody(c.env, c.login, d.view));
        }),
        HIDE,
      )
      .post(
        "/dashboard/:env/transactions/:id/cancel",
        actionRoute(async (c) => {
          if (!isId("paymentSession", c.params.id!)) return errorPage(404, "Not found", "No such payment session in this account.");
          // The API's own cancel: the same rule (only PENDING, nothing paid) and message; as the
          // person is named, its security-history line commits with the cancel (sessions/cancel.ts).
          const res = await attempt(() => cancelSession(services.database, owner(c), c.params.id!, c.by()));
          if (!res.ok) return toolError(c, res.error.message, res.error.status);
          return redirect(`/dashboard/${c.env}/transactions/${c.params.id}?notice=canceled`);
        }),
        HIDE,
      )
      // ---------------------------------------------------------------- events
      .get(
        "/dashboard/:env/events",
        pageRoute(async (c) => eventsPage(c, noticeOf(c.query))),
        HIDE,
      )
      .post(
        "/dashboard/:env/events/:eventId/redeliver",
        actionRoute(async (c) => {
          const back = parseEventFilters(Object.fromEntries(["type", "status", "session", "after"].map((k) => [k, c.form.get(k) ?? undefined])));
          const id = c.params.eventId!;
          if (!isId("event", id) || !(await findEvent(db, owner(c), id))) return errorPage(404, "Not found", "No such event in this account and environment.");
          const endpoint = (c.form.get("endpoint") ?? "").trim();
          const res = await attempt(() => redeliverEvent(services.database, owner(c), c.by(), id, endpoint || undefined));
          if (!res.ok) return eventsPage(c, { kind: "error", text: res.error.message }, res.error.status, back);
          return redirect(`/dashboard/${c.env}/events${eventsQuery(back.filters, { after: back.after, notice: "redelivered" })}`);
        }),
        HIDE,
      )
      // ---------------------------------------------------------------- settings: API keys
      .get(
        "/dashboard/:env/settings/api-keys",
        pageRoute(async (c) => {
          const flash = c.takeFlash();
          const shown = flash?.secret && { secret: flash.secret.value, name: flash.secret.label };
          return c.render("api-keys", "API keys", apiKeysBody(c.env, c.login, await envKeys(c), shown), { notice: noticeOf(c.query) });
        }),
        HIDE,
      )
      .post(
        "/dashboard/:env/settings/api-keys",
        actionRoute(async (c) => {
          const name = (c.form.get("name") ?? "").trim().slice(0, 100);
          if (!name) return c.render("api-keys", "API keys", apiKeysBody(c.env, c.login, await envKeys(c)), { status: 400, notice: { kind: "error", text: "Give the key a name." } });
          // Its security-history line commits with it (credentials/store.ts).
          const { secret } = await createApiKey(db, c.login.merchant.id, c.env, name, c.by());
          // The secret is shown once, on the page this redirects to (a sealed one-time flash).
          return c.redirectWith(`/dashboard/${c.env}/settings/api-keys`, { secret: { value: secret, label: name } });
        }),
        HIDE,
      )
      .post(
        "/dashboard/:env/settings/api-keys/:keyId/revoke",
        actionRoute(async (c) => {
          const key = (await envKeys(c)).find((k) => k.id === c.params.keyId);
          const revoked = key && !key.revokedAt ? await revokeApiKey(db, c.login.merchant.id, key.id, c.by()) : undefined;
          if (!revoked) return errorPage(404, "Not found", "No such active key in this account and environment.");
          return redirect(`/dashboard/${c.env}/settings/api-keys?notice=key-revoked`);
        }),
        HIDE,
      )
      // ---------------------------------------------------------------- settings: webhooks
      // Each change is the API's own function (webhooks/endpoint-actions.ts), with the form checked
      // against the API's body schema (the same messages); its security-history line, naming the
      // person, commits with the change.
      .get(
        "/dashboard/:env/settings/webhooks",
        pageRoute(async (c) => {
          const flash = c.takeFlash();
          const shown = flash?.secret && { secret: flash.secret.value, url: flash.secret.label };
          return c.render("webhooks", "Webhooks", webhooksBody(c.env, c.login, await listEndpoints(db, owner(c)), shown), { notice: noticeOf(c.query) });
        }),
        HIDE,
      )
      .post(
        "/dashboard/:env/settings/webhooks",
        actionRoute(async (c) => {
          const description = (c.form.get("description") ?? "").trim();
          const input = { url: (c.form.get("url") ?? "").trim(), ...(description ? { description } : {}) };
          const res = await attempt(() => createWebhookEndpoint(services, owner(c), c.by(), validateBody(CreateWebhookEndpointBody, input)));
          if (!res.ok) {
            const list = await listEndpoints(db, owner(c));
            return c.render("webhooks", "Webhooks", webhooksBody(c.env, c.login, list), { status: res.error.status, notice: { kind: "error", text: res.error.message } });
          }
          return c.redirectWith(`/dashboard/${c.env}/settings/webhooks`, { secret: { value: res.value.secret, label: res.value.endpoint.url } });
        }),
        HIDE,
      )
      .get(
        "/dashboard/:env/settings/webhooks/:id",
        pageRoute(async (c) => {
          const e = isId("webhookEndpoint", c.params.id!) ? await findEndpoint(db, owner(c), c.params.id!) : undefined;
          if (!e || e.deletedAt) return c.render("webhooks", "Not found", html`<p>No such webhook endpoint in this account's ${c.env}.</p>`, { status: 404 });
          const flash = c.takeFlash();
          return endpointPage(c, flash?.notice ?? noticeOf(c.query), 200, flash?.secret?.value);
        }),
        HIDE,
      )
      .post(
        "/dashboard/:env/settings/webhooks/:id",
        actionRoute(async (c) => {
          const input = { url: (c.form.get("url") ?? "").trim(), description: (c.form.get("description") ?? "").trim(), enabled: c.form.get("enabled") === "true" };
          const res = await attempt(() => updateWebhookEndpoint(services, owner(c), c.by(), c.params.id!, validateBody(UpdateWebhookEndpointBody, input)));
          if (!res.ok) return endpointPage(c, { kind: "error", text: res.error.message }, res.error.status);
          return redirect(`/dashboard/${c.env}/settings/webhooks/${res.value.id}?notice=endpoint-saved`);
        }),
        HIDE,
      )
      .post(
        "/dashboard/:env/settings/webhooks/:id/:op",
        actionRoute(async (c) => {
          const raw = c.params.id!;
          const id = encodeURIComponent(raw);
          const refused = (e: { message: string; status: number }) => endpointPage(c, { kind: "error", text: e.message }, e.status);
          switch (c.params.op) {
            case "reveal": {
              const res = await attempt(() => revealWebhookSecret(services, owner(c), c.by(), raw));
              if (!res.ok) return refused(res.error);
              return c.redirectWith(`/dashboard/${c.env}/settings/webhooks/${id}`, { secret: { value: res.value.secret, label: raw } });
            }
            case "rotate": {
              const res = await attempt(() => rotateWebhookSecret(services, owner(c), c.by(), raw));
              if (!res.ok) return refused(res.error);
              return redirect(`/dashboard/${c.env}/settings/webhooks/${id}?notice=secret-rotated`);
            }
            case "test": {
              const res = await attempt(() => sendTestEvent(services, owner(c), raw));
              if (!res.ok) return refused(res.error);
              const a = res.value.attempt;
              const text = a.succeeded ? `Test event delivered (HTTP ${a.statusCode}).` : `Test event not accepted: ${a.statusCode ? `HTTP ${a.statusCode}` : (a.error ?? "no answer")}.`;
              return c.redirectWith(`/dashboard/${c.env}/settings/webhooks/${id}`, { notice: { kind: a.succeeded ? "ok" : "error", text } });
            }
            case "delete": {
              const res = await attempt(() => deleteWebhookEndpoint(services, owner(c), c.by(), raw));
              if (!res.ok) return refused(res.error);
              return redirect(`/dashboard/${c.env}/settings/webhooks?notice=endpoint-deleted`);
            }
            default:
              return errorPage(404, "No such action", "Nothing here.");
          }
        }),
        HIDE,
      )
      // ---------------------------------------------------------------- settings: settlement
      .get(
        "/dashboard/:env/settings/settlement",
        pageRoute(async (c) => settlementPage(c, noticeOf(c.query))),
        HIDE,
      )
      .post(
        "/dashboard/:env/settings/settlement/:chainId",
        actionRoute(async (c) => {
          // The most sensitive act in the product: the password again, whoever holds the session.
          const user = await checkPassword(c.login.user, c.form.get("password") ?? "");
          if (!user) {
            await recordSecurityEvent(db, c.actor(), "settlement_address_change_refused", { chainId: c.params.chainId }, c.env);
            return settlementPage(c, { kind: "error", text: "Wrong password: the settlement address was not changed." }, 403);
          }
          // The API's own change (webhooks/settlement-addresses.ts): it records the change in the
          // security history and writes its webhook event in the change's own transaction, naming this user.
          const body = { address: (c.form.get("address") ?? "").trim() };
          const res = await attempt(() => setSettlementAddress(services, c.login.merchant, c.env, c.by(), { chainId: c.params.chainId!, ...validateBody(SettlementAddressBody, body) }));
          if (!res.ok) {
            const text = res.error.code === "address_checksum_invalid" ? "That address's checksum is wrong (a typo?). Copy it again from your wallet; nothing was changed." : res.error.message;
            return settlementPage(c, { kind: "error", text }, res.error.status);
          }
          return redirect(`/dashboard/${c.env}/settings/settlement?notice=settlement-changed`);
        }),
        HIDE,
      )
      // ---------------------------------------------------------------- settings: security history
      .get(
        "/dashboard/:env/settings/security",
        pageRoute(async (c) => {
          const before = c.query.before && isId("securityEvent", c.query.before) ? c.query.before : undefined;
          const { rows: events, hasMore } = await listSecurityEvents(db, c.login.merchant.id, 50, before);
          return c.render("security", "Security history", securityBody(c.env, events, hasMore ? events.at(-1)?.id : undefined));
        }),
        HIDE,
      )
  );

  function owner(c: { login: { merchant: { id: string } }; env: "sandbox" | "production" }) {
    return { merchantId: c.login.merchant.id, environment: c.env };
  }
  async function envKeys(c: { login: { merchant: { id: string } }; env: string }) {
    return (await listApiKeys(db, c.login.merchant.id)).filter((k) => k.environment === c.env);
  }
  async function toolError(c: ActionContext, message: string, status: number) {
    const d = await loadDetail(services, c.login.merchant, c.env, c.params.id!);
    if (!d) return errorPage(404, "Not found", "No such payment session in this account.");
    return c.render("transactions", `Payment ${d.view.amount} ${d.view.currency}`, transactionBody(c.env, c.login, d), { status, notice: { kind: "error", text: message } });
  }
  async function eventsPage(c: Parameters<Parameters<typeof pageRoute>[0]>[0], notice?: Notice, status = 200, parsed = parseEventFilters(c.query)) {
    // A cursor must be one of this account's events (as the endpoint's attempts page checks its own).
    if (parsed.after && !(await ownsEvent(db, owner(c), parsed.after))) {
      parsed = { ...parsed, after: undefined };
      notice ??= { kind: "error", text: BAD_PAGE_LINK };
    }
    const page = await listEventLines(db, owner(c), parsed.filters, parsed.after);
    const endpoints = new Map((await listEndpoints(db, owner(c))).map((e) => [e.id, e]));
    const body = eventsBody({ env: c.env, login: c.login, filters: parsed.filters, cursor: parsed.after, problems: parsed.problems, page, endpoints });
    return c.render("events", "Events", body, { notice, status });
  }
  async function endpointPage(c: Parameters<Parameters<typeof pageRoute>[0]>[0], notice: Notice | undefined, status = 200, secret?: string) {
    const e = isId("webhookEndpoint", c.params.id!) ? await findEndpoint(db, owner(c), c.params.id!) : undefined;
    if (!e || e.deletedAt) return errorPage(404, "Not found", "No such webhook endpoint in this account and environment.");
    // Every attempt, a page at a time (keyset: ?after= the last attempt shown); a bad cursor is said, not a 500.
    const raw = c.query.after;
    const cursor = raw && isId("webhookAttempt", raw) && (await attemptExists(db, owner(c), raw)) ? raw : undefined;
    if (raw && !cursor) notice ??= { kind: "error", text: BAD_PAGE_LINK };
    const page = await listAttempts(db, { ...owner(c), endpointId: e.id, limit: ATTEMPTS_PAGE_SIZE, startingAfter: cursor });
    const older = page.hasMore ? page.rows.at(-1)?.id : undefined;
    return c.render("webhooks", "Webhook endpoint", webhookBody(c.env, c.login, e, { rows: page.rows, older, paged: !!cursor }, secret), { notice, status });
  }
  async function settlementPage(c: Parameters<Parameters<typeof pageRoute>[0]>[0], notice?: Notice, status = 200) {
    const lines = await settlementAddresses(services, c.login.merchant.id, c.env);
    return c.render("settlement", "Settlement", settlementBody(c.env, c.login, lines), { notice, status });
  }
}

export type { Filters };
