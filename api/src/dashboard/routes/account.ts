/**
 * Settings, Your account: change the password (the current one asked again; every other device
 * signed out, this one kept signed in through a fresh login; the line and its mailed notice in
 * the same transaction) and the person's devices, with "sign out every other device".
 */
import { Elysia } from "elysia";
import { findInChain } from "../../../../shared/error-chain.ts";
import { securityEventStatement } from "../../credentials/security-history.ts";
import { endOtherLogins, loginCookie, loginsOf, startLoginIn } from "../logins.ts";
import type { PageContext } from "../context.ts";
import type { Notice } from "../layout.ts";
import { accountBody } from "../pages/account.ts";
import { clientIp, redirect } from "../request.ts";
import { checkPassword, hashNewPassword, replacePassword, UserInputError } from "../users.ts";
import { HIDE, noticeOf, type DashboardKit } from "./kit.ts";

export function accountRoutes({ db, sql, secure, pageRoute, actionRoute }: DashboardKit) {
  async function accountPage(c: PageContext, notice?: Notice, status = 200) {
    const devices = (await loginsOf(db, c.login.user.id)).map((d) => ({ ...d, current: d.tokenHash === c.login.tokenHash }));
    return c.render("account", "Your account", accountBody(c.env, c.login, devices), { notice, status });
  }
  return new Elysia()
    .get(
      "/dashboard/:env/settings/account",
      pageRoute(async (c) => accountPage(c, noticeOf(c.query))),
      HIDE,
    )
    .post(
      "/dashboard/:env/settings/account/password",
      actionRoute(async (c) => {
        const refuse = (text: string, status = 400) => accountPage(c, { kind: "error", text }, status);
        if (!(await checkPassword(c.login.user, c.form.get("current") ?? ""))) return refuse("The current password is wrong. Nothing changed.", 403);
        const password = c.form.get("password") ?? "";
        if (password !== (c.form.get("confirm") ?? "")) return refuse("The two new passwords differ. Type the same one twice.");
        let hash: string;
        try {
          hash = await hashNewPassword(password);
        } catch (e) {
          const refused = findInChain(e, (x) => x instanceof UserInputError);
          if (refused) return refuse(refused.message);
          throw e;
        }
        const actor = c.actor();
        // One transaction: the new hash, every login ended, this browser's new login, the line (its trigger mails the notice).
        const { token } = await sql.begin(async (tx) => {
          await replacePassword(tx, c.login.user.id, hash);
          const fresh = await startLoginIn(tx, c.login.user.id, clientIp(c.request), c.request.headers.get("user-agent"));
          await securityEventStatement(tx, actor, "password_changed", { via: "dashboard" });
          return fresh;
        });
        return redirect(`/dashboard/${c.env}/settings/account?notice=password-changed`, { "set-cookie": loginCookie(token, secure) });
      }),
      HIDE,
    )
    .post(
      "/dashboard/:env/settings/account/sign-out-others",
      actionRoute(async (c) => {
        const ended = await endOtherLogins(db, c.login, c.actor());
        return redirect(`/dashboard/${c.env}/settings/account?notice=${ended ? "signed-out-others" : "no-other-devices"}`);
      }),
      HIDE,
    );
}
