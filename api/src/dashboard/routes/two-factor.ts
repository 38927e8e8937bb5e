/**
 * Two-factor sign-in (dashboard/two-factor.ts): the code page a login waiting for its second factor
 * opens (and any login before a sensitive action: a "step-up"); enrolling, turning off, and the
 * owner's "require it of everyone". The code page is not a pageRoute: a waiting login may open
 * nothing else, so it checks the session and its CSRF token here.
 */
import { Elysia } from "elysia";
import { securityEventStatement } from "../../credentials/security-history.ts";
import { errorPage, type PageContext } from "../context.ts";
import type { Notice } from "../layout.ts";
import { passedSecondFactor } from "../logins.ts";
import { passkeysSection, secondFactorPage, twoFactorBody } from "../pages/two-factor.ts";
import { clientIp, csrfProblem, currentLogin, page, readForm, redirect, SECURITY_HEADERS } from "../request.ts";
import { checkPassword } from "../users.ts";
import { checkSecondFactor, confirmEnrollment, disableTwoFactor, enrollmentSecret, secondFactorWait, twoFactorState } from "../two-factor.ts";
import { authenticationOptions, checkPasskey, passkeysOf, registerPasskey, registrationOptions, relyingPartyOf, removePasskey } from "../passkeys.ts";
import { html } from "../html.ts";
import { HIDE, HOME, noticeOf, type DashboardKit } from "./kit.ts";
import { safeNext } from "./pre-session.ts";


