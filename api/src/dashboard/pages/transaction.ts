/** One transaction: summary, timeline in plain words, deposit addresses, transfers and sweep, webhook deliveries, sandbox tools. */
import type { Environment } from "../../../../shared/environment.ts";
import { presetByChainId } from "../../../../shared/chains/presets.ts";
import { html, type Html } from "../html.ts";
import { addressLink, networkName, statusBadge, timeTag, txLink } from "../format.ts";
import { describe, refundItems, tokenAmount } from "../timeline.ts";
import { sessionRefundsSection } from "./refund.ts";
import { autoReturnsSection } from "./auto-returns.ts";
import type { TransactionDetail } from "../detail.ts";
import type { Login } from "../logins.ts";
import { csrfField } from "../layout.ts";
import { checksummed } from "../../sessions/views.ts";
import { deliveryState, endpointName } from "./events.ts";

/** A row of the transfers table: a ledger movement, or a payment seen but not confirmed yet. */
interface TransferLine {
  chainId: number;
  direction: "in" | "out";
  txHash: string;
  amount: string;
  at: Date;
  reverted: boolean;
  confirming: boolean;
  /** The sender (the payer, for a payment); null when the index does not have it. */
  from: string | null;
  confirmations: number | null;
  /** "authorization": the payer's signed authorization moved it straight to the settlement address (in and settled in one transaction). */
  method: "transfer" | "authorization";
  /** A payment's stablecoin (lowercase); null when not known (money out: a sweep may move several). */
  token: string | null;
}

/** The ledger's movements with the index's sender and depth, then the payments still confirming. */
export function transferLines(d: Pick<TransactionDetail, "funds" | "moves">): TransferLine[] {
  const key = (chainId: number, direction: string, txHash: string, logIndex: number) => `${chainId}:${direction}:${txHash.toLowerCase()}:${direction === "in" ? logIndex : ""}`;
  const moves = new Map(d.moves.map((m) => [key(m.chainId, m.direction, m.txHash, m.logIndex), m]));
  const lines: TransferLine[] = d.funds.map((f) => {
    const k = key(f.chainId, f.direction, f.txHash, f.logIndex);
    const m = moves.get(k);
    moves.delete(k);
    return { ...f, confirming: false, from: m?.from ?? null, confirmations: m?.confirmations ?? null, method: m?.method ?? "transfer", token: f.direction === "in" ? (m?.token ?? f.token) : null };
  });
  for (const m of moves.values()) {
    if (m.direction !== "in") continue; // a sweep in flight shows under Sweep
    lines.push({ chainId: m.chainId, direction: "in", txHash: m.txHash, amount: m.amount, at: m.at, reverted: false, confirming: true, from: m.from, confirmations: m.confirmations, method: m.method, token: m.token });
  }
  return lines;
}

function confirmations(n: number | null, needed: number | undefined): Html | string {
  if (n === null) return html`<span class="muted">—</span>`;
  return needed !== undefined && n < needed ? html`${n} <span class="muted">of ${needed} needed</span>` : String(n);
}

export const SANDBOX_TOOLS = {
  pay: "Pay it (from the faucet)",
  expire: "Expire it now",
  "fail-next-sweep": "Make the next sweep fail",
  "simulate-error": "Send it to ERROR",
} as const;
export type SandboxTool = keyof typeof SANDBOX_TOOLS;
/** SANDBOX_TOOLS's names, in order. */
const SANDBOX_TOOL_NAMES: readonly SandboxTool[] = ["pay", "expire", "fail-next-sweep", "simulate-error"];

/**
 * The tools that apply to a session in this status (the API refuses the others): paying works
 * in any status (after a cancel it shows what late money does); expiring and sending to ERROR
 * need PENDING; a sweep to fail needs PENDING or FUNDED.
 */
export function sandboxToolsFor(status: string): SandboxTool[] {
  return SANDBOX_TOOL_NAMES.filter((t) =>
    t === "pay" ? true : t === "fail-next-sweep" ? status === "PENDING" || status === "FUNDED" : status === "PENDING",
  );
}

