/** Forgot password (ask for a link) and the reset page the link opens: bare pages, before sign-in. */
import { bare } from "../layout.ts";
import { html } from "../html.ts";
import { MIN_PASSWORD_LENGTH } from "../users.ts";
import { RESET_TTL_MINUTES } from "../password-resets.ts";

export function forgotPasswordPage(args: { csrf: string; email?: string; error?: string; sent?: boolean; mailOff: boolean }) {
  return bare(
    "Forgot your password",
    html`<div class="card narrow">
  <h1>Forgot your password?</h1>
  ${
    args.mailOff
      ? html`<div class="notice error" role="alert">This Paysession sends no mail yet (its operator has not set <code>SERVICE_SMTP_URL</code>), so it cannot send you a link. Ask your operator to set a new password for you (<code>bun run admin user:password</code>).</div>`
      : args.sent
        ? html`<div class="notice ok" role="status">If an account uses that email, a link to set a new password is on its way. It works once, for ${RESET_TTL_MINUTES} minutes. Nothing arrived? Look in your spam folder, or ask again in a few minutes.</div>`
        : html`${args.error ? html`<div class="notice error" role="alert">${args.error}</div>` : ""}
  <p>Give the email you sign in with. We send a link to set a new password.</p>
  <form method="post" action="/dashboard/forgot-password" class="stack">
    <input type="hidden" name="_csrf" value="${args.csrf}">
    <label for="email">Email</label>
    <input id="email" name="email" type="email" autocomplete="username" required value="${args.email ?? ""}">
    <button type="submit" class="primary">Send me a link</button>
  </form>`
  }
  <p><a href="/dashboard/sign-in">Back to sign-in</a></p>
</div>`,
  );
}

export function resetPasswordPage(args: { csrf: string; token: string; email: string; error?: string }) {
  return bare(
    "Set a new password",
    html`<div class="card narrow">
  <h1>Set a new password</h1>
  <p>For <strong>${args.email}</strong>. Every device signed in to this account is signed out.</p>
  ${args.error ? html`<div class="notice error" role="alert">${args.error}</div>` : ""}
  <form method="post" action="/dashboard/reset-password/${args.token}" class="stack">
    <input type="hidden" name="_csrf" value="${args.csrf}">
    <input type="text" name="username" autocomplete="username" value="${args.email}" hidden>
    <label for="password">New password (at least ${MIN_PASSWORD_LENGTH} characters)</label>
    <input id="password" name="password" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}">
    <label for="confirm">The same again</label>
    <input id="confirm" name="confirm" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}">
    <button type="submit" class="primary">Set the password</button>
  </form>
</div>`,
  );
}

export function resetLinkDeadPage() {
  return bare(
    "Link no longer works",
    html`<div class="card narrow">
  <h1>This link no longer works</h1>
  <p>A reset link works once, for ${RESET_TTL_MINUTES} minutes, and a newer reset ends the older links. Ask for a new one.</p>
  <p><a href="/dashboard/forgot-password">Ask for a new link</a> · <a href="/dashboard/sign-in">Sign in</a></p>
</div>`,
  );
}
