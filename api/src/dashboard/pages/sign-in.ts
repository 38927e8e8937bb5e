/** The sign-in page (and sign-up, when the operator turned it on). */
import { bare } from "../layout.ts";
import { html } from "../html.ts";

export function signInPage(args: { csrf: string; email?: string; error?: string; next?: string; signUp: boolean; notice?: string }) {
  return bare(
    "Sign in",
    html`<div class="card narrow">
  <h1>Sign in to Paysession</h1>
  ${args.notice ? html`<div class="notice ok" role="status">${args.notice}</div>` : ""}
  ${args.error ? html`<div class="notice error" role="alert">${args.error}</div>` : ""}
  <form method="post" action="/dashboard/sign-in" class="stack">
    <input type="hidden" name="_csrf" value="${args.csrf}">
    ${args.next ? html`<input type="hidden" name="next" value="${args.next}">` : ""}
    <label for="email">Email</label>
    <input id="email" name="email" type="email" autocomplete="username" required value="${args.email ?? ""}">
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required>
    <button type="submit" class="primary">Sign in</button>
  </form>
  <p><a href="/dashboard/forgot-password">Forgot your password?</a></p>
  ${args.signUp ? html`<p>No account yet? <a href="/dashboard/sign-up">Create one</a>.</p>` : html`<p class="muted">Accounts are created by your Paysession operator (<code>bun run admin user:create</code>).</p>`}
</div>`,
  );
}

export function signUpPage(args: { csrf: string; email?: string; name?: string; error?: string }) {
  return bare(
    "Create an account",
    html`<div class="card narrow">
  <h1>Create a Paysession account</h1>
  ${args.error ? html`<div class="notice error" role="alert">${args.error}</div>` : ""}
  <form method="post" action="/dashboard/sign-up" class="stack">
    <input type="hidden" name="_csrf" value="${args.csrf}">
    <label for="name">Business name</label>
    <input id="name" name="name" required maxlength="100" value="${args.name ?? ""}">
    <label for="email">Email</label>
    <input id="email" name="email" type="email" autocomplete="username" required value="${args.email ?? ""}">
    <label for="password">Password (at least 12 characters)</label>
    <input id="password" name="password" type="password" autocomplete="new-password" required minlength="12">
    <button type="submit" class="primary">Create account</button>
  </form>
  <p><a href="/dashboard/sign-in">Sign in instead</a></p>
</div>`,
  );
}
