/**
 * Paying a refund from the merchant's own wallet (docs/refunds.md, "From the merchant's own
 * wallet"): what the wallet must pay — from the session's settlement address, to the refund's
 * destination, the exact amount — and a button that asks the page's injected wallet
 * (assets/refund-wallet.js) to sign the TransferWithAuthorization (a USDC-like token) or send the
 * ERC-20 transfer itself (a USDT-like token). The script fills the form below and posts it with the
 * CSRF token; the merchant's key never leaves the wallet. The facts the script needs are data-*
 * attributes (the CSP allows no inline script).
 */
import type { Environment } from "../../../../shared/environment.ts";
import { formatUnitAmount } from "../../../../shared/money.ts";
import { WALLET_WINDOW_MAX_SECONDS } from "../../refunds/wallet.ts";
import type { WalletRefund } from "../../refunds/wallet-store.ts";
import type { MerchantSessionView } from "../../sessions/views.ts";
import { html, type Html } from "../html.ts";
import { addressLink, networkName, statusBadge } from "../format.ts";
import { ASSET_VERSION, csrfField } from "../layout.ts";
import type { Login } from "../logins.ts";

/** The validity window the page asks the wallet to sign: ten minutes, well inside what the service accepts. */
export const WALLET_WINDOW_SECONDS = 600;

export function refundWalletBody(env: Environment, login: Login, v: MerchantSessionView, w: WalletRefund, error?: string): Html {
  const base = `/dashboard/${env}/transactions/${v.paymentSessionId}`;
  const p = w.payment;
  const part = w.refund.parts[0]!;
  const amount = `${formatUnitAmount(BigInt(part.amount), w.refund.unitDecimals)} ${part.symbol}`;
  const d = w.domain;
  return html`<section class="card confirm" aria-labelledby="wallet-h">
<h2 id="wallet-h" class="h3">What your wallet pays</h2>
<dl class="facts">
  <div><dt>Refund</dt><dd><code>${w.refund.id}</code> ${statusBadge(w.refund.state)}</dd></div>
  <div><dt>Amount</dt><dd id="wallet-amount"><strong>${amount}</strong> <span class="muted">(${p.value.toString()} base units)</span></dd></div>
  <div><dt>Network</dt><dd>${networkName(p.chainId)} <span class="muted">(chain ${p.chainId})</span></dd></div>
</dl>
<div class="table-wrap" tabindex="0" role="region" aria-label="The transfer (scrolls sideways on small screens)"><table class="list" id="wallet-transfer">
<thead><tr><th scope="col">From (your settlement address)</th><th scope="col">To (the address that paid)</th><th scope="col" class="num">Amount</th></tr></thead>
<tbody><tr><td id="wallet-from">${addressLink(p.chainId, p.from)}</td><td id="wallet-to">${addressLink(p.chainId, p.to)}</td><td class="num">${amount}</td></tr></tbody>
</table></div>
${
  w.kind === "authorization"
    ? html`<p class="small">Your wallet signs a <strong>TransferWithAuthorization</strong> of exactly this amount from your settlement address to the payer, valid for ${String(WALLET_WINDOW_SECONDS / 60)} minutes (the service accepts at most ${String(Number(WALLET_WINDOW_MAX_SECONDS) / 60)} minutes). The service's relayer submits it and pays the gas; your key never leaves the wallet.</p>`
    : html`<p class="small">This token has no signed authorizations: your wallet <strong>sends the transfer itself</strong> (you pay its gas), and the service follows the transaction until it is confirmed.</p>`
}
<p class="small">The wallet's account must be your settlement address, <code>${p.from}</code>.</p>
${error ? html`<div class="notice error" role="alert" id="wallet-error">${error}</div>` : ""}
<div class="notice error" role="alert" id="wallet-problem" hidden></div>
<p class="muted small" id="wallet-status" role="status"></p>
${
  w.waiting
    ? html`<form method="post" action="${base}/refunds/${w.refund.id}/wallet" class="stack" id="wallet-form"
  data-kind="${w.kind}" data-chain-id="${String(p.chainId)}" data-from="${p.from}" data-to="${p.to}" data-token="${p.token}" data-value="${p.value.toString()}"
  data-window="${String(WALLET_WINDOW_SECONDS)}"${d ? html` data-domain-name="${d.name}" data-domain-version="${d.version}"` : ""}>
  ${csrfField(login)}
  <input type="hidden" name="kind" value="${w.kind}">
  ${
    w.kind === "authorization"
      ? html`<input type="hidden" name="from"><input type="hidden" name="to"><input type="hidden" name="value"><input type="hidden" name="validAfter"><input type="hidden" name="validBefore"><input type="hidden" name="nonce"><input type="hidden" name="signature">`
      : html`<input type="hidden" name="txHash">`
  }
  <div class="buttons"><button type="button" class="primary" id="wallet-pay">${w.kind === "authorization" ? "Sign in my wallet" : "Send from my wallet"}</button> <a href="${base}#rf" class="button-link">Back to the payment</a></div>
  <p class="muted small">Needs a browser wallet (an EIP-1193 provider such as MetaMask or Rabby). Changed your mind? Cancel the refund on the payment's page: nothing was paid.</p>
</form>
<script src="/dashboard/assets/refund-wallet.js?v=${ASSET_VERSION}"></script>`
    : html`<p>This refund no longer waits for your wallet. <a href="${base}#rf">Back to the payment</a></p>`
}
</section>`;
}
