/** Settings, Outbox: the account's mail — invitations, reset links, security notices — and whether each went out. */
import { html, type Html } from "../html.ts";
import { timeTag } from "../format.ts";
import type { OutboxMail } from "../../mail/outbox.ts";
import type { MailMode } from "../../mail/mode.ts";

const STATE_WORDS: Record<OutboxMail["state"], string> = { pending: "waiting to be sent", sending: "being sent", sent: "sent", failed: "failed" };

export function outboxBody(mails: OutboxMail[], mode: MailMode): Html {
  const intro =
    mode === "catcher"
      ? html`<p>This Paysession keeps its mail itself (no <code>SERVICE_SMTP_URL</code> is set): nothing leaves this machine. Each mail is below, and as a file under the data folder's <code>mail/</code>. Open a mail to read it and follow its links.</p>`
      : mode === "off"
        ? html`<div class="notice error" role="alert">This Paysession sends no mail: it has a production network and no <code>SERVICE_SMTP_URL</code>. Notices wait here and go out once the operator sets it.</div>`
        : html`<p>Mail goes out through the operator's SMTP server. What each mail said is in its recipient's inbox; here is whether it went out.</p>`;
  return html`${intro}
${
  mails.length
    ? html`<div class="table-wrap" tabindex="0" role="region" aria-label="Table (scrolls sideways on small screens)"><table class="list"><thead><tr><th scope="col">Queued</th><th scope="col">To</th><th scope="col">Subject</th><th scope="col">State</th><th scope="col">Sent</th></tr></thead><tbody>
${mails.map(
  (m) => html`<tr><td>${timeTag(m.createdAt)}</td><td>${m.to}</td><td>${
    m.text !== undefined
      ? html`<details class="mail"><summary>${m.subject}</summary><pre class="mail-text">${m.text}</pre></details>`
      : m.withheld
        ? html`${m.subject} <span class="muted">(its link is for ${m.to} alone: only they read it here)</span>`
        : m.subject
  }</td><td>${STATE_WORDS[m.state]}${m.attempts > 1 ? ` (${m.attempts} attempts)` : ""}${m.lastError ? html`<br><span class="muted">${m.lastError}</span>` : ""}</td><td>${m.sentAt ? timeTag(m.sentAt) : "—"}</td></tr>`,
)}</tbody></table></div>`
    : html`<div class="empty"><p>No mail yet. Password reset links, invitations and security notices appear here.</p></div>`
}`;
}
