/** Events: every event of the environment (its sessions' and their refunds') with its deliveries and attempts to each endpoint, filters, Redeliver. */
import type { Environment } from "../../../../shared/environment.ts";
import { eventType } from "../../webhooks/payload.ts";
import type { AttemptRow } from "../../webhooks/attempts.ts";
import type { EndpointRow } from "../../webhooks/endpoints.ts";
import { EVENT_REASONS, SESSION_STATUSES } from "../../../../shared/status.ts";
import type { EventRow } from "../../sessions/views.ts";
import { html, type Html } from "../html.ts";
import { statusBadge, timeTag } from "../format.ts";
import { csrfField } from "../layout.ts";
import type { Login } from "../logins.ts";
import type { DeliveryView } from "../../webhooks/events.ts";
import { DELIVERY_FILTER_NAMES, DELIVERY_FILTERS, LISTED_TYPES, type EventFilters, type EventLine, type EventsPage } from "../events.ts";

/** `?type=…&status=…` of these filters (and extras such as the cursor); empty when none. */
export function eventsQuery(filters: EventFilters, extra: Record<string, string | undefined> = {}): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...filters, ...extra })) if (v) p.set(k, v);
  const s = p.toString();
  return s ? `?${s}` : "";
}

/** What an attempt came to: the HTTP status, or why there was none. */
function result(a: AttemptRow): Html {
  const what = a.statusCode ? `HTTP ${a.statusCode}` : (a.error ?? "no answer");
  return html`<span class="${a.succeeded ? "ok-text" : "error-text"}">${a.succeeded ? "✓" : "✗"} ${what}</span>`;
}

/** The first 1 KB of the answer: short ones inline, longer ones folded. */
export function excerpt(text: string | null): Html {
  if (!text) return html`<span class="muted">—</span>`;
  const oneLine = text.replace(/\s+/g, " ").trim();
  if (oneLine.length <= 60) return html`<code class="excerpt">${oneLine}</code>`;
  return html`<details class="excerpt"><summary><code>${oneLine.slice(0, 60)}…</code></summary><pre><code>${text}</code></pre></details>`;
}

/** A delivery's state in words (webhook_deliveries.state): where it stands for this endpoint. */
export function deliveryState(d: DeliveryView): Html {
  switch (d.state) {
    case "waiting":
      return html`<strong>waiting</strong> <span class="muted">for this session's earlier events</span>`;
    case "pending":
      return d.attempts > 0 ? html`<strong>retrying</strong>${d.nextAttemptAt ? html` <span class="muted">next ${timeTag(d.nextAttemptAt)}</span>` : ""}` : html`<strong>queued</strong>`;
    case "succeeded":
      return html`<strong>delivered</strong>`;
    case "failed":
      return html`<strong>failed</strong> <span class="muted">(gave up after its retries)</span>`;
    case "canceled":
      return html`<strong>canceled</strong> <span class="muted">(endpoint disabled or deleted)</span>`;
    default:
      return html`<strong>${d.state}</strong>`;
  }
}

export function endpointName(env: Environment, endpoints: Map<string, EndpointRow>, id: string, url: string): Html {
  const e = endpoints.get(id);
  return e ? html`<a href="/dashboard/${env}/settings/webhooks/${id}" class="mono">${e.url}</a>` : html`<span class="mono">${url}</span> <span class="muted">(deleted)</span>`;
}

/** The event's webhook type; a stored status this build does not know shows as it is stored. */
function typeOf(e: EventRow): string {
  const status = SESSION_STATUSES.find((s) => s === e.status);
  return status ? eventType(status, EVENT_REASONS.find((r) => r === e.reason)) : e.status;
}

/** A refund event's stored data, read with care: what the line shows of the refund at that step. */
function refundFacts(data: Record<string, unknown>): { refundId: string; status: string; money: string; reason: string } {
  const str = (k: string) => (typeof data[k] === "string" ? (data[k] as string) : "");
  return { refundId: str("refundId"), status: str("status") || "—", money: str("amount") ? `${str("amount")} ${str("currency")}` : "", reason: str("reason") };
}

/** The line's head: the type, the state, and which session (and refund) it is of. */
function head(env: Environment, l: EventLine): Html {
  const e = l.event;
  const ref = l.referenceId ? html` · reference <span class="ref">${l.referenceId}</span>` : "";
  const session = html`session <a href="/dashboard/${env}/transactions/${e.sessionId}" class="mono">${e.sessionId}</a>`;
  if (l.kind === "session") {
    return html`<div class="event-head">
  <code class="type">${typeOf(l.event)}</code> ${statusBadge(l.event.status)} <span class="muted">${l.event.reason}</span>
  <span class="when">${timeTag(e.createdAt)}</span>
</div>
<p class="event-ids small">Event <code>${e.id}</code> · ${session}${ref}</p>`;
  }
  const r = refundFacts(l.event.data);
  return html`<div class="event-head">
  <code class="type">${l.event.type}</code> ${statusBadge(r.status)} <span class="muted">${r.money}${r.reason ? html` · ${r.reason}` : ""}</span>
  <span class="when">${timeTag(e.createdAt)}</span>
</div>
<p class="event-ids small">Event <code>${e.id}</code> · refund <a href="/dashboard/${env}/transactions/${e.sessionId}#${l.event.refundId}" class="mono">${l.event.refundId}</a> of ${session}${ref}</p>`;
}

