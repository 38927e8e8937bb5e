/**
 * The OpenAPI document's `webhooks`: one entry per event type the service POSTs to a merchant's
 * endpoints, its body the event's schema (a component, so the document holds each once), its
 * Standard Webhooks headers, and what the endpoint answers. The same schemas GET /events answers
 * with (events.schemas.ts), so the document cannot describe a webhook other than the one sent.
 */
import { EVENT_TYPES, TEST_EVENT_TYPE } from "../webhooks/payload.ts";
import { ACCOUNT_EVENT_TYPES, REFUND_EVENT_TYPES } from "../db/column-values.ts";
import { eventSchemaComponents } from "./events.schemas.ts";
import { TestEventResult } from "./webhook-endpoints.schemas.ts";

export const webhookComponents = { ...eventSchemaComponents, TestEvent: TestEventResult.properties.event };

/** Sent as Standard Webhooks, at least once, retried, in order per payment session (docs/webhooks.md). */
const TAG = "Webhooks";

const ref = (name: keyof typeof webhookComponents) => ({ $ref: `#/components/schemas/${name}` });

/** The Standard Webhooks headers, once in the document (components.parameters), referenced by every webhook. */
export const webhookHeaderComponents = Object.fromEntries(
  [
    ["WebhookId", "webhook-id", "The event id (`evt_…`): the same on every retry and redelivery; drop duplicates by it."],
    ["WebhookTimestamp", "webhook-timestamp", "Unix seconds of this attempt; refuse one more than five minutes off."],
    ["WebhookSignature", "webhook-signature", "`v1,<base64 HMAC-SHA256 of \"<webhook-id>.<webhook-timestamp>.<raw body>\">` keyed with the endpoint's `whsec_…` secret; two, space-separated, during a secret rotation."],
  ].map(([key, name, description]) => [key!, { name, description, in: "header", required: true, schema: { type: "string" } }]),
);
const HEADERS = Object.keys(webhookHeaderComponents).map((k) => ({ $ref: `#/components/parameters/${k}` }));

function webhook(summary: string, body: ReturnType<typeof ref>) {
  return {
    post: {
      summary,
      tags: [TAG],
      parameters: HEADERS,
      requestBody: { required: true, content: { "application/json": { schema: body } } },
      responses: { "2XX": { description: "Acknowledged (else retried)." } },
    },
  };
}

const SESSION_SUMMARY: Record<(typeof EVENT_TYPES)[number], string> = {
  "payment_session.pending": "A payment session was created",
  "payment_session.funded": "A payment session received its payment",
  "payment_session.succeeded": "A payment session's money reached the settlement address",
  "payment_session.canceled": "A payment session expired unpaid or was canceled",
  "payment_session.error": "A payment session needs attention (underpaid, paid after cancel, sweep failed, …)",
  "payment_session.funds_received": "Money reached a session with no status change",
  "payment_session.funds_settled": "A session's money reached the settlement address outside its SUCCEEDED transition",
  "payment_session.funds_reverted": "Money reported before that the chain no longer has",
};

const REFUND_SUMMARY: Record<(typeof REFUND_EVENT_TYPES)[number], string> = {
  "refund.created": "A refund was created (PENDING)",
  "refund.sent": "A refund's transaction was signed and recorded (SENT)",
  "refund.succeeded": "A refund reached the payer (SUCCEEDED)",
  "refund.failed": "A refund's transaction failed (FAILED; failureReason says why)",
  "refund.canceled": "A refund was canceled before it was sent (CANCELED)",
};

export const WEBHOOKS: Record<string, unknown> = {
  ...Object.fromEntries(EVENT_TYPES.map((t) => [t, webhook(SESSION_SUMMARY[t], ref("PaymentSessionEvent"))])),
  ...Object.fromEntries(REFUND_EVENT_TYPES.map((t) => [t, webhook(REFUND_SUMMARY[t], ref("RefundEvent"))])),
  ...Object.fromEntries(ACCOUNT_EVENT_TYPES.map((t) => [t, webhook("A settlement address changed", ref("SettlementAddressUpdatedEvent"))])),
  [TEST_EVENT_TYPE]: webhook("A test event (POST /webhook-endpoints/{id}/test)", ref("TestEvent")),
};
