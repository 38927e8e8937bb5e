/**
 * What a webhook says, pure. An event is a row of app.session_events (one per status
 * change); its payload is the session's merchant view *as of that event*: the session's
 * fixed fields (amount, currency, metadata, …) with the status, reason and time of the
 * event, plus previousStatus, reason, sequence and the event's detail. Built the same way
 * for every attempt, for GET /events and for redeliveries, from the session as the event
 * stored it (its snapshot, taken when the event was written: webhooks/events.ts fromSnapshot),
 * so the body never changes. (Lifecycle fields that change over time belong in the event's `detail`.)
 */
import { MONEY_EVENT_REASONS, type EventReason, type MoneyEventReason, type SessionStatus } from "../../../shared/status.ts";
import type { ReasonAndDetail } from "../sessions/event-detail.ts";
import { merchantView, storedReasonAndDetail, type DepositLike, type MerchantSessionView, type SessionRow } from "../sessions/views.ts";
import type { AccountEventType, RefundEventType } from "../db/column-values.ts";

export const EVENT_TYPES = [
  "payment_session.pending",
  "payment_session.funded",
  "payment_session.succeeded",
  "payment_session.canceled",
  "payment_session.error",
  // Money moved with no status change (sessions/funds.ts): a second or late payment, a later sweep.
  "payment_session.funds_received",
  "payment_session.funds_settled",
  "payment_session.funds_reverted",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
export const TEST_EVENT_TYPE = "webhook.test";

const isMoneyReason = (reason: string): reason is MoneyEventReason => (MONEY_EVENT_REASONS as readonly string[]).includes(reason);

/** A status change is named for its new status; a money event for its reason. */
export const eventType = (status: SessionStatus, reason?: EventReason): EventType =>
  (reason && isMoneyReason(reason) ? `payment_session.${reason}` : `payment_session.${status.toLowerCase()}`) as EventType;

/** What a `type` filter selects among stored events: a money reason, or a status without the money events. */
export function eventTypeFilter(type: EventType): { reason: MoneyEventReason } | { status: SessionStatus; excludeReasons: readonly MoneyEventReason[] } {
  const name = type.slice("payment_session.".length);
  if (isMoneyReason(name)) return { reason: name };
  return { status: name.toUpperCase() as SessionStatus, excludeReasons: MONEY_EVENT_REASONS };
}

/** A stored event (a row of app.session_events): its detail as stored. */
export interface EventFacts {
  id: string;
  sequence: number;
  status: SessionStatus;
  previousStatus: SessionStatus | null;
  reason: EventReason;
  detail: Record<string, unknown>;
  createdAt: Date;
}

/** The event's `data`: the session as of the event, with the reason and its detail (sessions/event-detail.ts). */
export type SessionEventData = MerchantSessionView &
  ReasonAndDetail & {
    previousStatus: SessionStatus | null;
    sequence: number;
  };

export interface WebhookEvent {
  id: string;
  type: EventType;
  createdAt: string;
  data: SessionEventData;
}

export function buildEvent(session: SessionRow, publicMerchantId: string, deposits: DepositLike[], event: EventFacts): WebhookEvent {
  const view = merchantView(session, publicMerchantId, deposits);
  const told = storedReasonAndDetail(event);
  return {
    id: event.id,
    type: eventType(event.status, event.reason),
    createdAt: event.createdAt.toISOString(),
    // `reason` and `detail` come together from `told` (kept in their places in the body, so the
    // compiler is told the pairing).
    data: {
      ...view,
      status: event.status,
      // A money event leaves the status as it was: its reason then is the one stored with it.
      statusReason: isMoneyEvent(told) ? (told.detail.statusReason ?? view.statusReason) : told.reason,
      updatedAt: event.createdAt.toISOString(),
      previousStatus: event.previousStatus,
      reason: told.reason,
      sequence: event.sequence,
      detail: told.detail,
    } as SessionEventData,
  };
}

const isMoneyEvent = (e: ReasonAndDetail): e is Extract<ReasonAndDetail, { reason: MoneyEventReason }> => isMoneyReason(e.reason);

export interface TestEvent {
  id: string;
  type: typeof TEST_EVENT_TYPE;
  createdAt: string;
  data: { webhookEndpointId: string; environment: string; message: string };
}

export function buildTestEvent(id: string, endpointId: string, environment: string, at: Date): TestEvent {
  return {
    id,
    type: TEST_EVENT_TYPE,
    createdAt: at.toISOString(),
    data: { webhookEndpointId: endpointId, environment, message: "A test event from Paysession. Answer 2xx to acknowledge it." },
  };
}

/**
 * Account events: about the merchant's account, not a session (no sequence, not ordered with
 * any session's events). Stored in app.account_events with `data` frozen at the change, so the
 * body is the same on every attempt and redelivery. Same envelope (id, type, createdAt, data)
 * and same `evt_` ids as session events, so a receiver verifies and de-duplicates them alike.
 */

// A type (not an interface) so it is a Record<string, unknown>: stored and sent as the event's `data`.
export type SettlementAddressUpdatedData = {
  environment: string;
  /** The public merchant id of the environment (NEXT_PUBLIC_SERVICE_MERCHANT_ID). */
  merchantId: string;
  chainId: number;
  network: string;
  /** EIP-55 checksum form. */
  address: string;
  /** null when the network had no address of the merchant's own before (the sandbox default stood in, or none). */
  previousAddress: string | null;
  /** The dashboard user's email, or `API key <prefix>…`. */
  changedBy: string;
};

export interface AccountEvent {
  id: string;
  type: AccountEventType;
  createdAt: string;
  data: Record<string, unknown>;
}

export function buildAccountEvent(row: { id: string; type: AccountEventType; data: Record<string, unknown>; createdAt: Date }): AccountEvent {
  return { id: row.id, type: row.type, createdAt: row.createdAt.toISOString(), data: row.data };
}

/**
 * A refund's events (refunds/events.ts): `data` is the refund as GET /refunds/{id} showed it at the
 * change, with its `sequence` in its session's sequence, frozen in app.refund_events; the same
 * envelope and `evt_` ids as every other event.
 */
export interface RefundEvent {
  id: string;
  type: RefundEventType;
  createdAt: string;
  data: Record<string, unknown>;
}

export function buildRefundEvent(row: { id: string; type: RefundEventType; data: Record<string, unknown>; createdAt: Date }): RefundEvent {
  return { id: row.id, type: row.type, createdAt: row.createdAt.toISOString(), data: row.data };
}
