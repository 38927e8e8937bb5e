/**
 * A refund link as the merchant sees it on the session's page (docs/refunds.md, "Refund links"):
 * the claim URL to send the payer, with a copy button, and what became of the link (open until…,
 * claimed by…, expired, canceled). The Approvals page is refund-approvals.ts.
 */
import type { Environment } from "../../../../shared/environment.ts";
import type { RefundView } from "../../refunds/view.ts";
import { html, type Html } from "../html.ts";
import { addressLink, timeTag } from "../format.ts";

/** Whether the refund went to a link (its view carries the link's expiry even when its URL cannot be shown). */
export const hasLink = (r: RefundView) => r.claimExpiresAt !== null;

/** The claim URL with its copy button, and the link's state in words, for the session's refunds table. */
export function linkFacts(env: Environment, r: RefundView, now = new Date()): Html {
  const claimed = r.claimedAt !== null;
  const address = r.parts[0]?.destination ?? null;
  const url =
    r.claimUrl === null
      ? html`<span class="muted small">The link's URL cannot be shown here (the service's encryption key changed since); it still works for whoever has it.</span>`
      : html`<code id="claim-${r.refundId}" class="claim-url">${r.claimUrl}</code> <button type="button" class="copy" data-copy="#claim-${r.refundId}">Copy</button>`;
  let state: Html;
  if (claimed) {
    const approval = r.status === "PENDING" && r.waitingReason === "awaiting_approval";
    const approved = r.requireApproval && !approval && r.status !== "CANCELED";
    state = html`Claimed by ${address ? addressLink(r.chainId, address) : "—"} ${timeTag(r.claimedAt)}${
      approval ? html`; waiting for your approval: <a href="/dashboard/${env}/refund-approvals#approve-${r.refundId}">Approvals</a>` : approved ? "; approved by you" : ""
    }.`;
  } else if (r.status === "CANCELED") state = html`Canceled before anyone claimed it.`;
  else if (Date.parse(r.claimExpiresAt!) <= now.getTime()) state = html`Expired unclaimed ${timeTag(r.claimExpiresAt)}: cancel the refund to give its amount back.`;
  else state = html`Not claimed yet; open until ${timeTag(r.claimExpiresAt)}.`;
  return html`<div class="link-facts">${claimed ? "" : url}
<p class="small" id="claim-state-${r.refundId}">${state}</p>
${!claimed && r.status === "PENDING" ? html`<p class="muted small">Send this link to the payer only: whoever opens it chooses where the money goes${r.requireApproval ? "; you approve it after the claim" : ""}.</p>` : ""}</div>`;
}
