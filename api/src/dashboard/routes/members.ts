/**
 * Settings, Members (dashboard/members.ts): invite, revoke an invitation, change a role, remove,
 * transfer ownership — Owner and Administrator only (the "members" permission, checked for every
 * route by context.ts); the finer rules (never above one's own rank, the last owner) in members.ts.
 * And the invitation page its emailed link opens, before sign-in (a pre-session form).
 */
import { Elysia } from "elysia";
import { isId, newSecret } from "../../../../shared/ids.ts";
import { findInChain } from "../../../../shared/error-chain.ts";
import type { PageContext } from "../context.ts";
import type { Notice } from "../layout.ts";
import { loginCookie } from "../logins.ts";
import { acceptInvitation, changeRole, invite, listMembers, MemberError, openInvitation, removeMember, revokeInvitation, transferOwnership, type MemberActor } from "../members.ts";
import { invitationDeadPage, invitationPage, membersBody } from "../pages/members.ts";
import { ROLES, type Role } from "../permissions.ts";
import { clientIp, currentLogin, page, readForm, redirect } from "../request.ts";
import { hashNewPassword, normalizeEmail, UserInputError } from "../users.ts";
import { preSession } from "./pre-session.ts";
import { HIDE, HOME, noticeOf, type DashboardKit } from "./kit.ts";

