/**
 * The payer's payment-link page, rendered on the server (docs/payment-links.md): who is paid, for
 * what, how much (or a field for the amount, within the link's bounds), a button that starts the
 * payment, and a QR code of the page's own address (to carry it to a phone wallet's browser). No
 * script: the form works as plain HTML, and the wallet step is the hosted checkout's. Then the
 * receipt, the wait, or why the link starts nothing. Pure: a page from what the routes read.
 * Every value goes through html`…`, so a merchant's name or description is text.
 */
import { formatAmount } from "../../../shared/money.ts";
import { html, type Html } from "../dashboard/html.ts";
import type { LinkStatus } from "../payment-links/rules.ts";
import { qrPath } from "../checkout/client/qr.ts";

/** The stylesheet's version in its URL (it is cached for good): change it with it. */
export const PAY_ASSET_VERSION = "1";

export interface PageLink {
  id: string;
  merchantName: string;
  description: string;
  amountMinor: bigint | null;
  minAmountMinor: bigint | null;
  maxAmountMinor: bigint | null;
  currency: string;
  environment: "sandbox" | "production";
  expiresAt: Date | null;
}

function shell(title: string, body: Html, opts: { sandbox?: boolean; refreshSeconds?: number } = {}): Html {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><meta name="robots" content="noindex">${opts.refreshSeconds ? html`<meta http-equiv="refresh" content="${String(opts.refreshSeconds)}">` : ""}
<title>${title}</title><link rel="stylesheet" href="/pay/assets/pay.css?v=${PAY_ASSET_VERSION}"></head>
<body><main class="card">${opts.sandbox ? html`<p class="badge">Sandbox: test tokens only, nothing here has value</p>` : ""}${body}</main></body></html>`;
}

const when = new Intl.DateTimeFormat("en-GB", { dateStyle: "long", timeStyle: "short", timeZone: "UTC" });
const dateOf = (d: Date) => `${when.format(d)} UTC`;

function heading(p: PageLink, title: string): Html {
  return html`<p class="from">${p.merchantName}</p><h1>${title}</h1>`;
}

/** The page's address as a QR code: one SVG path, drawn here (no image request, no script). */
function qr(url: string): Html {
  const { size, d } = qrPath(url);
  return html`<figure class="qr"><svg viewBox="0 0 ${String(size)} ${String(size)}" role="img" aria-label="QR code of this page's address" shape-rendering="crispEdges"><rect width="${String(size)}" height="${String(size)}" fill="#ffffff"/><path d="${d}" fill="#0f172a"/></svg><figcaption>Scan to open this page on your phone</figcaption></figure>`;
}

const amountText = (minor: bigint, currency: string) => html`${formatAmount(minor)} <span class="unit">${currency}</span>`;

/** The link's page: what is paid for and the button; for a payer-chosen amount, its field. `error`/`value` after a refused amount. */
export function payForm(p: PageLink, opts: { url: string; visit: string; error?: string; value?: string }): Html {
  const fixed = p.amountMinor !== null;
  const field = fixed
    ? html`<dl class="facts"><div><dt>Amount</dt><dd class="amount">${amountText(p.amountMinor!, p.currency)}</dd></div></dl>`
    : html`<label for="amount">Amount (${p.currency})</label>
  <input id="amount" name="amount" type="text" inputmode="decimal" autocomplete="off" required placeholder="${formatAmount(p.minAmountMinor!)}" value="${opts.value ?? ""}"${
    opts.error ? html` aria-invalid="true" aria-describedby="amount-error"` : html` aria-describedby="amount-help"`
  }>
  ${opts.error ? html`<p id="amount-error" class="error" role="alert">${opts.error}</p>` : ""}
  <p id="amount-help" class="help">From ${formatAmount(p.minAmountMinor!)} to ${formatAmount(p.maxAmountMinor!)} ${p.currency}.</p>`;
  const body = html`${heading(p, fixed ? `Pay ${formatAmount(p.amountMinor!)} ${p.currency}` : "Pay")}
<p class="description">${p.description}</p>
<form method="post" class="pay" novalidate>
  <input type="hidden" name="visit" value="${opts.visit}">
  ${field}
  ${fixed && opts.error ? html`<p class="error" role="alert">${opts.error}</p>` : ""}
  <div class="row"><button type="submit" class="primary">Continue to payment</button></div>
  <p class="help">You pay in dollar stablecoins (USDC, USDT) from your wallet on the next page.</p>
</form>
${p.expiresAt ? html`<p class="small">This link can be used until ${dateOf(p.expiresAt)}.</p>` : ""}
${qr(opts.url)}`;
  return shell(`Pay ${p.merchantName}`, body, { sandbox: p.environment === "sandbox" });
}

/** A link that starts nothing (deactivated, expired, used up): said plainly, nothing started. */
export function closedPage(p: PageLink, status: Exclude<LinkStatus, "active">): Html {
  const [title, text] =
    status === "inactive"
      ? ["This payment link is no longer active", `${p.merchantName} has turned it off, so it takes no payments. Ask them for a new link if you still mean to pay.`]
      : status === "expired"
        ? ["This payment link has expired", `It could be used until ${p.expiresAt ? dateOf(p.expiresAt) : "a date that has passed"}. Ask ${p.merchantName} for a new link if you still mean to pay.`]
        : ["This payment link has been used", `It takes only as many payments as ${p.merchantName} allowed, and it has had them. If you expected to pay, ask them for a new link.`];
  return shell(title, html`${heading(p, title)}<p class="description">${p.description}</p><p>${text}</p><p class="small">Nothing was charged.</p>`, { sandbox: p.environment === "sandbox" });
}

export interface ReceiptFacts {
  paymentSessionId: string;
  amountMinor: bigint;
  currency: string;
  status: "PENDING" | "FUNDED" | "SUCCEEDED" | "CANCELED" | "ERROR";
  updatedAt: Date;
}

/** After the checkout: paid (the receipt), still waiting (the page looks again every few seconds, no script), or not paid. */
export function afterCheckout(p: PageLink, s: ReceiptFacts): Html {
  const facts = html`<dl class="facts">
  <div><dt>Amount</dt><dd class="amount">${amountText(s.amountMinor, s.currency)}</dd></div>
  <div><dt>For</dt><dd>${p.description}</dd></div>
  <div><dt>Payment</dt><dd><code>${s.paymentSessionId}</code></dd></div>
</dl>`;
  const sandbox = p.environment === "sandbox";
  switch (s.status) {
    case "SUCCEEDED":
    case "FUNDED":
      return shell("Payment received", html`${heading(p, "Payment received")}${facts}<p>Thank you: ${p.merchantName} has your payment (${dateOf(s.updatedAt)}). Keep this page's address, or the payment's id above, as your receipt.</p>`, { sandbox });
    case "PENDING":
      return shell(
        "Waiting for your payment",
        html`${heading(p, "Waiting for your payment")}${facts}<p>No payment has been confirmed yet. If you sent it, this page shows it here within a minute of its confirmation; it looks again by itself.</p><p class="small"><a href="/pay/${p.id}">Start again</a> if you have not paid.</p>`,
        { sandbox, refreshSeconds: 5 },
      );
    case "CANCELED":
      return shell(
        "Payment not completed",
        html`${heading(p, "This payment was not completed")}${facts}<p>It expired or was canceled before it was paid; nothing was charged (anything sent short of the amount is returned).</p><p class="small"><a href="/pay/${p.id}">Start a new payment</a></p>`,
        { sandbox },
      );
    case "ERROR":
      return shell("Payment needs attention", html`${heading(p, "This payment needs attention")}${facts}<p>Something went wrong with it on our side. ${p.merchantName} can see it and will sort it out; keep the payment's id above.</p>`, { sandbox });
  }
}

/** A link no page has (mistyped). */
export function notFound(): Html {
  return shell("Payment link not found", html`<h1>This payment link does not exist</h1><p>Check that you opened the whole link you were sent, or ask the merchant for it again.</p>`);
}

/** A visit refused before the link was judged: another site's form, too many starts, a body that is no form, a merchant that cannot take payments now. */
export function refused(title: string, text: string): Html {
  return shell(title, html`<h1>${title}</h1><p>${text}</p>`);
}
