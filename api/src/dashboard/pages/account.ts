/** Settings, Your account: the person's password and the devices signed in as them. */
import type { Environment } from "../../../../shared/environment.ts";
import { html, type Html } from "../html.ts";
import { timeTag } from "../format.ts";
import { csrfField } from "../layout.ts";
import type { Login } from "../logins.ts";
import { MIN_PASSWORD_LENGTH } from "../users.ts";
import { deviceName } from "../device-name.ts";

export interface Device {
  current: boolean;
  ip: string | null;
  userAgent: string | null;
  createdAt: Date;
  lastSeenAt: Date;
}

export function accountBody(env: Environment, login: Login, devices: Device[]): Html {
  const others = devices.filter((d) => !d.current).length;
  return html`
<section class="card"><h2 class="h3">Password</h2>
<p>Signed in as <strong>${login.user.email}</strong>. A new password signs out every other device.</p>
<form method="post" action="/dashboard/${env}/settings/account/password" class="stack narrow-form">
  ${csrfField(login)}
  <input type="text" name="username" autocomplete="username" value="${login.user.email}" hidden>
  <label for="current">Current password</label>
  <input id="current" name="current" type="password" autocomplete="current-password" required>
  <label for="password">New password (at least ${MIN_PASSWORD_LENGTH} characters)</label>
  <input id="password" name="password" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}">
  <label for="confirm">The same again</label>
  <input id="confirm" name="confirm" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}">
  <button type="submit" class="primary">Change password</button>
</form></section>
<section class="card"><h2 class="h3">Two-factor sign-in</h2>
<p>${login.twoFactor ? "On: you sign in with your password and a code from your authenticator app." : "Off: your password alone signs you in."} <a href="/dashboard/${env}/settings/account/two-factor">${login.twoFactor ? "Manage" : "Set it up"}</a></p>
</section>
<section class="card"><h2 class="h3">Signed-in devices</h2>
<div class="table-wrap" tabindex="0" role="region" aria-label="Table (scrolls sideways on small screens)"><table class="list"><thead><tr><th scope="col">Device</th><th scope="col">From</th><th scope="col">Signed in</th><th scope="col">Last active</th></tr></thead><tbody>
${devices.map(
  (d) => html`<tr><td>${deviceName(d.userAgent)}${d.current ? html` <strong>(this device)</strong>` : ""}</td><td><code>${d.ip ?? "—"}</code></td><td>${timeTag(d.createdAt)}</td><td>${timeTag(d.lastSeenAt)}</td></tr>`,
)}</tbody></table></div>
${
  others
    ? html`<form method="post" action="/dashboard/${env}/settings/account/sign-out-others" data-confirm="${`Sign out ${others} other device${others === 1 ? "" : "s"}? They must sign in again.`}">${csrfField(login)}<button type="submit" class="danger">Sign out every other device</button></form>`
    : html`<p class="muted">No other device is signed in as you.</p>`
}
</section>`;
}
