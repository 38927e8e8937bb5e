/** Payment links (docs/payment-links.md): the list with the create form, and one link with its sessions and Deactivate. */
import type { Environment } from "../../../../shared/environment.ts";
import { formatAmount } from "../../../../shared/money.ts";
import type { PaymentLinkView } from "../../payment-links/view.ts";
import type { SessionRow } from "../../sessions/views.ts";
import { html, type Html } from "../html.ts";
import { statusBadge, timeTag } from "../format.ts";
import { csrfField } from "../layout.ts";
import type { Login } from "../logins.ts";

const priceOf = (l: PaymentLinkView) => (l.amount !== null ? `${l.amount} ${l.currency}` : `${l.minAmount}–${l.maxAmount} ${l.currency}, payer's choice`);
const usesOf = (l: PaymentLinkView) => (l.maxUses === null ? `${l.uses}` : `${l.uses} of ${l.maxUses}`);
const STATUS_TEXT = { active: "active", inactive: "deactivated", expired: "expired", used_up: "used up" } as const;

/** What a refused create sent back, so the form keeps it. */
export type LinkFormValues = Partial<Record<"kind" | "amount" | "minAmount" | "maxAmount" | "description" | "maxUses" | "expiresOn" | "redirectUrl", string>>;

function createForm(env: Environment, login: Login, v: LinkFormValues): Html {
  const chosen = v.kind === "choose";
  return html`<section class="card"><h2 class="h3">New payment link</h2>
<form method="post" action="/dashboard/${env}/payment-links" class="stack">
  ${csrfField(login)}
  <label for="pl-desc">What is it for (shown to the payer)</label><input id="pl-desc" name="description" required maxlength="500" value="${v.description ?? ""}" placeholder="Invoice 2026-114: logo design">
  <fieldset><legend>Amount (USD)</legend>
    <label class="check"><input type="radio" name="kind" value="fixed"${chosen ? "" : html` checked`}> Fixed price</label>
    <label for="pl-amount">Price</label><input id="pl-amount" name="amount" inputmode="decimal" placeholder="25.00" value="${v.amount ?? ""}">
    <label class="check"><input type="radio" name="kind" value="choose"${chosen ? html` checked` : ""}> The payer chooses, within</label>
    <label for="pl-min">From</label><input id="pl-min" name="minAmount" inputmode="decimal" placeholder="5.00" value="${v.minAmount ?? ""}">
    <label for="pl-max">To</label><input id="pl-max" name="maxAmount" inputmode="decimal" placeholder="500.00" value="${v.maxAmount ?? ""}">
  </fieldset>
  <label for="pl-uses">Payments it may take (optional; empty: no limit)</label><input id="pl-uses" name="maxUses" inputmode="numeric" value="${v.maxUses ?? ""}">
  <label for="pl-exp">Usable until (optional, end of that day UTC)</label><input id="pl-exp" name="expiresOn" type="date" value="${v.expiresOn ?? ""}">
  <label for="pl-redirect">After payment, send the payer to (optional; else a receipt page)</label><input id="pl-redirect" name="redirectUrl" type="url" value="${v.redirectUrl ?? ""}" placeholder="${env === "sandbox" ? "http://localhost:3000/thanks" : "https://example.com/thanks"}">
  <button type="submit" class="primary">Create link</button>
</form></section>`;
}

export function linksBody(env: Environment, login: Login, links: PaymentLinkView[], form: LinkFormValues = {}, older?: string): Html {
  return html`
<p>A payment link is a page of ours that takes a payment for you: send its address, or print its QR code. No server needed.</p>
${createForm(env, login, form)}
${
  links.length
    ? html`<div class="table-wrap" tabindex="0" role="region" aria-label="Table (scrolls sideways on small screens)"><table class="list"><caption class="visually-hidden">Payment links</caption><thead><tr><th scope="col">Description</th><th scope="col">Amount</th><th scope="col">Payments</th><th scope="col">State</th><th scope="col">Created</th></tr></thead><tbody>
${links.map(
  (l) =>
    html`<tr><td><a href="/dashboard/${env}/payment-links/${l.paymentLinkId}">${l.description}</a></td><td>${priceOf(l)}</td><td>${usesOf(l)}</td><td>${STATUS_TEXT[l.status]}</td><td>${timeTag(l.createdAt)}</td></tr>`,
)}</tbody></table></div>${older ? html`<p><a href="/dashboard/${env}/payment-links?after=${older}">Older links →</a></p>` : ""}`
    : html`<div class="empty"><p>No payment link yet in ${env}. Create one above.</p></div>`
}`;
}

export function linkBody(env: Environment, login: Login, l: PaymentLinkView, sessions: SessionRow[]): Html {
  return html`
<p><a href="/dashboard/${env}/payment-links">← All payment links</a></p>
<section class="card"><h2 class="h3">${l.description}</h2>
<dl class="facts">
  <div><dt>Address</dt><dd><code id="pl-url">${l.url}</code> <button type="button" class="copy" data-copy="#pl-url">Copy</button></dd></div>
  <div><dt>Amount</dt><dd>${priceOf(l)}</dd></div>
  <div><dt>State</dt><dd>${STATUS_TEXT[l.status]}</dd></div>
  <div><dt>Payments</dt><dd>${usesOf(l)} <span class="muted">(sessions not canceled or expired)</span></dd></div>
  <div><dt>Usable until</dt><dd>${l.expiresAt ? timeTag(l.expiresAt) : "no end"}</dd></div>
  <div><dt>After payment</dt><dd>${l.redirectUrl ?? "our receipt page"}</dd></div>
  <div><dt>Id</dt><dd><code>${l.paymentLinkId}</code></dd></div>
</dl>
${
  l.deactivatedAt
    ? html`<p>Deactivated ${timeTag(l.deactivatedAt)}: its page takes no payment.</p>`
    : html`<form method="post" action="/dashboard/${env}/payment-links/${l.paymentLinkId}/deactivate" data-confirm="Deactivate this link? Its page stops taking payments, for good.">${csrfField(login)}<button type="submit" class="danger">Deactivate</button></form>`
}
</section>
<section class="card"><h2 class="h3">Its payments</h2>
${
  sessions.length
    ? html`<div class="table-wrap" tabindex="0" role="region" aria-label="Table (scrolls sideways on small screens)"><table class="list"><caption class="visually-hidden">Payments of this link</caption><thead><tr><th scope="col">Payment</th><th scope="col">Amount</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead><tbody>
${sessions.map(
  (s) =>
    html`<tr><td><a href="/dashboard/${env}/transactions/${s.id}"><code>${s.id}</code></a></td><td>${formatAmount(s.amountMinor)} ${s.currency}</td><td>${statusBadge(s.status)}</td><td>${timeTag(s.createdAt)}</td></tr>`,
)}</tbody></table></div>`
    : html`<div class="empty"><p>No payment started from this link yet.</p></div>`
}
</section>`;
}
