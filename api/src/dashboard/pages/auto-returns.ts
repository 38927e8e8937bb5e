/**
 * Automatic returns in the dashboard (docs/refunds.md, "Automatic returns"): the Refunds settings
 * page (on or off, and how long money waits for the merchant first), and a session's returns on its
 * page, each in words, with "Keep the money" while one waits. Works without script, under the CSP.
 */
import type { Environment } from "../../../../shared/environment.ts";
import type { AutoReturnRow, AutoReturnSetting } from "../../refunds/auto-returns-store.ts";
import { html, type Html } from "../html.ts";
import { networkName, timeTag } from "../format.ts";
import { csrfField } from "../layout.ts";
import type { Login } from "../logins.ts";
import { REASON_WORDS } from "./refund.ts";

/** The units the delay is typed in, in seconds. */
export const DELAY_UNITS = { seconds: 1, minutes: 60, hours: 3600, days: 86_400 } as const;
export type DelayUnit = keyof typeof DELAY_UNITS;
const UNIT_NAMES: readonly DelayUnit[] = ["seconds", "minutes", "hours", "days"];

/** A delay in the largest unit that holds it whole (86400 → 1 day is shown as 24 hours: the default reads as "a day's hours"). */
export function delayInUnits(seconds: number): { delay: number; unit: DelayUnit } {
  if (seconds % 86_400 === 0 && seconds > 86_400) return { delay: seconds / 86_400, unit: "days" };
  if (seconds % 3600 === 0) return { delay: seconds / 3600, unit: "hours" };
  if (seconds % 60 === 0) return { delay: seconds / 60, unit: "minutes" };
  return { delay: seconds, unit: "seconds" };
}

export function refundSettingsBody(env: Environment, login: Login, s: AutoReturnSetting, typed?: { delay: string; unit: string; on: boolean }, error?: string): Html {
  const shown = typed ?? { ...delayInUnits(s.delaySeconds), on: s.enabled };
  const words = delayInUnits(s.delaySeconds);
  return html`<p>Money can arrive when it should not have: more than the price, after the payment expired or was canceled, or too little before it expired. With automatic returns on, the service gives such money back to the address that paid, from your ${env} refund balance, once it has waited the delay below for you to act (refund it yourself, or keep it, from the payment's page). They are off until you turn them on; each environment has its own.</p>
<section class="card" aria-labelledby="now-h"><h2 id="now-h" class="h3">Now</h2>
<p id="auto-now">${s.enabled ? html`Automatic returns are on: such money goes back by itself after ${String(words.delay)} ${words.unit}.` : html`Automatic returns are off: such money stays with you unless you refund it.`}</p></section>
${error ? html`<div class="notice error" role="alert" id="settings-error">${error}</div>` : ""}
<form method="post" action="/dashboard/${env}/settings/refunds" class="stack card">
  ${csrfField(login)}
  <div class="choice"><input type="checkbox" id="auto-on" name="automaticReturns" value="true"${shown.on ? html` checked` : ""}> <label for="auto-on">Give over-, late- and underpaid money back by itself</label></div>
  <label for="auto-delay">After waiting (1 second to 30 days)</label>
  <div class="inline"><input id="auto-delay" name="delay" value="${String(shown.delay)}" inputmode="numeric" autocomplete="off" aria-describedby="delay-help">
  <label for="auto-unit" class="visually-hidden">Unit</label>
  <select id="auto-unit" name="unit">${UNIT_NAMES.map((u) => html`<option value="${u}"${shown.unit === u ? html` selected` : ""}>${u}</option>`)}</select></div>
  <p class="muted small" id="delay-help">A change applies to money that arrives from now on; a return already waiting keeps its time, and one that falls due while they are off is skipped. It is recorded in the security history. Your server can do the same with <code>PUT /refund-settings</code>.</p>
  <div class="buttons"><button type="submit" class="primary">Save</button></div>
</form>`;
}

const OUTCOME_WORDS: Record<string, string> = {
  disabled: "automatic returns were off when it fell due",
  nothing_to_return: "nothing was left to return",
  amount_too_large: "above the largest refund the service sends (SERVICE_REFUND_MAX_PER_REFUND)",
  parameter_invalid: "the amount could not be shared over the tokens in whole units",
};

function stateWords(r: AutoReturnRow): Html {
  switch (r.state) {
    case "scheduled":
      return html`Scheduled: goes back by itself ${timeTag(r.due_at)}`;
    case "refunded":
      return r.refund_id ? html`Returned by refund <a href="#${r.refund_id}"><code>${r.refund_id}</code></a>` : html`Returned`;
    case "kept":
      return html`Kept: you chose to keep the money`;
    case "merchant_refunded":
      return html`Taken over by your own refund`;
    case "skipped":
      return html`Skipped: ${OUTCOME_WORDS[r.outcome ?? ""] ?? r.outcome ?? "—"}`;
  }
}

/** The session page's automatic returns, oldest first; nothing when it has none. */
export function autoReturnsSection(env: Environment, login: Login, sessionId: string, rows: readonly AutoReturnRow[]): Html {
  if (rows.length === 0) return html``;
  const waiting = rows.some((r) => r.state === "scheduled");
  return html`<section aria-labelledby="ar"><h2 id="ar">Automatic returns</h2>
<div class="table-wrap" tabindex="0" role="region" aria-label="Automatic returns (scrolls sideways on small screens)"><table class="list" id="automatic-returns">
<thead><tr><th scope="col">Why</th><th scope="col">Network</th><th scope="col">What became of it</th><th scope="col">Opened</th></tr></thead>
<tbody>${rows.map(
    (r) => html`<tr id="${r.id}"><td>${REASON_WORDS[r.reason] ?? r.reason}</td><td>${networkName(r.chain_id)}</td><td>${stateWords(r)}</td><td>${timeTag(r.created_at)}</td></tr>`,
  )}</tbody></table></div>
${
  waiting
    ? html`<form method="post" action="/dashboard/${env}/transactions/${sessionId}/automatic-returns/keep" class="inline">${csrfField(login)}<button type="submit">Keep the money</button> <span class="muted small">Nothing of this payment goes back by itself; you can still refund it yourself.</span></form>`
    : ""
}
</section>`;
}
