/** Settings: API keys, webhooks, settlement, security history. */
import type { Environment } from "../../../../shared/environment.ts";
import type { ApiKeySummary } from "../../credentials/store.ts";
import type { AttemptRow } from "../../webhooks/attempts.ts";
import type { EndpointRow } from "../../webhooks/endpoints.ts";
import type { SecurityEventRow } from "../../credentials/security-history.ts";
import { html, type Html } from "../html.ts";
import { timeTag, when } from "../format.ts";
import { csrfField } from "../layout.ts";
import { excerpt } from "./events.ts";
import type { Login } from "../logins.ts";
import { MAX_EXPIRY_DAYS, SCOPES, SCOPE_NAMES, isExpired } from "../../credentials/scopes.ts";

/** What a key may do, in a word or a list: its scopes, or "full access". */
function accessOf(k: ApiKeySummary): Html {
  return k.scopes === null ? html`full access` : html`${k.scopes.map((s, i) => html`${i ? ", " : ""}<code>${s}</code>`)}`;
}

function expiryOf(k: ApiKeySummary): Html {
  if (!k.expiresAt) return html`never`;
  return isExpired(k.expiresAt, Date.now()) ? html`<strong>expired</strong> ${timeTag(k.expiresAt)}` : timeTag(k.expiresAt);
}

export function apiKeysBody(env: Environment, login: Login, keys: ApiKeySummary[], created?: { secret: string; name: string }): Html {
  const live = keys.filter((k) => !k.revokedAt);
  const revoked = keys.filter((k) => k.revokedAt);
  return html`
${
  created
    ? html`<div class="card secret-once" role="status">
  <h2 class="h3">Your new key “${created.name}”</h2>
  <p><strong>Copy it now: it is shown this once.</strong> We keep only its hash.</p>
  <p><code id="new-key" class="secret">${created.secret}</code> <button type="button" class="copy" data-copy="#new-key">Copy</button></p>
</div>`
    : ""
}
<section class="card"><h2 class="h3">Create a ${env} key</h2>
<form method="post" action="/dashboard/${env}/settings/api-keys" class="stack">
  ${csrfField(login)}
  <label for="key-name">Name</label> <input id="key-name" name="name" required maxlength="100" placeholder="e.g. production server">
  <fieldset class="destination" id="key-access"><legend>What it may do</legend>
    <div class="choice"><input type="radio" id="access-full" name="access" value="full" checked> <label for="access-full">Full access</label>
      <p>Every endpoint, as every key made before scopes existed.</p></div>
    <div class="choice"><input type="radio" id="access-scoped" name="access" value="scoped"> <label for="access-scoped">Only the scopes ticked</label>
      <p>Any other endpoint answers <code>403 api_key_scope_missing</code> (docs/merchant-guide.md, “API key scopes”).</p></div>
    <div class="link-options">
${SCOPE_NAMES.map(
  (s) => html`    <div class="choice"><input type="checkbox" id="scope-${s.replace(":", "-")}" name="scope" value="${s}"> <label for="scope-${s.replace(":", "-")}"><code>${s}</code></label> <span class="muted">${SCOPES[s]}</span></div>
`,
)}    </div>
  </fieldset>
  <label for="key-expiry">Expires after (days; empty: never)</label>
  <input id="key-expiry" name="expiresInDays" type="number" min="1" max="${String(MAX_EXPIRY_DAYS)}" step="1" inputmode="numeric" placeholder="never">
  <button type="submit" class="primary">Create key</button>
</form></section>
${
  live.length
    ? html`<div class="table-wrap" tabindex="0" role="region" aria-label="Table (scrolls sideways on small screens)"><table class="list"><caption class="visually-hidden">Active keys</caption><thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Access</th><th scope="col">Expires</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead><tbody>
${live.map(
  (k) => html`<tr><td>${k.name}</td><td><code>${k.prefix}…</code></td><td>${accessOf(k)}</td><td>${expiryOf(k)}</td><td>${timeTag(k.createdAt)}</td><td>${k.lastUsedAt ? timeTag(k.lastUsedAt) : "never"}</td>
<td><form method="post" action="/dashboard/${env}/settings/api-keys/${k.id}/revoke" data-confirm="${`Revoke the key “${k.name}” (${k.prefix}…)? Requests with it are refused at once.`}">${csrfField(login)}<button type="submit" class="danger">Revoke</button></form></td></tr>`,
)}</tbody></table></div>`
    : html`<div class="empty"><p>No active ${env} key. Create one above and set it as <code>SERVICE_API_KEY</code> on your server.</p></div>`
}
${revoked.length ? html`<details><summary>Revoked keys (${revoked.length})</summary><ul class="plain">${revoked.map((k) => html`<li>${k.name} <code>${k.prefix}…</code>, revoked ${when(k.revokedAt)}</li>`)}</ul></details>` : ""}
<section class="card help"><h2 class="h3">Rotating a key</h2>
<ol>
  <li>Create a new key here.</li>
  <li>Deploy it to your server as <code>SERVICE_API_KEY</code>, and check that requests succeed (the old key's “last used” stops moving).</li>
  <li>Revoke the old key.</li>
</ol>
<p><strong>If a key leaked</strong>, revoke it first, at once: every request with it is refused from the next one on. Then create and deploy a new one.</p>
</section>`;
}

