/** Two-factor pages: the code asked at sign-in (or before a sensitive action), and enrolling under Your account. */
import type { Environment } from "../../../../shared/environment.ts";
import { qrPath } from "../../checkout/client/qr.ts";
import { bare, csrfField } from "../layout.ts";
import { html, raw, type Html } from "../html.ts";
import type { Login } from "../logins.ts";
import type { TwoFactorState } from "../two-factor.ts";
import { timeTag } from "../format.ts";

const PASSKEY_SCRIPTS = html`<script src="/dashboard/assets/webauthn.js" defer></script><script src="/dashboard/assets/passkeys.js" defer></script>`;

export function secondFactorPage(args: { csrf: string; next?: string; error?: string; stepUp: boolean; totp: boolean; passkeys: number }) {
  return bare(
    "Two-factor sign-in",
    html`<div class="card narrow">
  <h1>${args.stepUp ? "Confirm it is you" : "Two-factor sign-in"}</h1>
  ${args.error ? html`<div class="notice error" role="alert">${args.error}</div>` : ""}
  ${
    args.passkeys
      ? html`<p><button type="button" class="primary" data-passkey="authenticate" data-csrf="${args.csrf}" data-options="/dashboard/two-factor/passkey/options" data-finish="/dashboard/two-factor/passkey"${args.next ? html` data-next="${args.next}"` : ""}>Use a passkey</button></p><p id="passkey-status" role="status"></p>${PASSKEY_SCRIPTS}`
      : ""
  }
  ${args.totp ? html`<p>Type the 6-digit code your authenticator app shows for Paysession, or one of your recovery codes.</p>
  <form method="post" action="/dashboard/two-factor" class="stack">
    <input type="hidden" name="_csrf" value="${args.csrf}">
    ${args.next ? html`<input type="hidden" name="next" value="${args.next}">` : ""}
    <label for="code">Code</label>
    <input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" required maxlength="16" autofocus>
    <button type="submit" class="primary">Continue</button>
  </form>` : ""}
  <form method="post" action="/dashboard/sign-out"><input type="hidden" name="_csrf" value="${args.csrf}"><button type="submit" class="link">Sign out</button></form>
</div>`,
  );
}

/** The otpauth URI as an SVG QR code, drawn here (no image request, no third party). */
function qrSvg(text: string): Html {
  const { size, d } = qrPath(text);
  return raw(`<svg class="qr" role="img" aria-label="QR code to add Paysession to your authenticator app" viewBox="0 0 ${size} ${size}" width="200" height="200" shape-rendering="crispEdges"><rect width="${size}" height="${size}" fill="#fff"/><path d="${d}" fill="#000"/></svg>`);
}

export function passkeysSection(env: Environment, login: Login, list: { id: string; name: string; createdAt: Date; lastUsedAt: Date | null }[]): Html {
  const base = `/dashboard/${env}/settings/account/passkeys`;
  return html`<section class="card"><h2 class="h3">Passkeys</h2>
<p>A passkey (your device's fingerprint or face unlock, a security key) can stand in for the code at sign-in and before sensitive changes.</p>
${
  list.length
    ? html`<ul class="plain passkeys">${list.map(
        (k) => html`<li>${k.name}, added ${timeTag(k.createdAt)}${k.lastUsedAt ? html`, last used ${timeTag(k.lastUsedAt)}` : ""} <form method="post" action="${base}/${k.id}/remove" class="inline">${csrfField(login)}<button type="submit" class="link">Remove</button></form></li>`,
      )}</ul>`
    : ""
}
<p><label for="passkey-name">Name</label> <input id="passkey-name" maxlength="60" value="Passkey ${list.length + 1}"> <button type="button" class="primary" data-passkey="register" data-csrf="${login.csrfToken}" data-options="${base}/options" data-finish="${base}">Add a passkey</button></p>
<p id="passkey-status" role="status"></p>${PASSKEY_SCRIPTS}</section>`;
}

export function twoFactorBody(env: Environment, login: Login, state: TwoFactorState, enroll: { base32: string; uri: string } | undefined, recoveryCodes?: string[], error?: string): Html {
  const base = `/dashboard/${env}/settings/account/two-factor`;
  if (recoveryCodes) {
    return html`<div class="card secret-once" role="status"><h2 class="h3">Two-factor sign-in is on. Your recovery codes</h2>
<p><strong>Keep them now: they are shown this once.</strong> Each works once, instead of a code, if you lose your authenticator.</p>
<ul class="plain recovery-codes">${recoveryCodes.map((c) => html`<li><code>${c}</code></li>`)}</ul>
<p><a href="/dashboard/${env}/settings/account">Done</a></p></div>`;
  }
  if (state.enabled) {
    return html`<section class="card"><h2 class="h3">Two-factor sign-in is on</h2>
<p>You sign in with your password and a code from your authenticator app. ${state.recoveryLeft} of 10 recovery codes left.</p>
${
  login.requireTwoFactor
    ? html`<p class="muted">Your account requires two-factor sign-in, so it cannot be turned off.</p>`
    : html`<form method="post" action="${base}/disable" class="stack narrow-form">${csrfField(login)}
  <input type="text" name="username" autocomplete="username" value="${login.user.email}" hidden>
  <label for="tf-password">Password</label><input id="tf-password" name="password" type="password" autocomplete="current-password" required>
  <label for="tf-code">A code from your authenticator</label><input id="tf-code" name="code" inputmode="numeric" autocomplete="one-time-code" required maxlength="16">
  <button type="submit" class="danger">Turn off two-factor sign-in</button></form>`
}</section>`;
  }
  return html`<section class="card"><h2 class="h3">Set up two-factor sign-in</h2>
${error ? html`<div class="notice error" role="alert">${error}</div>` : ""}
<ol>
  <li>Open an authenticator app (any app for "TOTP" codes) and scan this code, or type the key below it.</li>
  <li>Type the 6-digit code it shows.</li>
</ol>
${enroll ? html`<p>${qrSvg(enroll.uri)}</p><p>Key: <code id="totp-key" class="secret">${enroll.base32}</code> <button type="button" class="copy" data-copy="#totp-key">Copy</button></p>` : ""}
<form method="post" action="${base}" class="stack narrow-form">${csrfField(login)}
  <label for="enroll-code">Code from the app</label><input id="enroll-code" name="code" inputmode="numeric" autocomplete="one-time-code" required maxlength="6" pattern="[0-9]{6}">
  <button type="submit" class="primary">Turn on</button>
</form></section>`;
}
