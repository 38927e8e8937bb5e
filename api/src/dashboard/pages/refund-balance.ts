/**
 * The refund balance: per network of the environment, the address refunds are paid from (copyable),
 * what it holds per token as read from the chain, what the waiting refunds need of it (a balance
 * below that is marked low), the refunds waiting for money, and in the sandbox a button that mints
 * test tokens to it.
 */
import type { Environment } from "../../../../shared/environment.ts";
import { formatUnitAmount } from "../../../../shared/money.ts";
import { html, type Html } from "../html.ts";
import { statusBadge, timeTag } from "../format.ts";
import { csrfField } from "../layout.ts";
import type { Login } from "../logins.ts";
import type { BalanceNeed, RefundBalancePage } from "../refunds.ts";

const units = (v: bigint, decimals: number) => formatUnitAmount(v, Math.max(2, decimals));

/** The notice shown here and on the home page when a balance is below what waiting refunds need. */
export function lowBalanceNotice(env: Environment, low: readonly BalanceNeed[], linked: boolean): Html {
  if (low.length === 0) return html``;
  return html`<div class="notice error" role="alert" id="low-refund-balance"><strong>Refund balance too low.</strong> ${low.map(
    (n) => html`<div>${n.network}: ${n.heldBaseUnits === null ? "?" : units(n.heldBaseUnits, n.decimals)} ${n.tokenSymbol} held, ${units(n.neededBaseUnits, n.decimals)} ${n.tokenSymbol} needed by waiting refunds.</div>`,
  )}${linked ? html` <a href="/dashboard/${env}/refund-balance">Fund the refund balance</a>` : ""}</div>`;
}

export function refundBalanceBody(env: Environment, login: Login, p: RefundBalancePage, faucetChains: ReadonlySet<number>): Html {
  const low = p.needs.filter((n) => n.low);
  return html`
<p>Refunds are paid from this balance, one address per environment (the same on every network), never from your payments or your settlement address. Send it the stablecoins your refunds need for the coming days: a refund it cannot cover waits and goes out by itself once it is funded.</p>
${lowBalanceNotice(env, low, false)}
${p.balances.length === 0 ? html`<div class="empty"><p>No ${env} network is enabled on this server.</p></div>` : ""}
${p.balances.map((b) => {
  const id = `vault-${b.chainId}`;
  return html`<section class="card" aria-labelledby="${id}-h"><h2 class="h3" id="${id}-h">${b.network} <span class="muted">(chain ${b.chainId})</span></h2>
${
  b.address
    ? html`<p>Funding address: <code id="${id}">${b.address}</code> <button type="button" class="copy" data-copy="#${id}">Copy</button></p>`
    : html`<p class="muted">No refund balance here: no relayer signs on this network (SERVICE_RELAYER_PRIVATE_KEY).</p>`
}
<div class="table-wrap" tabindex="0" role="region" aria-label="Balance of ${b.network} (scrolls sideways on small screens)"><table class="list balances">
<thead><tr><th scope="col">Token</th><th scope="col" class="num">Balance</th><th scope="col" class="num">Needed by waiting refunds</th><th scope="col">State</th></tr></thead>
<tbody>${b.tokens.map((t) => {
    const need = p.needs.find((n) => n.chainId === b.chainId && n.tokenAddress === t.tokenAddress);
    return html`<tr><td>${t.tokenSymbol} <span class="muted small mono">${t.tokenAddress}</span></td><td class="num">${t.balance ?? html`<span class="muted">not read (the network did not answer)</span>`}</td><td class="num">${need ? units(need.neededBaseUnits, t.decimals) : "0.00"}</td><td>${need?.low ? html`<strong class="low">Too low</strong>` : t.balance === null ? html`<span class="muted">—</span>` : "Enough"}</td></tr>`;
  })}</tbody></table></div>
${
  env === "sandbox" && b.address && faucetChains.has(b.chainId)
    ? html`<form method="post" action="/dashboard/sandbox/refund-balance/fund" class="inline">
  ${csrfField(login)}<input type="hidden" name="chainId" value="${String(b.chainId)}">
  <label for="fund-${b.chainId}">Amount</label> <input id="fund-${b.chainId}" name="amount" value="100.00" inputmode="decimal" size="8">
  <label for="fund-token-${b.chainId}">Token</label> <select id="fund-token-${b.chainId}" name="token">${b.tokens.map((t) => html`<option value="${t.tokenAddress}">${t.tokenSymbol}</option>`)}</select>
  <button type="submit" class="primary">Fund from faucet</button>
</form>`
    : ""
}
</section>`;
})}
<section aria-labelledby="waiting-h"><h2 id="waiting-h">Refunds waiting for money</h2>
${
  p.waiting.length === 0
    ? html`<p class="muted">None right now: no refund is held back for want of money.</p>`
    : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Refunds waiting (scrolls sideways on small screens)"><table class="list" id="waiting">
<thead><tr><th scope="col">Refund</th><th scope="col">Payment</th><th scope="col">State</th><th scope="col" class="num">Amount</th><th scope="col">Network</th><th scope="col">Created</th></tr></thead>
<tbody>${p.waiting.map(
        (r) => html`<tr><td><code>${r.refundId}</code></td><td><a class="mono" href="/dashboard/${env}/transactions/${r.paymentSessionId}#rf">${r.paymentSessionId}</a></td><td>${statusBadge(r.status)} <code class="small">${r.waitingReason ?? ""}</code></td><td class="num">${r.parts.map((x) => html`<div>${x.amount} ${x.tokenSymbol}</div>`)}</td><td>${r.network}</td><td>${timeTag(r.createdAt)}</td></tr>`,
      )}</tbody></table></div>`
}
</section>`;
}
