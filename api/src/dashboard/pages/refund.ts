/**
 * Refunding a payment from its page: the form (amount, reason), the review of what would be sent
 * (amount, tokens, network, destination) with the one button that sends it, and the session's
 * refunds with a Cancel button while one is PENDING. Works without script, under the CSP.
 */
import type { Environment } from "../../../../shared/environment.ts";
import { formatUnitAmount } from "../../../../shared/money.ts";
import type { MerchantSessionView } from "../../sessions/views.ts";
import { REFUND_REASONS, type RefundReason, type Refundable } from "../../refunds/logic.ts";
import type { RefundPreview } from "../../refunds/store.ts";
import type { RefundView } from "../../refunds/view.ts";
import { checksummed } from "../../sessions/views.ts";
import { html, type Html } from "../html.ts";
import { addressLink, networkName, statusBadge, timeTag, txLink } from "../format.ts";
import { csrfField } from "../layout.ts";
import type { Login } from "../logins.ts";
import { hasLink, linkFacts } from "./refund-link.ts";
import { destinationFields, destinationHidden, destinationReview, linkQuery, type LinkChoice } from "../refund-destination.ts";

export const REASON_WORDS: Record<RefundReason, string> = {
  requested_by_customer: "Requested by the customer",
  duplicate: "Duplicate payment",
  overpayment: "Overpayment",
  late_payment: "Late payment",
  underpaid_expired: "Underpaid and expired",
  other: "Other",
};

export const WAITING_WORDS: Record<string, string> = {
  destination_unknown: "waiting: no single payer address to send to",
  insufficient_refund_balance: "waiting: the refund balance does not cover it",
  spend_guard: "waiting: the daily refund limit is reached",
  awaiting_claim: "waiting: the payer has not claimed the link yet",
  awaiting_approval: "waiting for your approval",
  awaiting_wallet: "waiting: for your wallet to sign or send it",
};

/** What the form holds (as typed, or the defaults). */
export interface RefundFormValues {
  amount: string;
  reason: RefundReason | "";
  /** The network to refund on, when the session has money left on more than one ("" otherwise). */
  chainId: string;
  /** To a refund link instead of the address that paid (refund-destination.ts). */
  link?: LinkChoice;
}

/** The refundable rest as "x.yy" when it has no more places than cents (else the form leaves the amount empty: everything). */
export function defaultAmount(rests: readonly Refundable[]): string {
  if (rests.length === 0) return "";
  const chains = new Set(rests.filter((r) => r.rest > 0n).map((r) => r.chainId));
  if (chains.size !== 1) return "";
  const on = rests.filter((r) => chains.has(r.chainId));
  const rest = on.reduce((s, r) => s + r.rest, 0n);
  const unit = on[0]!.unitDecimals;
  const scale = 10n ** BigInt(unit - 2);
  return rest % scale === 0n ? formatUnitAmount(rest / scale, 2) : "";
}

function restLines(rests: readonly Refundable[]): Html {
  const left = rests.filter((r) => r.rest > 0n);
  if (left.length === 0) return html`<span class="muted">nothing</span>`;
  return html`${left.map((r) => html`<div>${formatUnitAmount(r.rest, r.unitDecimals)} ${r.symbol} <span class="muted">on ${networkName(r.chainId)}</span></div>`)}`;
}

function facts(v: MerchantSessionView): Html {
  return html`<div><dt>Payment</dt><dd>${v.amount} ${v.currency} ${statusBadge(v.status)}</dd></div>
  <div><dt>Reference</dt><dd class="ref">${v.referenceId ?? "—"}</dd></div>
  <div><dt>Session id</dt><dd><code>${v.paymentSessionId}</code></dd></div>`;
}

