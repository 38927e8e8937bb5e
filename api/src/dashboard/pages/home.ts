/**
 * Home: the period's received volume per day (an SVG chart drawn here, and the same numbers in
 * a table, which is the readable version), the sessions by status, the success rate, and the
 * payments that need attention, each linked to its page.
 */
import { formatAmount } from "../../../../shared/money.ts";
import type { Environment } from "../../../../shared/environment.ts";
import { SESSION_STATUSES } from "../../../../shared/status.ts";
import { formatUnits } from "../../checkout/client/text.ts";
import type { SessionRow } from "../../sessions/views.ts";
import { stackedBars } from "../chart.ts";
import { percent, PERIODS, type HomeFigures, type Period, type Series } from "../home-figures.ts";
import { ATTENTION_ROWS, FUNDED_TOO_LONG_MINUTES, type Attention } from "../home.ts";
import { html, type Html } from "../html.ts";
import { networkName, statusBadge, timeTag } from "../format.ts";

/** Series colours are classes (.s0 … .s5 in dashboard.css): the CSP allows no inline style. */
const COLOURS = 6;
const count = (n: number) => n.toLocaleString("en-US");

export function homeBody(args: { env: Environment; period: Period; figures: HomeFigures; attention: Attention; problem?: string }): Html {
  const { env, period, figures: f, attention } = args;
  const first = f.days[0]!;
  const last = f.days.at(-1)!;
  const list = (extra: Record<string, string>) => `/dashboard/${env}/transactions?${new URLSearchParams({ ...extra, from: first, to: last })}`;
  const attentionCount = f.byStatus.ERROR + attention.stuckCount;
  return html`
<nav class="period" aria-label="Period">
  <span class="muted">Period:</span>
  ${PERIODS.map((p) => html`<a href="/dashboard/${env}?days=${p}"${p === period ? html` aria-current="page"` : ""}>${p} days</a>`)}
  <span class="muted small">${first} to ${last}, UTC days, by when each session was created</span>
</nav>
${args.problem ? html`<div class="notice error" role="alert">${args.problem}</div>` : ""}
<dl class="facts summary-figures">
  <div><dt>Sessions created</dt><dd class="figure">${count(f.sessions)}</dd></div>
  <div><dt>Success rate</dt><dd class="figure">${f.success.perMille === null ? "—" : percent(f.success.perMille)}</dd>
    <dd class="small muted">${count(f.success.succeeded)} SUCCEEDED of ${count(f.success.ended)} ended</dd></div>
  <div><dt>Received</dt>${
    f.series.length
      ? f.series.map((s) => html`<dd class="figure-line"><span class="figure">${formatUnits(s.total, s.decimals)}</span> <span class="small">${s.label}</span></dd>`)
      : html`<dd class="figure">0.00</dd>`
  }</div>
  <div><dt>Needs attention</dt><dd class="figure"><a href="#attention">${count(attentionCount)}</a></dd></div>
</dl>

<section aria-labelledby="volume-h">
<h2 id="volume-h">Received per day</h2>
<p class="muted small">The confirmed payment of each session now FUNDED or SUCCEEDED, on the UTC day the session was created, by network and token.</p>
${f.series.length ? chart(f, period) : html`<div class="empty"><p>No payments received in these ${period} days.</p></div>`}
${f.series.length ? volumeTable(f) : ""}
</section>

<section aria-labelledby="status-h">
<h2 id="status-h">Sessions by status</h2>
<div class="status-grid">
<div class="table-wrap"><table class="list">
  <caption class="visually-hidden">Sessions created from ${first} to ${last} by status</caption>
  <thead><tr><th scope="col">Status</th><th scope="col" class="num">Sessions</th><th scope="col" class="num">Share</th></tr></thead>
  <tbody>${SESSION_STATUSES.map(
    (s) => html`<tr><td><a href="${list({ status: s })}">${statusBadge(s)}</a></td><td class="num">${count(f.byStatus[s])}</td><td class="num">${
      f.sessions ? percent(Math.round((f.byStatus[s] * 1000) / f.sessions)) : "—"
    }</td></tr>`,
  )}</tbody>
  <tfoot><tr><th scope="row">All</th><td class="num">${count(f.sessions)}</td><td></td></tr></tfoot>
</table></div>
<p class="small"><strong>Success rate</strong> = SUCCEEDED ÷ sessions that ended (SUCCEEDED, CANCELED or ERROR), among
the sessions created in these ${period} days. PENDING and FUNDED sessions have not ended yet and count in neither.</p>
</div>
</section>

<section aria-labelledby="attention-h" id="attention">
<h2 id="attention-h">Needs attention</h2>
${
  attentionCount === 0
    ? html`<p>Nothing needs attention: no ERROR session created in these ${period} days, and no session FUNDED for more than ${FUNDED_TOO_LONG_MINUTES} minutes.</p>`
    : ""
}
${
  f.byStatus.ERROR
    ? html`<h3>ERROR, created in these ${period} days: ${count(f.byStatus.ERROR)}</h3>
${sessionsTable(env, attention.errors.map((s) => ({ session: s })), "ERROR sessions, newest first", false)}
${f.byStatus.ERROR > ATTENTION_ROWS ? html`<p><a href="${list({ status: "ERROR" })}">All ${count(f.byStatus.ERROR)} ERROR sessions →</a></p>` : ""}`
    : ""
}
${
  attention.stuckCount
    ? html`<h3>FUNDED for more than ${FUNDED_TOO_LONG_MINUTES} minutes: ${count(attention.stuckCount)}</h3>
<p class="small muted">Paid, but not swept to your settlement address yet. A sweep normally follows within minutes; an hour
means it is held up (the network's relayer out of gas, the sweeper stopped). Whenever the session was created.</p>
${sessionsTable(env, attention.stuck, "FUNDED sessions waiting longest first", true)}
${attention.stuckCount > ATTENTION_ROWS ? html`<p><a href="/dashboard/${env}/transactions?status=FUNDED">All FUNDED sessions →</a></p>` : ""}`
    : ""
}
</section>`;
}

function sessionsTable(env: Environment, rows: { session: SessionRow; fundedAt?: Date }[], caption: string, funded: boolean): Html {
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label="${caption} (scrolls sideways on small screens)"><table class="list">
  <caption class="visually-hidden">${caption}</caption>
  <thead><tr><th scope="col">Session</th><th scope="col">${funded ? "FUNDED since" : "Reason"}</th><th scope="col" class="num">Amount</th><th scope="col" class="wide-only">Network</th><th scope="col">Created</th></tr></thead>
  <tbody>${rows.map(
    ({ session: s, fundedAt }) => html`<tr>
  <td><a href="/dashboard/${env}/transactions/${s.id}" class="mono nowrap">${s.id}</a></td>
  <td>${funded ? timeTag(fundedAt) : s.statusReason}</td>
  <td class="num">${formatAmount(s.amountMinor)} ${s.currency}</td>
  <td class="wide-only">${s.fundingChainId === null ? "—" : networkName(s.fundingChainId)}</td>
  <td>${timeTag(s.createdAt)}</td>
</tr>`,
  )}</tbody>
</table></div>`;
}

const units = (s: Series, d: number) => Number(s.perDay[d]!) / 10 ** s.decimals;

function chart(f: HomeFigures, period: Period): Html {
  const c = stackedBars({ days: f.days, series: f.series.map((s) => f.days.map((_, d) => units(s, d))) });
  const cls = (i: number) => `s${i % COLOURS}`;
  return html`<figure class="chart">
<svg viewBox="0 0 ${c.width} ${c.height}" role="img" aria-labelledby="chart-title chart-desc" data-bars="${c.bars.length}">
  <title id="chart-title">Received per day over ${period} days, by network and token</title>
  <desc id="chart-desc">Stacked bars, one per UTC day from ${f.days[0]} to ${f.days.at(-1)}, in token units (dollar stablecoins). The table below gives every number.</desc>
  ${c.ticks.map((t) => html`<line class="grid" x1="${c.plot.left}" x2="${c.plot.right}" y1="${t.y}" y2="${t.y}"></line><text class="tick" x="${c.plot.left - 6}" y="${t.y + 4}" text-anchor="end">${t.label}</text>`)}
  ${c.bars.map((b) => {
    const s = f.series[b.series]!;
    return html`<rect class="bar ${cls(b.series)}" x="${b.x}" y="${b.y}" width="${b.width}" height="${b.height}"><title>${f.days[b.day]}, ${s.label}: ${formatUnits(s.perDay[b.day]!, s.decimals)}</title></rect>`;
  })}
  <line class="axis" x1="${c.plot.left}" x2="${c.plot.right}" y1="${c.plot.bottom}" y2="${c.plot.bottom}"></line>
  ${c.labels.map((l) => html`<text class="day" x="${l.x}" y="${c.plot.bottom + 18}" text-anchor="middle">${l.text}</text>`)}
</svg>
<figcaption><ul class="legend">${f.series.map((s, i) => html`<li><span class="swatch ${cls(i)}" aria-hidden="true"></span>${s.label}</li>`)}</ul></figcaption>
</figure>`;
}

function volumeTable(f: HomeFigures): Html {
  return html`<div class="table-wrap tall" tabindex="0" role="region" aria-label="Received per day (scrolls)"><table class="list volume">
  <caption class="visually-hidden">Received per UTC day, by network and token</caption>
  <thead><tr><th scope="col">Day (UTC)</th>${f.series.map((s) => html`<th scope="col" class="num">${s.label}</th>`)}</tr></thead>
  <tbody>${f.days
    .map((day, d) => html`<tr><th scope="row" class="nowrap">${day}</th>${f.series.map((s) => html`<td class="num">${formatUnits(s.perDay[d]!, s.decimals)}</td>`)}</tr>`)
    .reverse()}</tbody>
  <tfoot><tr><th scope="row">Total</th>${f.series.map((s) => html`<td class="num">${formatUnits(s.total, s.decimals)}</td>`)}</tr></tfoot>
</table></div>`;
}