export function twoFactorRoutes({ services, db, sql, pageRoute, actionRoute, guard }: DashboardKit) {
  const key = services.encryptionKey;

  async function enrollPage(c: PageContext, opts: { notice?: Notice; status?: number; recoveryCodes?: string[]; error?: string } = {}) {
    const state = await twoFactorState(sql, c.login.user.id);
    const enroll = state.enabled || opts.recoveryCodes ? undefined : await enrollmentSecret(sql, key, c.login.user);
    const body = html`${twoFactorBody(c.env, c.login, state, enroll, opts.recoveryCodes, opts.error)}${opts.recoveryCodes ? "" : passkeysSection(c.env, c.login, await passkeysOf(sql, c.login.user.id))}`;
    return c.render("account", "Two-factor sign-in", body, { notice: opts.notice, status: opts.status });
  }

  /** The passkey ceremony's own posts (no pageRoute: a login waiting for its factor uses them): signed in, same origin, the session's token. */
  const passkeyForms = new WeakMap<Request, URLSearchParams>();
  async function signedInWithCsrf(r: Request) {
    const login = await currentLogin(services, r);
    if (!login) return errorPage(401, "Signed out", "Your session has ended. Sign in again.");
    const form = await readForm(r);
    const problem = csrfProblem(r, form, login.csrfToken);
    if (problem) return errorPage(403, "Refused", problem);
    passkeyForms.set(r, form);
    return login;
  }
  const json = (v: unknown) => new Response(JSON.stringify(v), { headers: { "content-type": "application/json", ...SECURITY_HEADERS } });
  const parseJson = (raw: string | null) => {
    try {
      return JSON.parse(raw ?? "null");
    } catch {
      return null;
    }
  };

  return new Elysia()
    .get(
      "/dashboard/two-factor",
      ({ request, query }) =>
        guard(async (r) => {
          const login = await currentLogin(services, r);
          if (!login) return redirect("/dashboard/sign-in");
          if (!login.twoFactor) return redirect(safeNext(query.next) ?? HOME);
          const state = await twoFactorState(sql, login.user.id);
          return page(secondFactorPage({ csrf: login.csrfToken, next: safeNext(query.next), stepUp: !login.awaitingSecondFactor, totp: state.enabled, passkeys: state.passkeys }));
        })(request),
      HIDE,
    )
    .post(
      "/dashboard/two-factor",
      ({ request }) =>
        guard(async (r) => {
          const login = await currentLogin(services, r);
          if (!login) return errorPage(401, "Signed out", "Your session has ended. Sign in again.");
          const form = await readForm(r);
          const problem = csrfProblem(r, form, login.csrfToken);
          if (problem) return errorPage(403, "Refused", problem);
          const next = safeNext(form.get("next"));
          const state = await twoFactorState(sql, login.user.id);
          const again = (error: string, status: number, headers: Record<string, string> = {}) =>
            page(secondFactorPage({ csrf: login.csrfToken, next, error, stepUp: !login.awaitingSecondFactor, totp: state.enabled, passkeys: state.passkeys }), status, headers);
          const actor = { merchantId: login.merchant.id, userId: login.user.id, email: login.user.email, ip: clientIp(r) };
          const checked = await checkSecondFactor(sql, key, login.user, (form.get("code") ?? "").slice(0, 32), actor, login.awaitingSecondFactor ? "sign_in" : "step_up");
          if (checked.ok === false && checked.retryAfterSeconds) {
            const wait = checked.retryAfterSeconds;
            return again(`Too many wrong codes. Try again in ${wait} seconds.`, 429, { "retry-after": String(wait) });
          }
          if (!checked.ok) return again("That code is not right, or it was used already. Wait for the next one.", 401);
          await passedSecondFactor(db, login.tokenHash);
          return redirect(next ?? HOME);
        })(request),
      HIDE,
    )
    .post(
      "/dashboard/two-factor/passkey/options",
      ({ request }) =>
        guard(async (r) => {
          const login = await signedInWithCsrf(r);
          if (login instanceof Response) return login;
          return json(await authenticationOptions(sql, relyingPartyOf(r), login));
        })(request),
      HIDE,
    )
    .post(
      "/dashboard/two-factor/passkey",
      ({ request }) =>
        guard(async (r) => {
          const login = await signedInWithCsrf(r);
          if (login instanceof Response) return login;
          const form = passkeyForms.get(r)!;
          const next = safeNext(form.get("next"));
          const actor = { merchantId: login.merchant.id, userId: login.user.id, email: login.user.email, ip: clientIp(r) };
          const wait = await secondFactorWait(sql, login.user.email);
          if (wait > 0) return errorPage(429, "Slow down", `Too many failed tries. Try again in ${wait} seconds.`, { "retry-after": String(wait) });
          const ok = await checkPasskey(sql, relyingPartyOf(r), login, parseJson(form.get("response")), actor, login.awaitingSecondFactor ? "sign_in" : "step_up");
          if (!ok) return errorPage(401, "Passkey not accepted", "That passkey did not verify. Try again, or use a code.");
          await passedSecondFactor(db, login.tokenHash);
          return redirect(next ?? HOME);
        })(request),
      HIDE,
    )
    .post(
      "/dashboard/:env/settings/account/passkeys/options",
      actionRoute(async (c) => json(await registrationOptions(sql, relyingPartyOf(c.request), c.login))),
      HIDE,
    )
    .post(
      "/dashboard/:env/settings/account/passkeys",
      actionRoute(async (c) => {
        const name = (c.form.get("name") ?? "").trim().slice(0, 60) || "Passkey";
        const ok = await registerPasskey(sql, relyingPartyOf(c.request), c.login, parseJson(c.form.get("response")), name, c.actor());
        if (!ok) return enrollPage(c, { notice: { kind: "error", text: "The passkey could not be verified: nothing was added. Try again." }, status: 400 });
        // Adding it is a second factor passed: this login just used the authenticator.
        await passedSecondFactor(db, c.login.tokenHash);
        return redirect(`/dashboard/${c.env}/settings/account/two-factor?notice=passkey-added`);
      }),
      HIDE,
    )
    .post(
      "/dashboard/:env/settings/account/passkeys/:passkeyId/remove",
      actionRoute(async (c) => {
        const id = c.params.passkeyId ?? "";
        // A credential id is base64url; anything else (or another person's) is no passkey of yours.
        if (!/^[A-Za-z0-9_-]{1,1024}$/.test(id)) return errorPage(404, "No such passkey", "That passkey is not one of yours.");
        const stepUp = c.stepUp(`/dashboard/${c.env}/settings/account/two-factor`);
        if (stepUp) return stepUp;
        if (!(await removePasskey(sql, c.login.user.id, id, c.actor()))) return errorPage(404, "No such passkey", "That passkey is not one of yours.");
        return redirect(`/dashboard/${c.env}/settings/account/two-factor?notice=passkey-removed`);
      }),
      HIDE,
    )
    .get(
      "/dashboard/:env/settings/account/two-factor",
      pageRoute(async (c) => enrollPage(c, { notice: noticeOf(c.query) })),
      HIDE,
    )
    .post(
      "/dashboard/:env/settings/account/two-factor",
      actionRoute(async (c) => {
        const codes = await confirmEnrollment(sql, key, c.login.user, (c.form.get("code") ?? "").slice(0, 16), c.actor());
        if (!codes) return enrollPage(c, { error: "That code does not match. Check the app shows Paysession, wait for a new code, and type it.", status: 400 });
        // The enrolling login counts as having passed it: it just did.
        await passedSecondFactor(db, c.login.tokenHash);
        return enrollPage({ ...c, login: { ...c.login, twoFactor: true } }, { recoveryCodes: codes });
      }),
      HIDE,
    )
    .post(
      "/dashboard/:env/settings/account/two-factor/disable",
      actionRoute(async (c) => {
        if (c.login.requireTwoFactor) return enrollPage(c, { notice: { kind: "error", text: "Your account requires two-factor sign-in: it stays on." }, status: 409 });
        if (!(await checkPassword(c.login.user, c.form.get("password") ?? ""))) return enrollPage(c, { notice: { kind: "error", text: "The password is wrong. Nothing changed." }, status: 403 });
        const checked = await checkSecondFactor(sql, key, c.login.user, (c.form.get("code") ?? "").slice(0, 32), c.actor(), "step_up");
        if (!checked.ok) {
          const text = checked.retryAfterSeconds ? `Too many wrong codes. Try again in ${checked.retryAfterSeconds} seconds. Nothing changed.` : "That code is not right. Nothing changed.";
          return enrollPage(c, { notice: { kind: "error", text }, status: checked.retryAfterSeconds ? 429 : 403 });
        }
        await disableTwoFactor(sql, c.login.user.id, c.actor());
        return redirect(`/dashboard/${c.env}/settings/account?notice=two-factor-off`);
      }),
      HIDE,
    )
    .post(
      "/dashboard/:env/settings/members/require-two-factor",
      actionRoute(async (c) => {
        if (c.login.user.role !== "owner") return errorPage(403, "Not allowed for your role", "Only an owner decides whether two-factor sign-in is required.");
        const on = c.form.get("required") === "true";
        // Lifting the requirement weakens every member's sign-in: a fresh second factor first.
        if (!on) {
          const stepUp = c.stepUp(`/dashboard/${c.env}/settings/members`);
          if (stepUp) return stepUp;
        }
        if (on && !c.login.twoFactor) return redirect(`/dashboard/${c.env}/settings/account/two-factor?notice=two-factor-yourself-first`);
        await sql.begin(async (tx) => {
          await tx`update app.merchants set require_two_factor = ${on} where id = ${c.login.merchant.id}`;
          await securityEventStatement(tx, c.actor(), "two_factor_required_changed", { required: on });
        });
        return redirect(`/dashboard/${c.env}/settings/members?notice=${on ? "two-factor-required-on" : "two-factor-required-off"}`);
      }),
      HIDE,
    );
}