export function memberRoutes({ services, sql, secure, pageRoute, actionRoute, guard }: DashboardKit) {
  const dashboardUrl = new URL("dashboard", services.config.publicUrl).href;
  const { preCookie, preOk } = preSession(secure);
  const base = (c: PageContext) => `/dashboard/${c.env}/settings/members`;
  const actorOf = (c: PageContext): MemberActor => ({ userId: c.login.user.id, merchantId: c.login.merchant.id, role: c.login.user.role as Role, actor: c.actor() });

  async function membersPage(c: PageContext, notice?: Notice, status = 200) {
    const team = await listMembers(sql, c.login.merchant.id);
    return c.render("members", "Members", membersBody(c.env, c.login, team, services.mailMode === "off"), { notice, status });
  }
  /** Runs a change; its refusal is shown on the page with its status, anything else thrown. */
  async function change(c: PageContext, run: () => Promise<void>, done: string) {
    try {
      await run();
    } catch (e) {
      const refused = findInChain(e, (x) => x instanceof MemberError);
      if (refused) return membersPage(c, { kind: "error", text: refused.message }, refused.status);
      throw e;
    }
    return redirect(`${base(c)}?notice=${done}`);
  }
  const roleOf = (raw: string | null): Role | undefined => ROLES.find((r) => r === raw);
  const member = (c: PageContext) => (isId("dashboardUser", c.params.userId ?? "") ? c.params.userId! : "");

  function joinForm(token: string, invitation: NonNullable<Awaited<ReturnType<typeof openInvitation>>>, error?: string, status = 200) {
    const csrf = newSecret();
    return page(invitationPage({ csrf, token, invitation, error }), status, { "set-cookie": preCookie(csrf), "referrer-policy": "no-referrer" });
  }

  return new Elysia()
    .get(
      "/dashboard/:env/settings/members",
      pageRoute(async (c) => membersPage(c, noticeOf(c.query))),
      HIDE,
    )
    .post(
      "/dashboard/:env/settings/members/invite",
      actionRoute(async (c) => {
        if (services.mailMode === "off") return membersPage(c, { kind: "error", text: "This Paysession sends no mail, so it cannot send invitations." }, 409);
        const email = normalizeEmail(c.form.get("email") ?? "");
        if (!email) return membersPage(c, { kind: "error", text: "That is not an email address." }, 400);
        const role = roleOf(c.form.get("role"));
        if (!role) return membersPage(c, { kind: "error", text: "Choose a role." }, 400);
        // A new administrator could keep access after a stolen session ends: a fresh second factor first.
        if (role === "admin") {
          const stepUp = c.stepUp(base(c));
          if (stepUp) return stepUp;
        }
        return change(c, () => invite(sql, actorOf(c), { email, role, merchantName: c.login.merchant.name, encryptionKey: services.encryptionKey, dashboardUrl }), "invitation-sent");
      }),
      HIDE,
    )
    .post(
      "/dashboard/:env/settings/members/invitations/:invitationId/revoke",
      actionRoute(async (c) => {
        const id = isId("invitation", c.params.invitationId ?? "") ? c.params.invitationId! : "";
        return change(c, () => revokeInvitation(sql, actorOf(c), id), "invitation-revoked");
      }),
      HIDE,
    )
    .post(
      "/dashboard/:env/settings/members/:userId/role",
      actionRoute(async (c) => {
        const role = roleOf(c.form.get("role"));
        if (!role) return membersPage(c, { kind: "error", text: "Choose a role." }, 400);
        const stepUp = c.stepUp(base(c));
        if (stepUp) return stepUp;
        return change(c, () => changeRole(sql, actorOf(c), member(c), role), "role-changed");
      }),
      HIDE,
    )
    .post(
      "/dashboard/:env/settings/members/:userId/remove",
      actionRoute(async (c) => {
        const self = member(c) === c.login.user.id;
        const res = await change(c, () => removeMember(sql, actorOf(c), member(c)), "member-removed");
        // Leaving: the person's own session went with them.
        return self && res.status === 303 ? redirect("/dashboard/sign-in?notice=signed-out", { "set-cookie": loginCookie("", secure, 0) }) : res;
      }),
      HIDE,
    )
    .post(
      "/dashboard/:env/settings/members/:userId/transfer-ownership",
      actionRoute(async (c) => c.stepUp(base(c)) ?? change(c, () => transferOwnership(sql, actorOf(c), member(c)), "ownership-transferred")),
      HIDE,
    )
    .get(
      "/dashboard/invitations/:token",
      ({ request, params }) =>
        guard(async (r) => {
          const inv = await openInvitation(sql, params.token);
          if (!inv) return page(invitationDeadPage("It was used, revoked or has expired. Ask the person who invited you for a new one."), 410);
          const signedIn = await currentLogin(services, r);
          if (signedIn) {
            return page(invitationDeadPage(`This invitation is for ${inv.email}; you are signed in as ${signedIn.user.email}. A person belongs to one account: sign out, or ask for an invitation to the email you use.`), 403);
          }
          return joinForm(params.token, inv);
        })(request),
      HIDE,
    )
    .post(
      "/dashboard/invitations/:token",
      ({ request, params }) =>
        guard(async (r) => {
          const inv = await openInvitation(sql, params.token);
          if (!inv) return page(invitationDeadPage("It was used, revoked or has expired. Ask the person who invited you for a new one."), 410);
          const form = await readForm(r);
          if (!preOk(r, form)) return joinForm(params.token, inv, "The form expired. Try again.", 403);
          if (await currentLogin(services, r)) return page(invitationDeadPage(`This invitation is for ${inv.email}. Sign out first.`), 403);
          const password = form.get("password") ?? "";
          if (password !== (form.get("confirm") ?? "")) return joinForm(params.token, inv, "The two passwords differ. Type the same one twice.", 400);
          let hash: string;
          try {
            hash = await hashNewPassword(password);
          } catch (e) {
            const refused = findInChain(e, (x) => x instanceof UserInputError);
            if (refused) return joinForm(params.token, inv, refused.message, 400);
            throw e;
          }
          try {
            const { token } = await acceptInvitation(sql, params.token, { passwordHash: hash, ip: clientIp(r), userAgent: r.headers.get("user-agent") });
            return redirect(HOME, { "set-cookie": loginCookie(token, secure) });
          } catch (e) {
            const refused = findInChain(e, (x) => x instanceof MemberError);
            if (refused) return page(invitationDeadPage(refused.message), refused.status);
            throw e;
          }
        })(request),
      HIDE,
    );
}
