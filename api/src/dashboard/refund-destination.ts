/**
 * The refund form's destination (docs/refunds.md, "Refund links"): the address that paid, or a
 * refund link the payer claims, with "require my approval" and the link's lifetime. Read from the
 * form or the review's query, carried by the review's hidden fields and its "Change it" link, and
 * turned into the API's own create fields, checked against the API's body schema (so a lifetime
 * out of range gets the API's message). Kept apart from the form and review pages so that those
 * only place it.
 */
import type { Static } from "elysia";
import { CreateRefundBody } from "../http/refunds.schemas.ts";
import { validateBody } from "../http/validate.ts";
import { LINK_LIFETIME } from "../refunds/links.ts";
import type { RefundReason } from "../refunds/logic.ts";
import { html, type Html } from "./html.ts";

/** A refund to a link instead of the address that paid; absent from the form's values: to the payer. */
export interface LinkChoice {
  requireApproval: boolean;
  /** As sent (digits, bounded); the API's schema judges it. */
  expiresInSeconds: string;
}

/** The lifetimes the form offers (the API takes any from 10 minutes to 30 days). */
export const LINK_LIFETIMES: readonly (readonly [number, string])[] = [
  [3600, "1 hour"],
  [86_400, "1 day"],
  [LINK_LIFETIME.defaultSeconds, "7 days"],
  [LINK_LIFETIME.maxSeconds, "30 days"],
];

/** The choice as the form or query sent it: a link only when `destination=link`; its options ignored otherwise. */
export function linkChoiceOf(get: (k: string) => string | null | undefined): { link?: LinkChoice } {
  if ((get("destination") ?? "").trim() !== "link") return {};
  const seconds = (get("linkExpiresInSeconds") ?? "").trim().slice(0, 12);
  return { link: { requireApproval: (get("requireApproval") ?? "").trim() === "true", expiresInSeconds: seconds || String(LINK_LIFETIME.defaultSeconds) } };
}

type LinkFields = Pick<Static<typeof CreateRefundBody>, "destination" | "requireApproval" | "linkExpiresInSeconds">;

/** The create's link fields for the choice, checked by the API's own body schema (its messages); none for the payer's address. */
export function linkFields(reason: RefundReason, link: LinkChoice | undefined): LinkFields {
  if (!link) return {};
  const seconds = /^[0-9]+$/.test(link.expiresInSeconds) ? Number(link.expiresInSeconds) : link.expiresInSeconds;
  const body = validateBody(CreateRefundBody, { reason, destination: "link", requireApproval: link.requireApproval, linkExpiresInSeconds: seconds });
  return { destination: body.destination, requireApproval: body.requireApproval, linkExpiresInSeconds: body.linkExpiresInSeconds };
}

/** The choice as query parameters (the review's "Change it" link back to the form). */
export function linkQuery(link: LinkChoice | undefined): Record<string, string> {
  if (!link) return {};
  return { destination: "link", ...(link.requireApproval ? { requireApproval: "true" } : {}), linkExpiresInSeconds: link.expiresInSeconds };
}

/** The form's part: where the refund goes. Works without script (the link's options apply only when a link is chosen). */
export function destinationFields(link: LinkChoice | undefined): Html {
  const seconds = link?.expiresInSeconds ?? String(LINK_LIFETIME.defaultSeconds);
  return html`<fieldset class="destination stack"><legend>Send it to</legend>
  <div class="choice"><input type="radio" id="dest-payer" name="destination" value="payer"${link ? "" : html` checked`}> <label for="dest-payer">The address that paid</label></div>
  <div class="choice"><input type="radio" id="dest-link" name="destination" value="link"${link ? html` checked` : ""}> <label for="dest-link">A refund link</label>
    <p class="muted small" id="link-help">You get a link to send to the payer; they open it and name the address the money goes to. Use it when the address that paid may not be theirs (an exchange, a contract, several senders).</p></div>
  <div class="link-options stack" aria-describedby="link-help">
    <div class="choice"><input type="checkbox" id="link-approval" name="requireApproval" value="true"${link?.requireApproval ? html` checked` : ""}> <label for="link-approval">Require my approval after the payer claims it</label></div>
    <label for="link-lifetime">The link can be claimed for</label>
    <select id="link-lifetime" name="linkExpiresInSeconds">${LINK_LIFETIMES.map(([s, words]) => html`<option value="${String(s)}"${String(s) === seconds ? html` selected` : ""}>${words}</option>`)}</select>
  </div>
</fieldset>`;
}

const lifetimeWords = (seconds: string) => LINK_LIFETIMES.find(([s]) => String(s) === seconds)?.[1] ?? `${seconds} seconds`;

/** The review's line: where it goes (only for a link; the parts table names the payer's address otherwise). */
export function destinationReview(link: LinkChoice | undefined): Html {
  if (!link) return html``;
  return html`<div><dt>Destination</dt><dd id="review-destination">a refund link: the payer names the address. ${
    link.requireApproval ? "You approve it after the claim (Approvals)." : "It goes out as soon as they claim it."
  } The link can be claimed for ${lifetimeWords(link.expiresInSeconds)}.</dd></div>`;
}

/** The review's hidden fields: the choice travels with the create's post. */
export function destinationHidden(link: LinkChoice | undefined): Html {
  if (!link) return html``;
  return html`<input type="hidden" name="destination" value="link">
  ${link.requireApproval ? html`<input type="hidden" name="requireApproval" value="true">` : ""}
  <input type="hidden" name="linkExpiresInSeconds" value="${link.expiresInSeconds}">`;
}