export function transactionBody(env: Environment, login: Login, d: TransactionDetail): Html {
  const v = d.view;
  const first = v.networks[0];
  const decimalsOf = (chainId: number) => v.networks.find((n) => n.chainId === chainId)?.decimals ?? presetByChainId(chainId)?.stablecoins[0].decimals ?? 6;
  const symbolOf = (chainId: number, token?: string | null) => {
    const n = v.networks.find((x) => x.chainId === chainId);
    // A payment's own stablecoin when known; else the network's main one (its amounts are in its unit).
    return (token && n?.tokens.find((t) => t.tokenAddress.toLowerCase() === token)?.tokenSymbol) ?? n?.tokenSymbol ?? "tokens";
  };
  const ctxFor = (detail: Record<string, unknown>) => {
    const chainId = typeof detail.chainId === "number" ? detail.chainId : (first?.chainId ?? 0);
    return { amount: v.amount, currency: v.currency, decimals: decimalsOf(chainId), symbol: symbolOf(chainId) };
  };
  const base = `/dashboard/${env}/transactions/${v.paymentSessionId}`;
  const meta = Object.entries(v.metadata ?? {});
  const lines = transferLines(d);
  const payers = [...new Map(d.moves.filter((m) => m.direction === "in").map((m) => [`${m.chainId}:${m.from}`, m])).values()];
  const needed = (chainId: number) => v.networks.find((n) => n.chainId === chainId)?.confirmations;
  return html`
<section class="summary card">
  <dl class="facts">
    <div><dt>Status</dt><dd>${statusBadge(v.status)} <span class="muted">(${v.statusReason})</span></dd></div>
    <div><dt>Amount</dt><dd>${v.amount} ${v.currency}</dd></div>
    <div><dt>Reference</dt><dd class="ref">${v.referenceId ?? "—"}</dd></div>
    ${v.paymentLinkId ? html`<div><dt>Payment link</dt><dd><a href="/dashboard/${env}/payment-links/${v.paymentLinkId}"><code>${v.paymentLinkId}</code></a></dd></div>` : ""}
    <div><dt>Created</dt><dd>${timeTag(v.createdAt)}</dd></div>
    <div><dt>Expires</dt><dd>${timeTag(v.expiresAt)}</dd></div>
    <div><dt>Session id</dt><dd><code id="sid">${v.paymentSessionId}</code> <button type="button" class="copy" data-copy="#sid">Copy</button></dd></div>
    <div><dt>Paid from</dt><dd>${payers.length ? payers.map((m) => html`<div>${addressLink(m.chainId, checksummed(m.from))}${m.method === "authorization" ? html` <span class="muted">by signed authorization</span>` : ""}</div>`) : html`<span class="muted">no payment seen yet</span>`}</dd></div>
  </dl>
  ${v.status === "PENDING" ? html`<p class="cancel-link"><a href="${base}/cancel">Cancel this payment…</a></p>` : ""}
  ${meta.length ? html`<h2 class="h3">Metadata</h2><table class="kv"><tbody>${meta.map(([k, val]) => html`<tr><th scope="row">${k}</th><td>${val}</td></tr>`)}</tbody></table>` : ""}
</section>

<section aria-labelledby="tl"><h2 id="tl">Timeline</h2>
<ol class="timeline">${[...(v.history ?? []).map((h) => describe(h, ctxFor(h.detail))), ...refundItems(d.refunds)]
    // The session's history and its refunds' steps, by time (a stable sort keeps each one's own order).
    .sort((a, b) => Date.parse(a.at) - Date.parse(b.at))
    .map((item) => html`<li><div class="when">${timeTag(item.at)}</div><div>${statusBadge(item.status)} <strong>${item.title}</strong><p>${item.text}</p></div></li>`)}</ol></section>

${sessionRefundsSection(env, login, v, d.refunds, d.refundable)}
${autoReturnsSection(env, login, v.paymentSessionId, d.autoReturns)}

<section aria-labelledby="nets"><h2 id="nets">Where to pay</h2>
<div class="table-wrap" tabindex="0" role="region" aria-label="Table (scrolls sideways on small screens)"><table class="list"><thead><tr><th scope="col">Network</th><th scope="col">Deposit address</th><th scope="col">Amount</th><th scope="col">Settles to</th></tr></thead><tbody>
${v.networks.map(
  (n) => html`<tr><td>${n.network}</td><td>${addressLink(n.chainId, n.depositAddress)}</td><td class="num">${tokenAmount(n.amountBaseUnits, n.decimals)} ${n.tokenSymbol}</td><td>${n.settlementAddress ? addressLink(n.chainId, n.settlementAddress) : "—"}</td></tr>`,
)}
</tbody></table></div></section>

<section aria-labelledby="tx"><h2 id="tx">On-chain transfers</h2>
${
  lines.length
    ? html`<div class="table-wrap" tabindex="0" role="region" aria-label="Table (scrolls sideways on small screens)"><table class="list"><thead><tr><th scope="col">What</th><th scope="col">Network</th><th scope="col" class="num">Amount</th><th scope="col">From</th><th scope="col" class="num">Confirmations</th><th scope="col">Transaction</th><th scope="col">When</th></tr></thead><tbody>
${lines.map(
  (f) => html`<tr${f.reverted ? html` class="reverted"` : ""}><td>${f.direction === "in" ? (f.method === "authorization" ? "Payment by authorization" : "Payment in") : f.method === "authorization" ? "Settled by that payment (no sweep)" : "Sweep to settlement"}${f.reverted ? " (undone)" : f.confirming ? " (confirming)" : ""}</td><td>${networkName(f.chainId)}</td><td class="num">${tokenAmount(f.amount, decimalsOf(f.chainId))} ${symbolOf(f.chainId, f.token)}</td><td>${f.from ? addressLink(f.chainId, checksummed(f.from)) : html`<span class="muted">—</span>`}</td><td class="num">${confirmations(f.confirmations, needed(f.chainId))}</td><td>${txLink(f.chainId, f.txHash)}</td><td>${timeTag(f.at)}</td></tr>`,
)}</tbody></table></div>`
    : html`<p class="muted">No transfer has been seen yet.</p>`
}
${
  d.sweeps.length
    ? html`<h3>Sweep</h3><ul class="plain">${d.sweeps.map(
        (w) =>
          html`<li>${networkName(w.chainId)}: <strong>${w.state}</strong> (${tokenAmount(w.sweptAmount ?? w.amount, decimalsOf(w.chainId))} ${symbolOf(w.chainId, w.token)}, ${w.attempts} attempt${w.attempts === 1 ? "" : "s"})${
            w.txHash ? html` — sweep transaction ${txLink(w.chainId, w.txHash)}` : ""
          }${w.lastError ? html` <span class="muted">last error: ${w.lastError}</span>` : ""}</li>`,
      )}</ul>`
    : ""
}
</section>

<section aria-labelledby="wh"><h2 id="wh">Webhook deliveries</h2>
${
  d.endpoints.size === 0
    ? html`<p class="muted">No webhook endpoint in this environment. <a href="/dashboard/${env}/settings/webhooks">Add one</a> to be told of every status change.</p>`
    : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Table (scrolls sideways on small screens)"><table class="list"><thead><tr><th scope="col">Event</th><th scope="col">Deliveries</th><th scope="col">Attempts</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead><tbody>
${d.events.map(
  ({ event, deliveries, attempts }) => html`<tr>
  <td><code>${event.id}</code><br>${statusBadge(event.status)} ${event.reason}</td>
  <td>${deliveries.length ? deliveries.map((x) => html`<div>${endpointName(env, d.endpoints, x.webhookEndpointId, x.webhookEndpointId)}: ${deliveryState(x)}${x.lastStatusCode ? ` (HTTP ${x.lastStatusCode})` : ""}</div>`) : html`<span class="muted">none</span>`}</td>
  <td>${attempts.length ? attempts.map((a) => html`<div class="attempt">${timeTag(a.createdAt)} ${a.succeeded ? "✓" : "✗"} ${a.statusCode ? `HTTP ${a.statusCode}` : (a.error ?? "")} <span class="muted">${a.latencyMs} ms</span> → ${endpointName(env, d.endpoints, a.endpointId, a.url)}</div>`) : html`<span class="muted">none yet</span>`}</td>
  <td><form method="post" action="${base}/events/${event.id}/redeliver">${csrfField(login)}<button type="submit">Redeliver</button></form></td>
</tr>`,
)}</tbody></table></div>`
}
</section>

${
  env === "sandbox"
    ? html`<section aria-labelledby="sb" class="sandbox-tools card"><h2 id="sb">Sandbox tools</h2>
<p class="muted">Real transactions on the test network: the session moves on by itself, as it would with a real payer.</p>
<div class="buttons">${sandboxToolsFor(v.status).map(
        (t) => html`<form method="post" action="${base}/sandbox/${t}">${csrfField(login)}<button type="submit">${SANDBOX_TOOLS[t]}</button></form>`,
      )}</div></section>`
    : ""
}`;
}