export function refundFormBody(env: Environment, v: MerchantSessionView, rests: readonly Refundable[], values: RefundFormValues, error?: string): Html {
  const base = `/dashboard/${env}/transactions/${v.paymentSessionId}`;
  const nothing = !rests.some((r) => r.rest > 0n);
  const chains = [...new Set(rests.filter((r) => r.rest > 0n).map((r) => r.chainId))];
  return html`<section class="card"><dl class="facts">${facts(v)}
  <div><dt>Left to refund</dt><dd id="refundable">${restLines(rests)}</dd></div></dl></section>
${error ? html`<div class="notice error" role="alert" id="refund-error">${error}</div>` : ""}
${
  nothing
    ? error
      ? ""
      : html`<div class="notice error" role="alert">Nothing of this payment is left to refund${rests.length === 0 ? ": it received no payment in a token it accepts" : ""}.</div>`
    : html`<form method="get" action="${base}/refund/review" class="stack card">
  <label for="refund-amount">Amount (${v.currency}, like 12.34)</label>
  <input id="refund-amount" name="amount" value="${values.amount}" inputmode="decimal" pattern="[0-9]+\\.[0-9]{2}" autocomplete="off" aria-describedby="amount-help">
  <p class="muted small" id="amount-help">Empty: everything left to refund. It goes back in the tokens and on the network it came in.</p>
  ${
    chains.length > 1
      ? html`<label for="refund-chain">Network (money is left on more than one)</label>
  <select id="refund-chain" name="chainId" required><option value="">Choose a network</option>${chains.map((c) => html`<option value="${String(c)}"${values.chainId === String(c) ? html` selected` : ""}>${networkName(c)}</option>`)}</select>`
      : ""
  }
  <label for="refund-reason">Reason</label>
  <select id="refund-reason" name="reason" required>
    <option value="">Choose a reason</option>
    ${REFUND_REASONS.map((r) => html`<option value="${r}"${values.reason === r ? html` selected` : ""}>${REASON_WORDS[r]}</option>`)}
  </select>
  ${destinationFields(values.link)}
  <div class="buttons"><button type="submit" class="primary">Review the refund</button> <a href="${base}" class="button-link">Back to the payment</a></div>
</form>`
}`;
}

export function refundReviewBody(env: Environment, login: Login, v: MerchantSessionView, p: RefundPreview, values: RefundFormValues, opts: { passwordNeeded: boolean; thresholdText: string; error?: string }): Html {
  const base = `/dashboard/${env}/transactions/${v.paymentSessionId}`;
  const amount = formatUnitAmount(p.amount, p.unitDecimals);
  const back = `${base}/refund?${new URLSearchParams({ amount: values.amount, reason: values.reason, ...(values.chainId ? { chainId: values.chainId } : {}), ...linkQuery(values.link) })}`;
  return html`<section class="card confirm" aria-labelledby="review-h">
<h2 id="review-h" class="h3">What will be sent</h2>
<dl class="facts">${facts(v)}
  <div><dt>Refund</dt><dd id="review-amount"><strong>${amount} ${p.currency}</strong></dd></div>
  <div><dt>Network</dt><dd id="review-network">${networkName(p.chainId)} <span class="muted">(chain ${p.chainId})</span></dd></div>
  <div><dt>Reason</dt><dd>${REASON_WORDS[values.reason as RefundReason] ?? values.reason}</dd></div>
  ${destinationReview(values.link)}
</dl>
<div class="table-wrap" tabindex="0" role="region" aria-label="Refund parts (scrolls sideways on small screens)"><table class="list" id="review-parts">
<thead><tr><th scope="col">Token</th><th scope="col" class="num">Amount</th><th scope="col">Destination${values.link ? "" : " (the address that paid)"}</th></tr></thead>
<tbody>${p.parts.map(
    (x) =>
      html`<tr><td>${x.symbol}</td><td class="num">${formatUnitAmount(BigInt(x.amount), p.unitDecimals)}</td><td>${x.destination ? addressLink(p.chainId, checksummed(x.destination)) : values.link ? html`<span class="muted">the address the payer claims the link with</span>` : html`<span class="muted">not known yet: the refund will wait for one</span>`}</td></tr>`,
  )}</tbody></table></div>
<p class="muted small"><strong>From the refund balance:</strong> paid from your ${env} refund balance by the service's relayer.
<strong>From my wallet:</strong> your browser wallet, on your settlement address, signs the transfer (or sends it itself); the money leaves your settlement address, not the refund balance.
Either way it cannot be canceled once sent, and is recorded in the security history.</p>
${opts.error ? html`<div class="notice error" role="alert">${opts.error}</div>` : ""}
<form method="post" action="${base}/refunds" class="stack">
  ${csrfField(login)}
  <input type="hidden" name="amount" value="${values.amount}">
  <input type="hidden" name="reason" value="${values.reason}">
  ${values.chainId ? html`<input type="hidden" name="chainId" value="${values.chainId}">` : ""}
  ${destinationHidden(values.link)}
  ${
    opts.passwordNeeded
      ? html`<label for="refund-password">Your password (a production refund above ${opts.thresholdText})</label>
  <input id="refund-password" name="password" type="password" autocomplete="current-password" required>`
      : ""
  }
  <div class="buttons" role="group" aria-label="Where the money comes from">
    <button type="submit" name="funding" value="balance" class="primary">Pay from the refund balance</button>
    ${
      walletPayable(p)
        ? html`<button type="submit" name="funding" value="merchant_wallet" id="pay-from-wallet">Pay from my wallet</button>`
        : html`<span class="muted small" id="no-wallet">Pay from my wallet: only for a refund in one token to a known address.</span>`
    }
    <a href="${back}" class="button-link">Change it</a>
  </div>
</form></section>`;
}

