/**
 * The states of a delivery (app.webhook_deliveries.state), as the schema's check allows:
 * `waiting` behind an earlier event of its session, `pending` (due at next_attempt_at),
 * `sending` (claimed, under a lease), then `succeeded`, `failed` or `canceled`.
 */
export const DELIVERY_STATES = ["waiting", "pending", "sending", "succeeded", "failed", "canceled"] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];