export function webhooksBody(env: Environment, login: Login, endpoints: EndpointRow[], created?: { secret: string; url: string }): Html {
  const live = endpoints.filter((e) => !e.deletedAt);
  return html`
${
  created
    ? html`<div class="card secret-once" role="status"><h2 class="h3">Endpoint added</h2>
<p>Its signing secret (you can reveal it again on the endpoint's page):</p>
<p><code id="new-secret" class="secret">${created.secret}</code> <button type="button" class="copy" data-copy="#new-secret">Copy</button></p></div>`
    : ""
}
<section class="card"><h2 class="h3">Add an endpoint</h2>
<form method="post" action="/dashboard/${env}/settings/webhooks" class="stack">
  ${csrfField(login)}
  <label for="wh-url">URL</label><input id="wh-url" name="url" type="url" required placeholder="${env === "sandbox" ? "http://localhost:3000/webhooks" : "https://example.com/webhooks"}">
  <label for="wh-desc">Description (optional)</label><input id="wh-desc" name="description" maxlength="200">
  <button type="submit" class="primary">Add endpoint</button>
</form></section>
${
  live.length
    ? html`<div class="table-wrap" tabindex="0" role="region" aria-label="Table (scrolls sideways on small screens)"><table class="list"><caption class="visually-hidden">Webhook endpoints</caption><thead><tr><th scope="col">URL</th><th scope="col">Description</th><th scope="col">State</th><th scope="col">Created</th></tr></thead><tbody>
${live.map(
  (e) => html`<tr><td><a href="/dashboard/${env}/settings/webhooks/${e.id}">${e.url}</a></td><td>${e.description ?? ""}</td><td>${e.enabled ? "enabled" : `disabled${e.disabledReason === "gone" ? " (answered 410 Gone)" : ""}`}</td><td>${timeTag(e.createdAt)}</td></tr>`,
)}</tbody></table></div>`
    : html`<div class="empty"><p>No webhook endpoint yet. Add the URL of your server's handler above; every status change of a ${env} payment is then sent to it, signed.</p></div>`
}`;
}

export function webhookBody(env: Environment, login: Login, e: EndpointRow, attempts: { rows: AttemptRow[]; older?: string; paged: boolean }, secret?: string): Html {
  const base = `/dashboard/${env}/settings/webhooks/${e.id}`;
  return html`
<p><a href="/dashboard/${env}/settings/webhooks">← All endpoints</a></p>
<section class="card"><h2 class="h3">Edit</h2>
<form method="post" action="${base}" class="stack">
  ${csrfField(login)}
  <label for="wh-url">URL</label><input id="wh-url" name="url" type="url" required value="${e.url}">
  <label for="wh-desc">Description</label><input id="wh-desc" name="description" maxlength="200" value="${e.description ?? ""}">
  <label class="check"><input type="checkbox" name="enabled" value="true"${e.enabled ? html` checked` : ""}> Enabled</label>
  <button type="submit" class="primary">Save</button>
</form></section>
<section class="card"><h2 class="h3">Signing secret</h2>
${secret ? html`<p><code id="wh-secret" class="secret">${secret}</code> <button type="button" class="copy" data-copy="#wh-secret">Copy</button></p>` : ""}
<div class="buttons">
<form method="post" action="${base}/reveal">${csrfField(login)}<button type="submit">Reveal secret</button></form>
<form method="post" action="${base}/rotate" data-confirm="Rotate the secret? The old one stays valid for 24 hours.">${csrfField(login)}<button type="submit">Rotate secret</button></form>
<form method="post" action="${base}/test">${csrfField(login)}<button type="submit">Send test event</button></form>
<form method="post" action="${base}/delete" data-confirm="Delete this endpoint? Nothing more is sent to it.">${csrfField(login)}<button type="submit" class="danger">Delete endpoint</button></form>
</div></section>
<section aria-labelledby="attempts"><h2 class="h3" id="attempts">Attempts</h2>
${
  attempts.rows.length
    ? html`<p class="muted small">Every request sent to this endpoint, newest first: events, redeliveries and test events.</p>
<div class="table-wrap" tabindex="0" role="region" aria-label="Table (scrolls sideways on small screens)"><table class="list attempts"><thead><tr><th scope="col">When</th><th scope="col">Event</th><th scope="col">Kind</th><th scope="col">Result</th><th scope="col" class="num">Latency</th><th scope="col">Response</th></tr></thead><tbody>
${attempts.rows.map(
  (a) => html`<tr><td class="nowrap">${timeTag(a.createdAt)}</td><td><code>${a.eventId}</code></td><td>${a.kind}</td><td>${a.succeeded ? "✓ " : "✗ "}${a.statusCode ? `HTTP ${a.statusCode}` : (a.error ?? "")}</td><td class="num">${a.latencyMs} ms</td><td>${excerpt(a.responseExcerpt)}</td></tr>`,
)}</tbody></table></div>
<nav class="pager" aria-label="Pages of attempts">
  ${attempts.paged ? html`<a href="${base}#attempts">Newest</a>` : ""}
  ${attempts.older ? html`<a href="${base}?after=${attempts.older}#attempts" rel="next">Older →</a>` : ""}
</nav>`
    : attempts.paged
      ? html`<p class="muted">No older attempt. <a href="${base}#attempts">Newest</a></p>`
      : html`<p class="muted">No attempt yet. Send a test event to check your handler.</p>`
}</section>`;
}

export interface SettlementLine {
  chainId: number;
  network: string;
  address: string | null;
  isDefault: boolean;
  updatedAt: string | null;
}

export function settlementBody(env: Environment, login: Login, lines: SettlementLine[]): Html {
  return html`
<p>Where the funds of each network are swept. A change applies to sessions created afterwards; sessions already created keep the address they were made with.
<strong>Funds sent to a wrong address cannot be recalled</strong>: the change needs your password, is recorded in the security history, and is announced to your webhook endpoints.</p>
${lines.length === 0 ? html`<div class="empty"><p>No ${env} network is enabled on this server.</p></div>` : ""}
${lines.map(
  (l) => html`<section class="card"><h2 class="h3">${l.network} <span class="muted">(chain ${l.chainId})</span></h2>
<p>Now: ${l.address ? html`<code>${l.address}</code>` : html`<em>none set — sessions are not offered on this network</em>`}${l.isDefault ? html` <span class="muted">(the server's default sandbox address)</span>` : ""}${l.updatedAt ? html` <span class="muted">since ${when(l.updatedAt)}</span>` : ""}</p>
<form method="post" action="/dashboard/${env}/settings/settlement/${l.chainId}" class="stack">
  ${csrfField(login)}
  <label for="addr-${l.chainId}">New address (EIP-55 checksummed, or all lowercase)</label>
  <input id="addr-${l.chainId}" name="address" required pattern="0x[0-9a-fA-F]{40}" class="mono" autocomplete="off" spellcheck="false">
  <label for="pw-${l.chainId}">Your password</label>
  <input id="pw-${l.chainId}" name="password" type="password" autocomplete="current-password" required>
  <button type="submit" class="primary">Change settlement address</button>
</form></section>`,
)}`;
}

const ACTION_WORDS: Record<string, string> = {
  sign_in: "Signed in",
  sign_in_failed: "Failed sign-in",
  sign_out: "Signed out",
  password_changed: "Changed the password",
  password_reset_requested: "Asked for a password reset link",
  password_reset: "Reset the password by an emailed link",
  signed_out_others: "Signed out every other device",
  member_invited: "Invited a member",
  two_factor_enabled: "Turned on two-factor sign-in",
  two_factor_disabled: "Turned off two-factor sign-in",
  two_factor_verified: "Passed the second factor",
  two_factor_failed: "Failed the second factor",
  two_factor_required_changed: "Changed whether two-factor sign-in is required",
  invitation_revoked: "Revoked an invitation",
  member_joined: "Joined the account",
  member_role_changed: "Changed a member's role",
  member_removed: "Removed a member",
  ownership_transferred: "Transferred ownership",
  api_key_created: "Created an API key",
  api_key_revoked: "Revoked an API key",
  webhook_endpoint_created: "Added a webhook endpoint",
  webhook_endpoint_updated: "Changed a webhook endpoint",
  webhook_endpoint_deleted: "Deleted a webhook endpoint",
  webhook_secret_revealed: "Revealed a webhook secret",
  webhook_secret_rotated: "Rotated a webhook secret",
  settlement_address_changed: "Changed a settlement address",
  settlement_address_change_refused: "Settlement change refused (wrong password)",
  payment_session_canceled: "Canceled a payment",
  refund_created: "Refunded a payment",
  refund_canceled: "Canceled a refund",
  refund_refused: "Refund refused (wrong password)",
  refund_approved: "Approved a claimed refund link",
  automatic_returns_kept: "Kept a payment's money (no automatic return)",
  webhook_event_redelivered: "Redelivered an event",
  refund_settings_changed: "Changed the refund settings",
};

function detailText(d: Record<string, unknown>): string {
  return Object.entries(d)
    .map(([k, v]) => `${k}: ${v === null ? "none" : typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(", ");
}

export function securityBody(env: Environment, rows: SecurityEventRow[], next?: string): Html {
  return html`
<p>Every sign-in, key, webhook, settlement and refund settings change, cancel and redelivery of your account, both environments, newest first. This history cannot be edited.</p>
${
  rows.length
    ? html`<div class="table-wrap" tabindex="0" role="region" aria-label="Table (scrolls sideways on small screens)"><table class="list"><thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Environment</th><th scope="col">Details</th><th scope="col">From</th></tr></thead><tbody>
${rows.map(
  (r) => html`<tr><td>${timeTag(r.createdAt)}</td><td>${r.email ?? (typeof r.detail.keyPrefix === "string" ? `API key ${r.detail.keyPrefix}…` : "—")}</td><td>${ACTION_WORDS[r.action] ?? r.action}</td><td>${r.environment ?? "—"}</td><td class="ref">${detailText(r.detail)}</td><td><code>${r.ip ?? "—"}</code></td></tr>`,
)}</tbody></table></div>`
    : html`<div class="empty"><p>Nothing recorded yet.</p></div>`
}
${next ? html`<nav class="pager" aria-label="Pages"><a href="/dashboard/${env}/settings/security?before=${next}" rel="next">Older →</a></nav>` : ""}`;
}
