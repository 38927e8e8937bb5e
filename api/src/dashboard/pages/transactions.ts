/** Transactions: the filtered, searchable, paged list (its rows refresh by themselves) and the empty state. */
import { formatAmount } from "../../../../shared/money.ts";
import { SESSION_STATUSES } from "../../../../shared/status.ts";
import type { Environment } from "../../../../shared/environment.ts";
import type { DepositRow, SessionRow } from "../../sessions/views.ts";
import { html, type Html } from "../html.ts";
import { networkName, statusBadge, timeTag } from "../format.ts";
import type { Filters, Page } from "../transactions.ts";
import type { RefundStanding } from "../refunds.ts";

export function queryString(filters: Filters, extra: Record<string, string | undefined> = {}): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...filters, ...extra })) if (v) p.set(k, v);
  const s = p.toString();
  return s ? `?${s}` : "";
}

function networksOf(row: SessionRow, deposits: DepositRow[]): string {
  if (row.fundingChainId !== null) return networkName(row.fundingChainId);
  return deposits.map((d) => networkName(d.chainId)).join(", ") || "—";
}

const BADGE_WORDS = { refunded: "Refunded", partly_refunded: "Partly refunded" } as const;

/** The Refunded / Partly refunded badge with the amount refunded, under the session's status. */
function refundedBadge(s: RefundStanding | undefined): Html | string {
  if (!s?.badge) return "";
  return html`<br><span class="badge status-${s.badge}">${BADGE_WORDS[s.badge]}</span> <span class="small muted">${s.amountRefunded} refunded</span>`;
}

export function rows(env: Environment, page: Page, deposits: Map<string, DepositRow[]>, refunded: Map<string, RefundStanding> = new Map()): Html {
  return html`${page.rows.map(
    (r) => html`<tr>
  <td><a href="/dashboard/${env}/transactions/${r.id}" class="mono nowrap">${r.id}</a></td>
  <td>${statusBadge(r.status)}${refundedBadge(refunded.get(r.id))}</td>
  <td class="num">${formatAmount(r.amountMinor)}</td>
  <td class="wide-only">${r.currency}</td>
  <td class="wide-only">${networksOf(r, deposits.get(r.id) ?? [])}</td>
  <td class="ref">${r.referenceId ?? "—"}</td>
  <td>${timeTag(r.createdAt)}</td>
</tr>`,
  )}`;
}

export function transactionsBody(args: {
  env: Environment;
  filters: Filters;
  problems: string[];
  page: Page;
  deposits: Map<string, DepositRow[]>;
  refunded: Map<string, RefundStanding>;
  firstPage: boolean;
  anyAtAll: boolean;
  apiHost: string;
}): Html {
  const { env, filters, page } = args;
  const qs = queryString(filters);
  const emptyAccount = !args.anyAtAll;
  return html`
<form method="get" action="/dashboard/${env}/transactions" class="filters" role="search">
  <div><label for="q">Search</label><input id="q" name="q" value="${filters.q ?? ""}" placeholder="Session id, reference, deposit address or transaction hash"></div>
  <div><label for="status">Status</label><select id="status" name="status"><option value="">Any status</option>${SESSION_STATUSES.map(
    (s) => html`<option value="${s}"${filters.status === s ? html` selected` : ""}>${s}</option>`,
  )}</select></div>
  <div><label for="from">From</label><input id="from" name="from" type="date" value="${filters.from ?? ""}"></div>
  <div><label for="to">To</label><input id="to" name="to" type="date" value="${filters.to ?? ""}"></div>
  <div class="actions"><button type="submit" class="primary">Apply</button> <a href="/dashboard/${env}/transactions">Clear</a>
  <a href="/dashboard/${env}/transactions.csv${qs}" download>Export CSV</a></div>
</form>
${args.problems.map((p) => html`<div class="notice error" role="alert">${p}</div>`)}
${
  emptyAccount
    ? html`<div class="empty">
  <h2>No payments yet</h2>
  <p>Payment sessions your server creates appear here. Create an API key under <a href="/dashboard/${env}/settings/api-keys">Settings → API keys</a>, then create a first session:</p>
  <pre><code>curl -X POST ${args.apiHost}/payment-sessions \\
  -H "Authorization: Bearer $SERVICE_API_KEY" -H "Content-Type: application/json" \\
  -d '{"amount":"12.34","currency":"USD","referenceId":"order_1"}'</code></pre>
</div>`
    : page.rows.length === 0
      ? html`<div class="empty"><h2>No matching payments</h2><p>Nothing matches these filters. <a href="/dashboard/${env}/transactions">Show every payment</a>.</p></div>`
      : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Table (scrolls sideways on small screens)"><table class="list">
  <caption class="visually-hidden">Payment sessions, newest first</caption>
  <thead><tr><th scope="col">Session</th><th scope="col">Status</th><th scope="col" class="num">Amount</th><th scope="col" class="wide-only">Currency</th><th scope="col" class="wide-only">Network</th><th scope="col">Reference</th><th scope="col">Created</th></tr></thead>
  <tbody${args.firstPage ? html` data-refresh="/dashboard/${env}/transactions/rows${qs}" aria-live="polite"` : ""}>${rows(env, page, args.deposits, args.refunded)}</tbody>
</table></div>
<nav class="pager" aria-label="Pages">
  ${page.previous ? html`<a href="/dashboard/${env}/transactions${queryString(filters, { before: page.previous })}" rel="prev">← Newer</a>` : ""}
  ${!args.firstPage ? html`<a href="/dashboard/${env}/transactions${qs}">Newest</a>` : ""}
  ${page.next ? html`<a href="/dashboard/${env}/transactions${queryString(filters, { after: page.next })}" rel="next">Older →</a>` : ""}
</nav>
${args.firstPage ? html`<p class="muted small">This page refreshes by itself every 5 seconds.</p>` : ""}`
}`;
}
