/**
 * The payer's refund-link page, rendered on the server (docs/refunds.md, "Refund links"): who
 * refunds, how much of which token, on which network, until when; a form to paste an address
 * (it works without script); a "Connect wallet" button that assets/refund.js shows and wires
 * when the browser has a wallet. Then what became of the claim. Pure: a page from what
 * refunds/link-store.ts read. Every value goes through html`…`, so a merchant's name is text.
 */
import { formatUnitAmount } from "../../../shared/money.ts";
import { html, type Html } from "../dashboard/html.ts";
import type { LinkPage } from "../refunds/link-store.ts";
import type { ClaimAddress } from "../refunds/links.ts";
import { getAddress } from "viem";

/** The assets' version in their URLs (they are cached for good): change it with them. */
export const REFUND_ASSET_VERSION = "2";

function shell(title: string, body: Html, sandbox = false): Html {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><meta name="robots" content="noindex">
<title>${title}</title><link rel="stylesheet" href="/refund/assets/refund.css?v=${REFUND_ASSET_VERSION}"><script src="/refund/assets/refund.js?v=${REFUND_ASSET_VERSION}" defer></script></head>
<body><main class="card">${sandbox ? html`<p class="badge">Sandbox: test tokens only, nothing here has value</p>` : ""}${body}</main></body></html>`;
}

const when = new Intl.DateTimeFormat("en-GB", { dateStyle: "long", timeStyle: "short", timeZone: "UTC" });
const dateOf = (d: Date) => `${when.format(d)} UTC`;
const tokensOf = (p: LinkPage) => p.tokens.join(" + ");

function facts(p: LinkPage): Html {
  return html`<dl class="facts">
  <div><dt>Amount</dt><dd class="amount">${formatUnitAmount(p.amount, p.unitDecimals)} <span class="unit">${p.currency}</span></dd></div>
  <div><dt>Token</dt><dd>${tokensOf(p)}</dd></div>
  <div><dt>Network</dt><dd>${p.network}</dd></div>
</dl>`;
}

function heading(p: LinkPage, title: string): Html {
  return html`<p class="from">${p.merchantName}</p><h1>${title}</h1>`;
}

/** Why an address was refused, in the payer's words. */
export function addressProblemText(problem: Exclude<ClaimAddress, { ok: true }>["problem"], p: LinkPage): string {
  switch (problem) {
    case "malformed":
      return "That is not an address: paste the 0x address of your wallet, 42 characters.";
    case "checksum":
      return "That address has a typo: its mix of capital letters does not match (its checksum). Copy it again from your wallet.";
    case "zero":
      return "That is the zero address: nobody can spend what is sent there. Paste your own wallet's address.";
    case "vault":
      return `That is ${p.merchantName}'s refund balance, where the refund comes from. Paste your own wallet's address.`;
    case "token":
      return `That is the ${tokensOf(p)} token contract, not a wallet: money sent there is lost. Paste your own wallet's address.`;
    case "deposit":
      return "That is the payment address you paid to, not your wallet. Paste your own wallet's address.";
    case "contract":
      return "That is a contract (a token or one of this payment service's own), not a wallet: money sent there is lost. Paste your own wallet's address.";
  }
}

/** The open link: the facts and the form; `error` and `value` when a claim was refused. */
export function claimForm(p: LinkPage, opts: { error?: string; value?: string } = {}): Html {
  const body = html`${heading(p, "Claim your refund")}
${facts(p)}
<form method="post" class="claim" novalidate>
  <label for="address">Your wallet address on ${p.network}</label>
  <input id="address" name="address" type="text" inputmode="text" autocomplete="off" autocapitalize="off" spellcheck="false" placeholder="0x…" value="${opts.value ?? ""}"${
    opts.error ? html` aria-invalid="true" aria-describedby="address-error"` : html` aria-describedby="address-help"`
  }>
  ${opts.error ? html`<p id="address-error" class="error" role="alert">${opts.error}</p>` : ""}
  <p id="address-help" class="help">It must be able to receive ${tokensOf(p)} on ${p.network}. A refund cannot be reversed once sent.</p>
  <div class="row">
    <button id="connect" type="button" class="secondary" hidden>Connect wallet</button>
    <button type="submit" class="primary">Claim refund</button>
  </div>
  <p id="wallet-note" class="help" role="status"></p>
</form>
<p class="small">Claim by ${dateOf(p.expiresAt)}. The link works once.</p>`;
  return shell("Claim your refund", body, p.environment === "sandbox");
}

/** What the payer sees of a link that can no longer be claimed, or was. */
export function linkOutcome(p: LinkPage): Html {
  if (p.state === "CANCELED") {
    return shell("Refund canceled", html`${heading(p, "This refund was canceled")}${facts(p)}<p>${p.merchantName} canceled it; nothing was sent. Ask them if you expected it.</p>`, p.environment === "sandbox");
  }
  if (p.status === "expired") {
    return shell(
      "Refund link expired",
      html`${heading(p, "This refund link has expired")}${facts(p)}<p>It could be claimed until ${dateOf(p.expiresAt)}; nothing was sent. Ask ${p.merchantName} for a new link.</p>`,
      p.environment === "sandbox",
    );
  }
  const to = p.claimedAddress ? getAddress(p.claimedAddress) : "";
  const where =
    p.state === "SUCCEEDED"
      ? html`<p>It has arrived at <code>${to}</code>.</p>`
      : p.state === "SENT"
        ? html`<p>It has been sent to <code>${to}</code> and arrives within minutes.</p>`
        : p.state === "FAILED"
          ? html`<p>Sending it to <code>${to}</code> failed; nothing was paid. ${p.merchantName} can refund you again.</p>`
          : p.waitingReason === "awaiting_approval"
            ? html`<p>It goes to <code>${to}</code> once ${p.merchantName} has approved it.</p>`
            : html`<p>It is on its way to <code>${to}</code>.</p>`;
  return shell("Refund claimed", html`${heading(p, "Refund claimed")}${facts(p)}${where}<p class="small">This link has been used and cannot be claimed again.</p>`, p.environment === "sandbox");
}

/** A claim of a link already claimed (a second tab, a second person): nothing changed. */
export function alreadyClaimed(p: LinkPage): Html {
  return shell("Refund already claimed", html`${heading(p, "This refund has already been claimed")}${facts(p)}<p>Nothing was changed: a refund link works once. If it was not you, contact ${p.merchantName}.</p>`, p.environment === "sandbox");
}

/** A link no refund has (mistyped, or guessed). */
export function notFound(): Html {
  return shell("Refund link not found", html`<h1>This refund link does not exist</h1><p>Check that you opened the whole link you were sent, or ask the merchant for it again.</p>`);
}

/** A claim refused before the link was read: another site's form, too many claims, a body that is no form. */
export function refused(title: string, text: string): Html {
  return shell(title, html`<h1>${title}</h1><p>${text}</p>`);
}