/** Whether the merchant's wallet can pay it (refunds/wallet.ts): one token, a known destination. */
const walletPayable = (p: RefundPreview) => p.parts.length === 1 && p.parts[0]!.destination !== null && p.waitingReason === null;

/** The session page's refunds: state, amount, tokens, destination, transaction, why it waits; Cancel while PENDING. */
export function sessionRefundsSection(env: Environment, login: Login, v: MerchantSessionView, refunds: readonly RefundView[], canRefund: boolean): Html {
  const base = `/dashboard/${env}/transactions/${v.paymentSessionId}`;
  return html`<section aria-labelledby="rf"><h2 id="rf">Refunds</h2>
${canRefund ? html`<p><a href="${base}/refund" class="button-link primary" id="refund-link">Refund…</a></p>` : ""}
${
  refunds.length === 0
    ? html`<p class="muted">No refund of this payment.</p>`
    : html`<p>Refunded: <strong id="amount-refunded">${v.amountRefunded ?? "0.00"} ${v.currency}</strong> <span class="muted small">(refunds not CANCELED or FAILED)</span></p>
<div class="table-wrap" tabindex="0" role="region" aria-label="Refunds (scrolls sideways on small screens)"><table class="list" id="refunds">
<thead><tr><th scope="col">Refund</th><th scope="col">State</th><th scope="col" class="num">Amount</th><th scope="col">Token</th><th scope="col">Destination</th><th scope="col">Transaction</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${refunds.map(
        (r) => html`<tr id="${r.refundId}">
  <td><code class="nowrap">${r.refundId}</code><br><span class="muted small">${REASON_WORDS[r.reason] ?? r.reason}${r.funding === "merchant_wallet" ? " · from your wallet" : ""}</span></td>
  <td>${statusBadge(r.status)}${r.waitingReason ? html`<br><span class="small waiting">${WAITING_WORDS[r.waitingReason] ?? r.waitingReason} <code>${r.waitingReason}</code></span>` : ""}${r.failureReason ? html`<br><span class="small">${r.failureReason}</span>` : ""}</td>
  <td class="num">${r.amount} ${r.currency}</td>
  <td>${r.parts.map((p) => html`<div>${p.amount} ${p.tokenSymbol}</div>`)}</td>
  <td>${hasLink(r) ? linkFacts(env, r) : r.parts.map((p) => html`<div>${p.destination ? addressLink(r.chainId, p.destination) : html`<span class="muted">not known</span>`}</div>`)}</td>
  <td>${r.transactionHash ? txLink(r.chainId, r.transactionHash) : html`<span class="muted">—</span>`}</td>
  <td>${timeTag(r.createdAt)}</td>
  <td>${r.waitingReason === "awaiting_wallet" ? html`<a href="${base}/refunds/${r.refundId}/wallet" class="button-link primary">Pay from my wallet</a>` : ""}${r.status === "PENDING" ? html`<form method="post" action="${base}/refunds/${r.refundId}/cancel">${csrfField(login)}<button type="submit" class="danger">Cancel refund</button></form>` : ""}</td>
</tr>`,
      )}</tbody></table></div>`
}
</section>`;
}
