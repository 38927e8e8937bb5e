/**
 * The values some text columns hold, as the schema's checks allow them (db/schema.ts types the
 * columns with them; the code that writes and reads them uses the same lists).
 */

/**
 * The states of a delivery (app.webhook_deliveries.state), as the schema's check allows:
 * `waiting` behind an earlier event of its session, `pending` (due at next_attempt_at),
 * `sending` (claimed, under a lease), then `succeeded`, `failed` or `canceled`.
 */
export const DELIVERY_STATES = ["waiting", "pending", "sending", "succeeded", "failed", "canceled"] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/**
 * Account events (app.account_events.type): about the merchant's account, not a session
 * (webhooks/payload.ts builds them).
 */
export const ACCOUNT_EVENT_TYPES = ["settlement_address.updated"] as const;
export type AccountEventType = (typeof ACCOUNT_EVENT_TYPES)[number];

/**
 * A refund's webhook events (app.refund_events.type), one per state it reaches (refunds/logic.ts,
 * nextRefundState, names the one each transition causes; webhooks/payload.ts builds them).
 */
export const REFUND_EVENT_TYPES = ["refund.created", "refund.sent", "refund.succeeded", "refund.failed", "refund.canceled"] as const;
export type RefundEventType = (typeof REFUND_EVENT_TYPES)[number];
