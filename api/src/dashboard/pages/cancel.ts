/** The confirmation step before canceling a payment: what it does, and the one button that does it. */
import type { Environment } from "../../../../shared/environment.ts";
import type { MerchantSessionView } from "../../sessions/views.ts";
import { html, type Html } from "../html.ts";
import { statusBadge, timeTag } from "../format.ts";
import { csrfField } from "../layout.ts";
import type { Login } from "../logins.ts";

export function cancelBody(env: Environment, login: Login, v: MerchantSessionView): Html {
  const back = `/dashboard/${env}/transactions/${v.paymentSessionId}`;
  const facts = html`<dl class="facts">
  <div><dt>Amount</dt><dd>${v.amount} ${v.currency}</dd></div>
  <div><dt>Reference</dt><dd class="ref">${v.referenceId ?? "—"}</dd></div>
  <div><dt>Status</dt><dd>${statusBadge(v.status)}</dd></div>
  <div><dt>Created</dt><dd>${timeTag(v.createdAt)}</dd></div>
  <div><dt>Session id</dt><dd><code>${v.paymentSessionId}</code></dd></div>
</dl>`;
  if (v.status !== "PENDING") {
    return html`<section class="card">${facts}</section>
<div class="notice error" role="alert">This payment is ${v.status}: only a payment still waiting for its payer (PENDING) can be canceled.</div>
<p><a href="${back}">← Back to the payment</a></p>`;
  }
  return html`<section class="card confirm">${facts}
<p>The payer can no longer pay it, its checkout shows it as canceled, and your webhook endpoints receive <code>payment_session.canceled</code>. This cannot be undone${env === "production" ? html`; <strong>this is a production payment</strong>` : ""}.</p>
<p class="muted small">Refused if a payment to it has been seen in the meantime, even one still confirming. Recorded in the security history.</p>
<form method="post" action="${back}/cancel" class="buttons">
  ${csrfField(login)}
  <button type="submit" class="danger">Cancel this payment</button>
  <a href="${back}" class="button-link">Keep it</a>
</form></section>`;
}
