/** Settings, Members (the team and its roles) and the invitation page a link opens. */
import type { Environment } from "../../../../shared/environment.ts";
import { bare, csrfField } from "../layout.ts";
import { html, type Html } from "../html.ts";
import { timeTag } from "../format.ts";
import type { Login } from "../logins.ts";
import type { Member, OpenInvitation, PendingInvitation } from "../members.ts";
import { INVITATION_DAYS } from "../members.ts";
import { invitableRoles, MATRIX, mayChangeRole, PERMISSIONS, ROLE_NAMES, ROLES, type Role } from "../permissions.ts";
import { MIN_PASSWORD_LENGTH } from "../users.ts";

export function membersBody(env: Environment, login: Login, team: { members: Member[]; invitations: PendingInvitation[] }, mailOff: boolean): Html {
  const me = login.user.role as Role;
  const base = `/dashboard/${env}/settings/members`;
  const roleOptions = (roles: Role[], selected?: Role) => roles.map((r) => html`<option value="${r}"${r === selected ? html` selected` : ""}>${ROLE_NAMES[r]}</option>`);
  return html`
<section class="card"><h2 class="h3">Invite someone</h2>
${
  mailOff
    ? html`<div class="notice error" role="alert">This Paysession sends no mail (no <code>SERVICE_SMTP_URL</code> with a production network), so it cannot send invitations. Ask your operator to set it.</div>`
    : html`<form method="post" action="${base}/invite" class="inline">
  ${csrfField(login)}
  <label for="invite-email">Email</label> <input id="invite-email" name="email" type="email" required maxlength="254">
  <label for="invite-role">Role</label> <select id="invite-role" name="role">${roleOptions(invitableRoles(me), "viewer")}</select>
  <button type="submit" class="primary">Send invitation</button>
</form>
<p class="muted">The link works once, for ${INVITATION_DAYS} days, and only for that email.</p>`
}
</section>
<div class="table-wrap" tabindex="0" role="region" aria-label="Table (scrolls sideways on small screens)"><table class="list"><caption class="visually-hidden">Members</caption><thead><tr><th scope="col">Member</th><th scope="col">Role</th><th scope="col">Since</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead><tbody>
${team.members.map((m) => {
  const self = m.id === login.user.id;
  const grantable = ROLES.filter((r) => mayChangeRole(me, m.role, r));
  return html`<tr><td>${m.email}${self ? html` <strong>(you)</strong>` : ""}</td><td>${ROLE_NAMES[m.role]}</td><td>${timeTag(m.createdAt)}</td><td class="actions">
${
  grantable.length
    ? html`<form method="post" action="${base}/${m.id}/role" class="inline">${csrfField(login)}<label class="visually-hidden" for="role-${m.id}">New role for ${m.email}</label><select id="role-${m.id}" name="role">${roleOptions(grantable)}</select> <button type="submit">Change role</button></form>`
    : ""
}
${me === "owner" && !self ? html`<form method="post" action="${base}/${m.id}/transfer-ownership" class="inline" data-confirm="${`Make ${m.email} the owner? You become an administrator.`}">${csrfField(login)}<button type="submit">Transfer ownership</button></form>` : ""}
<form method="post" action="${base}/${m.id}/remove" class="inline" data-confirm="${self ? "Leave this account? You are signed out and cannot come back without a new invitation." : `Remove ${m.email}? Their sessions end at once.`}">${csrfField(login)}<button type="submit" class="danger">${self ? "Leave" : "Remove"}</button></form>
</td></tr>`;
})}</tbody></table></div>
${
  team.invitations.length
    ? html`<h2 class="h3">Pending invitations</h2><ul class="plain">${team.invitations.map(
        (i) =>
          html`<li>${i.email} as ${ROLE_NAMES[i.role]}, until ${timeTag(i.expiresAt)} <form method="post" action="${base}/invitations/${i.id}/revoke" class="inline">${csrfField(login)}<button type="submit" class="link">Revoke</button></form></li>`,
      )}</ul>`
    : ""
}
${
  me === "owner"
    ? html`<section class="card"><h2 class="h3">Two-factor sign-in for everyone</h2>
<p>${login.requireTwoFactor ? "Required: every member signs in with a second factor; those without one set it up at their next page." : "Not required: each member chooses."}</p>
<form method="post" action="${base}/require-two-factor">${csrfField(login)}<input type="hidden" name="required" value="${login.requireTwoFactor ? "false" : "true"}"><button type="submit"${login.requireTwoFactor ? html` class="danger"` : ""}>${login.requireTwoFactor ? "Stop requiring it" : "Require it of everyone"}</button></form></section>`
    : ""
}
<details class="card help"><summary>What each role may do</summary>${permissionTable()}</details>`;
}

/** The permission matrix as a table: the same source the dashboard enforces. */
export function permissionTable(): Html {
  const mark = (p: (typeof PERMISSIONS)[number], r: Role) => {
    const s = MATRIX[p].sandbox.includes(r);
    const pr = MATRIX[p].production.includes(r);
    return s && pr ? "✓" : s ? "sandbox" : pr ? "production" : "—";
  };
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label="Permissions by role"><table class="list"><thead><tr><th scope="col">May…</th>${ROLES.map((r) => html`<th scope="col">${ROLE_NAMES[r]}</th>`)}</tr></thead><tbody>
${PERMISSIONS.map((p) => html`<tr><td>${MATRIX[p].what}</td>${ROLES.map((r) => html`<td>${mark(p, r)}</td>`)}</tr>`)}</tbody></table></div>`;
}

export function invitationPage(args: { csrf: string; token: string; invitation: OpenInvitation; error?: string }) {
  const i = args.invitation;
  return bare(
    "Join the team",
    html`<div class="card narrow">
  <h1>Join ${i.merchantName}</h1>
  <p>You are invited as <strong>${ROLE_NAMES[i.role]}</strong>. Choose a password to sign in with as <strong>${i.email}</strong>.</p>
  ${args.error ? html`<div class="notice error" role="alert">${args.error}</div>` : ""}
  <form method="post" action="/dashboard/invitations/${args.token}" class="stack">
    <input type="hidden" name="_csrf" value="${args.csrf}">
    <input type="text" name="username" autocomplete="username" value="${i.email}" hidden>
    <label for="password">Password (at least ${MIN_PASSWORD_LENGTH} characters)</label>
    <input id="password" name="password" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}">
    <label for="confirm">The same again</label>
    <input id="confirm" name="confirm" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}">
    <button type="submit" class="primary">Join</button>
  </form>
</div>`,
  );
}

export function invitationDeadPage(text: string) {
  return bare("Invitation", html`<div class="card narrow"><h1>This invitation does not work</h1><p>${text}</p><p><a href="/dashboard/sign-in">Sign in</a></p></div>`);
}
