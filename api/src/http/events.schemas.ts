/**
 * Event, delivery and attempt schemas (events.ts).
 */
import { t, type Static } from "elysia";
import { EVENT_TYPES } from "../webhooks/payload.ts";
import { ACCOUNT_EVENT_TYPES, REFUND_EVENT_TYPES } from "../db/column-values.ts";
import { Refund } from "./refunds.schemas.ts";
import { DELIVERY_STATES } from "../db/column-values.ts";
import { ReasonAndDetail, sessionFields } from "./payment-sessions.schemas.ts";
import { literals, JsonInteger, Status } from "./schemas.ts";

export const RedeliverBody = t.Object(
  {
    webhookEndpointId: t.Optional(t.String({ maxLength: 64, description: "Only to this endpoint. Default: every enabled endpoint of this environment." })),
  },
  { additionalProperties: false },
);

/** Status changes and money events (webhooks/payload.ts is the one list). */
const EventType = literals(EVENT_TYPES);

export const SessionEvent = t.Object({
  id: t.String({ examples: ["evt_4f9KpQ2xYz81LmNoPq7RsTuV"] }),
  type: EventType,
  createdAt: t.String({ format: "date-time" }),
  data: t.Intersect([
    t.Object({
      ...sessionFields,
      previousStatus: t.Union([Status, t.Null()]),
      sequence: JsonInteger({ description: "Per session, 1 on creation, +1 per status change, money event (funds_received, funds_settled, funds_reverted) or event of one of its refunds (refund.*)." }),
    }),
    ReasonAndDetail,
  ]),
});

const Delivery = t.Object({
  webhookEndpointId: t.String(),
  state: literals(DELIVERY_STATES),
  ordered: t.Boolean({ description: "true for the automatic delivery (for a session event: in the per-session order), false for redeliveries you asked for." }),
  attempts: JsonInteger(),
  nextAttemptAt: t.Union([t.String({ format: "date-time" }), t.Null()]),
  lastAttemptAt: t.Union([t.String({ format: "date-time" }), t.Null()]),
  lastStatusCode: t.Union([JsonInteger(), t.Null()]),
  lastError: t.Union([t.String(), t.Null()]),
});

export const SessionEventWithDeliveries = t.Object({ ...SessionEvent.properties, deliveries: t.Array(Delivery) });

/**
 * An account event (webhooks/payload.ts ACCOUNT_EVENT_TYPES): about the merchant's account, not
 * a session, so no sequence and no order with any session's events. Delivered like session
 * events; not in GET /events (retrieve it by id).
 */
export const SettlementAddressUpdatedEvent = t.Object({
  id: t.String({ examples: ["evt_9hT2LmQ4xYz81KpNoPq7RsWv"] }),
  type: literals(ACCOUNT_EVENT_TYPES),
  createdAt: t.String({ format: "date-time" }),
  data: t.Object({
    environment: literals(["sandbox", "production"] as const),
    merchantId: t.String({ description: "The public merchant id of the environment." }),
    chainId: JsonInteger(),
    network: t.String(),
    address: t.String({ description: "The new settlement address, EIP-55 checksum form." }),
    previousAddress: t.Union([t.String(), t.Null()], { description: "null when the network had no address of your own before." }),
    changedBy: t.String({ description: "The dashboard user's email, or `API key <prefix>…`." }),
  }),
});

/**
 * A refund's event (refunds/events.ts): the refund as GET /refunds/{id} showed it at the change,
 * with its place in its session's sequence, shared with the session's own events.
 */
export const RefundEvent = t.Object({
  id: t.String({ examples: ["evt_7pQ2LmT4xYz81KpNoRs9WvUa"] }),
  type: literals(REFUND_EVENT_TYPES),
  createdAt: t.String({ format: "date-time" }),
  data: t.Intersect([
    Refund,
    t.Object({
      sequence: JsonInteger({ description: "The refund's event's place in its payment session's sequence: after every earlier event of the session, before every later one." }),
    }),
  ]),
});

/**
 * The three events in the document once, as components (app.ts adds them; the document's
 * `webhooks` use them too: webhooks.schemas.ts), referenced by the routes that answer them.
 */
export const eventSchemaComponents = {
  PaymentSessionEvent: SessionEvent,
  RefundEvent,
  SettlementAddressUpdatedEvent,
};
export const eventRef = <K extends keyof typeof eventSchemaComponents>(name: K) =>
  t.Unsafe<Static<(typeof eventSchemaComponents)[K]>>({ $ref: `#/components/schemas/${name}` });

const WithDeliveries = t.Object({ deliveries: t.Array(Delivery) });

export const AnyEventWithDeliveries = t.Union([
  t.Intersect([eventRef("PaymentSessionEvent"), WithDeliveries]),
  t.Intersect([eventRef("RefundEvent"), WithDeliveries]),
  t.Intersect([eventRef("SettlementAddressUpdatedEvent"), WithDeliveries]),
]);

export const EventList = t.Object({
  data: t.Array(t.Union([eventRef("PaymentSessionEvent"), eventRef("RefundEvent")])),
  hasMore: t.Boolean(),
  nextCursor: t.Union([t.String(), t.Null()], { description: "Pass as startingAfter to get the next page." }),
});

export const EventListQuery = t.Object({
  limit: t.Optional(t.String({ pattern: "^[0-9]{1,3}$", description: "1 to 100, default 20." })),
  startingAfter: t.Optional(t.String({ description: "An event id: the page after it." })),
  paymentSessionId: t.Optional(t.String({ description: "Only this session's events." })),
  type: t.Optional(literals([...EVENT_TYPES, ...REFUND_EVENT_TYPES] as const)),
});

export const WebhookAttempt = t.Object({
  id: t.String({ examples: ["wha_4f9KpQ2xYz81LmNoPq7RsTuV"] }),
  eventId: t.String(),
  webhookEndpointId: t.String(),
  kind: literals(["event", "redelivery", "test", "account"] as const),
  attemptNumber: JsonInteger(),
  url: t.String(),
  succeeded: t.Boolean(),
  statusCode: t.Union([JsonInteger(), t.Null()], { description: "null when no HTTP answer came (timeout, refused, connection error)." }),
  latencyMs: JsonInteger(),
  responseBody: t.Union([t.String(), t.Null()], { description: "The first 1 KB of the answer." }),
  error: t.Union([t.String(), t.Null()]),
  createdAt: t.String({ format: "date-time" }),
});

export const AttemptList = t.Object({
  data: t.Array(WebhookAttempt),
  hasMore: t.Boolean(),
  nextCursor: t.Union([t.String(), t.Null()]),
});

export const RedeliverResult = t.Object({
  eventId: t.String(),
  deliveries: t.Array(Delivery),
});
