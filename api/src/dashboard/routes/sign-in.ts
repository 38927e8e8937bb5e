/**
 * Signing in, out and up. Sign-in and sign-up have no session yet, so their forms carry a CSRF
 * token of their own, matched against a pre-session cookie (double submit); the sign-in is
 * throttled per email and per address (credentials/sign-in-throttle.ts), and every failure is a
 * line of the security history.
 */
import { Elysia } from "elysia";
import { newSecret } from "../../../../shared/ids.ts";
import { findInChain } from "../../../../shared/error-chain.ts";
import { recentFailures, recordSecurityEvent } from "../../credentials/security-history.ts";
import { retryAfterSeconds } from "../../credentials/sign-in-throttle.ts";
import { errorPage } from "../context.ts";
import { endLogin, loginCookie, signIn } from "../logins.ts";
import { preSession, safeNext } from "./pre-session.ts";
import { signInPage, signUpPage } from "../pages/sign-in.ts";
import { clientIp, currentLogin, page, readForm, redirect, SECURITY_HEADERS } from "../request.ts";
import { signUp } from "../sign-up.ts";
import { twoFactorState } from "../two-factor.ts";
import { checkPassword, findUserByEmail, normalizeEmail, UserInputError } from "../users.ts";
import { HIDE, HOME, SIGNED_OUT, type DashboardKit } from "./kit.ts";

const PASSWORD_RESET = "Your password is set. Sign in with it; every other device was signed out.";


export function signInRoutes({ services, db, secure, actionRoute, guard }: DashboardKit) {
  const { preCookie, preOk } = preSession(secure);

  /** The sign-in form with a fresh pre-session CSRF token (double submit: cookie and field). */
  function signInForm(args: { email?: string; error?: string; next?: string; notice?: string }, status = 200, extra: Record<string, string> = {}) {
    const csrf = newSecret();
    return page(signInPage({ csrf, signUp: services.config.dashboard.signUp, ...args }), status, { "set-cookie": preCookie(csrf), ...extra });
  }
  return new Elysia()
    .get(
      "/dashboard/sign-in",
      ({ request, query }) =>
        guard(async (r) => {
          if (await currentLogin(services, r)) return redirect(safeNext(query.next) ?? HOME);
          const notice = query.notice === "signed-out" ? SIGNED_OUT : query.notice === "password-reset" ? PASSWORD_RESET : undefined;
          return signInForm({ next: safeNext(query.next), notice });
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
          // The login and its security-history line commit together (logins.ts). With a second
          // factor, the login waits for it: only the two-factor page opens until it is given.
          const factors = await twoFactorState(services.database.sql, user.id);
          const awaiting = factors.enabled || factors.passkeys > 0;
          const { token } = await signIn(db, user, ip, r.headers.get("user-agent"), awaiting);
          const to = awaiting ? `/dashboard/two-factor${next ? `?next=${encodeURIComponent(next)}` : ""}` : (next ?? HOME);
          const headers = new Headers({ location: to, ...SECURITY_HEADERS });
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
            ({ token } = await signUp(db, { name, email, password: form.get("password") ?? "", ip: clientIp(r), userAgent: r.headers.get("user-agent") }));
          } catch (e) {
            const refused = findInChain(e, (x) => x instanceof UserInputError);
            if (refused) return again(refused.message, 400);
            throw e;
          }
          return redirect(HOME, { "set-cookie": loginCookie(token, secure) });
        })(request),
      HIDE,
    );
}
