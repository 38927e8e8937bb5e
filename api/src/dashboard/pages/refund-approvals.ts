/**
 * The Approvals page: the claimed refund links that wait for the merchant (docs/refunds.md,
 * "Refund links"), oldest claim first, each with the address it was claimed with and Approve
 * (the password again in production above the threshold, as a refund's create asks it).
 */
import type { Environment } from "../../../../shared/environment.ts";
import type { RefundView } from "../../refunds/view.ts";
import { html, type Html } from "../html.ts";
import { addressLink, networkName, timeTag } from "../format.ts";
import { csrfField } from "../layout.ts";
import type { Login } from "../logins.ts";
import { REASON_WORDS } from "./refund.ts";

/** The Approvals page: claimed links waiting for the merchant, oldest claim first. */
export function approvalsBody(env: Environment, login: Login, rows: readonly RefundView[], passwordNeeded: (r: RefundView) => boolean, thresholdText: string): Html {
  if (rows.length === 0) {
    return html`<div class="empty"><h2>Nothing to approve</h2><p>A refund link made with "require my approval" appears here once the payer has claimed it, with the address they named. Refund links are made from a payment's page (<a href="/dashboard/${env}/transactions">Transactions</a> → a payment → Refund…).</p></div>`;
  }
  return html`<p>These refunds were claimed by the payer through their refund link and wait for you. Check the address before you approve: the refund is then sent there from your ${env} refund balance and cannot be called back. To refuse one, cancel it on its payment's page.</p>
<div class="table-wrap" tabindex="0" role="region" aria-label="Refunds waiting for approval (scrolls sideways on small screens)"><table class="list" id="approvals">
<thead><tr><th scope="col">Refund</th><th scope="col" class="num">Amount</th><th scope="col">Network</th><th scope="col">Claimed address</th><th scope="col">Claimed</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${rows.map(
    (r) => html`<tr id="approve-${r.refundId}">
  <td><code class="nowrap">${r.refundId}</code><br><span class="muted small">${REASON_WORDS[r.reason] ?? r.reason} · <a href="/dashboard/${env}/transactions/${r.paymentSessionId}#rf">its payment</a></span></td>
  <td class="num">${r.amount} ${r.currency}<br><span class="muted small">${r.parts.map((p) => `${p.amount} ${p.tokenSymbol}`).join(" + ")}</span></td>
  <td>${networkName(r.chainId)}</td>
  <td>${r.parts[0]?.destination ? addressLink(r.chainId, r.parts[0].destination) : html`<span class="muted">—</span>`}</td>
  <td>${timeTag(r.claimedAt)}</td>
  <td><form method="post" action="/dashboard/${env}/refunds/${r.refundId}/approve" class="stack approve">
    ${csrfField(login)}
    ${
      passwordNeeded(r)
        ? html`<label for="pw-${r.refundId}">Your password (a production refund above ${thresholdText})</label>
    <input id="pw-${r.refundId}" name="password" type="password" autocomplete="current-password" required>`
        : ""
    }
    <button type="submit" class="primary">Approve and send ${r.amount} ${r.currency}</button>
  </form></td>
</tr>`,
  )}</tbody></table></div>`;
}