function line(env: Environment, login: Login, endpoints: Map<string, EndpointRow>, filters: EventFilters, cursor: string | undefined, l: EventLine): Html {
  const e = l.event;
  const enabled = [...endpoints.values()].filter((x) => x.enabled);
  return html`<li class="card event" id="${e.id}">
${head(env, l)}
${
  l.deliveries.length === 0
    ? html`<p class="muted">Not sent: no webhook endpoint was enabled when it happened. Redeliver sends it now.</p>`
    : html`<p class="small">${l.deliveries.map(
        (d) => html`<span class="delivery">${endpointName(env, endpoints, d.webhookEndpointId, d.webhookEndpointId)}: ${deliveryState(d)}${d.ordered ? "" : " (redelivery)"}</span> `,
      )}</p>`
}
${
  l.attempts.length
    ? html`<div class="table-wrap" tabindex="0" role="region" aria-label="Attempts of ${e.id}"><table class="list attempts"><thead><tr><th scope="col">When</th><th scope="col">Endpoint</th><th scope="col">Result</th><th scope="col" class="num">Latency</th><th scope="col">Response</th></tr></thead><tbody>
${l.attempts.map(
  (a) => html`<tr><td class="nowrap">${timeTag(a.createdAt)}</td><td>${endpointName(env, endpoints, a.endpointId, a.url)}${a.kind === "redelivery" ? html` <span class="muted">(redelivery)</span>` : ""}</td><td>${result(a)}</td><td class="num">${a.latencyMs} ms</td><td>${excerpt(a.responseExcerpt)}</td></tr>`,
)}</tbody></table></div>${l.moreAttempts ? html`<p class="muted small">Older attempts are on each endpoint's page.</p>` : ""}`
    : l.deliveries.length
      ? html`<p class="muted">No attempt yet.</p>`
      : ""
}
${
  enabled.length
    ? html`<form method="post" action="/dashboard/${env}/events/${e.id}/redeliver" class="inline redeliver">
  ${csrfField(login)}
  ${hiddenFilters(filters, cursor)}
  <label for="to-${e.id}">Redeliver to</label>
  <select id="to-${e.id}" name="endpoint"><option value="">every enabled endpoint</option>${enabled.map((x) => html`<option value="${x.id}">${x.url}</option>`)}</select>
  <button type="submit">Redeliver</button>
</form>`
    : html`<p class="muted small">No enabled endpoint to redeliver to. <a href="/dashboard/${env}/settings/webhooks">Add one</a>.</p>`
}
</li>`;
}

/** The page's filters ride along with a redelivery, so the page comes back as it was. */
function hiddenFilters(filters: EventFilters, cursor: string | undefined): Html {
  const fields = { ...filters, after: cursor };
  return html`${Object.entries(fields).map(([k, v]) => (v ? html`<input type="hidden" name="${k}" value="${v}">` : ""))}`;
}

export function eventsBody(args: {
  env: Environment;
  login: Login;
  filters: EventFilters;
  cursor?: string;
  problems: string[];
  page: EventsPage;
  endpoints: Map<string, EndpointRow>;
}): Html {
  const { env, filters, page } = args;
  const filtered = !!(filters.type || filters.status || filters.session);
  return html`
<p>Every event of this environment's payments and their refunds, newest first, with its delivery to each webhook endpoint: every attempt, its answer, and a way to send it again.</p>
<form method="get" action="/dashboard/${env}/events" class="filters" role="search">
  <div><label for="type">Type</label><select id="type" name="type"><option value="">Any type</option>${LISTED_TYPES.map(
    (t) => html`<option value="${t}"${filters.type === t ? html` selected` : ""}>${t}</option>`,
  )}</select></div>
  <div><label for="status">Delivery</label><select id="status" name="status"><option value="">Any delivery</option>${DELIVERY_FILTER_NAMES.map(
    (s) => html`<option value="${s}"${filters.status === s ? html` selected` : ""}>${DELIVERY_FILTERS[s]}</option>`,
  )}</select></div>
  <div><label for="session">Session</label><input id="session" name="session" value="${filters.session ?? ""}" placeholder="ps_…" class="mono" spellcheck="false" autocomplete="off"></div>
  <div class="actions"><button type="submit" class="primary">Apply</button> <a href="/dashboard/${env}/events">Clear</a></div>
</form>
${args.problems.map((p) => html`<div class="notice error" role="alert">${p}</div>`)}
${
  page.rows.length === 0
    ? filtered || args.cursor
      ? html`<div class="empty"><h2>No matching events</h2><p>Nothing matches these filters. <a href="/dashboard/${env}/events">Show every event</a>.</p></div>`
      : html`<div class="empty"><h2>No events yet</h2><p>Each status change of a payment is an event, sent to your <a href="/dashboard/${env}/settings/webhooks">webhook endpoints</a>. They appear here once a first payment session is created.</p></div>`
    : html`<ol class="events">${page.rows.map((l) => line(env, args.login, args.endpoints, filters, args.cursor, l))}</ol>
<nav class="pager" aria-label="Pages">
  ${args.cursor ? html`<a href="/dashboard/${env}/events${eventsQuery(filters)}">Newest</a>` : ""}
  ${page.next ? html`<a href="/dashboard/${env}/events${eventsQuery(filters, { after: page.next })}" rel="next">Older →</a>` : ""}
</nav>`
}`;
}
