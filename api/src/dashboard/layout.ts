/**
 * The one page shell: header with the merchant, the environment switch (sandbox marked as
 * such everywhere) and the environment's merchant id with a copy button; the navigation;
 * the page's own content. No inline script or style (the CSP forbids both).
 */
import type { Environment } from "../../../shared/environment.ts";
import { publicMerchantId } from "../credentials/store.ts";
import { html, type Html } from "./html.ts";
import type { Login } from "./logins.ts";
import { allows, SECTION_PERMISSIONS, type Role } from "./permissions.ts";

export const ASSET_VERSION = "8";
const css = `/dashboard/assets/dashboard.css?v=${ASSET_VERSION}`;
const js = `/dashboard/assets/dashboard.js?v=${ASSET_VERSION}`;

export type Section = "home" | "transactions" | "payment-links" | "events" | "refund-balance" | "refund-approvals" | "api-keys" | "webhooks" | "settlement" | "refunds" | "security" | "outbox" | "members" | "account";

export interface Notice {
  kind: "ok" | "error";
  text: string | Html;
}

export function bare(title: string, body: Html): Html {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Paysession</title><link rel="stylesheet" href="${css}"><script src="${js}" defer></script></head>
<body class="bare"><main id="main">${body}</main></body></html>`;
}

export function layout(args: { login: Login; environment: Environment; section: Section; title: string; body: Html; notice?: Notice; path: string }): Html {
  const { login, environment, section, title, body, notice } = args;
  const sandbox = environment === "sandbox";
  const mid = publicMerchantId(login.merchant, environment);
  // The switch keeps the page: the same section in the other environment.
  const pathOf = (env: Environment, s: Section) => (s === "home" ? `/dashboard/${env}` : s === "transactions" || s === "payment-links" || s === "events" || s === "refund-balance" || s === "refund-approvals" ? `/dashboard/${env}/${s}` : `/dashboard/${env}/settings/${s}`);
  const other = (env: Environment) => pathOf(env, section);
  const nav = (s: Section, label: string) => {
    const permission = SECTION_PERMISSIONS[s];
    if (!permission || !allows(login.user.role as Role, permission, environment)) return "";
    const href = pathOf(environment, s);
    return html`<a href="${href}"${s === section ? html` aria-current="page"` : ""}>${label}</a>`;
  };
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}${sandbox ? " (sandbox)" : ""} · Paysession</title><link rel="stylesheet" href="${css}"><script src="${js}" defer></script></head>
<body class="${sandbox ? "env-sandbox" : "env-production"}">
<a class="skip" href="#main">Skip to content</a>
${sandbox ? html`<div class="sandbox-banner" role="note">Sandbox: test networks and test tokens, no real money moves.</div>` : ""}
<header class="top">
  <div class="brand"><a href="/dashboard/${environment}">Paysession</a> <span class="merchant">${login.merchant.name}</span></div>
  <nav class="env-switch" aria-label="Environment">
    <a href="${other("sandbox")}" class="env sandbox"${sandbox ? html` aria-current="true"` : ""}>Sandbox</a>
    <a href="${other("production")}" class="env production"${!sandbox ? html` aria-current="true"` : ""}>Production</a>
  </nav>
  <div class="merchant-id">
    <span class="label" id="mid-label">Merchant id (<code>NEXT_PUBLIC_SERVICE_MERCHANT_ID</code>)</span>
    <code id="merchant-id" aria-labelledby="mid-label">${mid}</code>
    <button type="button" class="copy" data-copy="#merchant-id">Copy</button>
  </div>
  <form method="post" action="/dashboard/sign-out" class="sign-out">
    <input type="hidden" name="_csrf" value="${login.csrfToken}">
    <span class="who">${login.user.email}</span> <button type="submit" class="link">Sign out</button>
  </form>
</header>
<div class="frame">
<nav class="side" aria-label="Sections">
  ${nav("home", "Home")}
  ${nav("transactions", "Transactions")}
  ${nav("payment-links", "Payment links")}
  ${nav("events", "Events")}
  ${nav("refund-balance", "Refund balance")}
  ${nav("refund-approvals", "Refund approvals")}
  <span class="group">Settings</span>
  ${nav("api-keys", "API keys")}
  ${nav("webhooks", "Webhooks")}
  ${nav("settlement", "Settlement")}
  ${nav("refunds", "Refunds")}
  ${nav("members", "Members")}
  ${nav("security", "Security history")}
  ${nav("outbox", "Outbox")}
  ${nav("account", "Your account")}
</nav>
<main id="main">
<h1>${title}</h1>
${notice ? html`<div class="notice ${notice.kind}" role="${notice.kind === "error" ? "alert" : "status"}">${notice.text}</div>` : ""}
${body}
</main>
</div>
</body></html>`;
}

/** A hidden CSRF field for a form of this signed-in session. */
export const csrfField = (login: Login) => html`<input type="hidden" name="_csrf" value="${login.csrfToken}">`;
