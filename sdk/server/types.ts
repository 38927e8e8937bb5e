/**
 * The API's objects as a merchant's TypeScript server sees them. Written out here because the
 * client depends on nothing (not even on the service's own code); `types.test.ts` holds them to
 * the service's schemas at compile time, so they cannot drift apart unnoticed.
 */

export type SessionStatus = "PENDING" | "FUNDED" | "SUCCEEDED" | "CANCELED" | "ERROR";
export type TransitionReason =
  | "created"
  | "paid"
  | "overpaid"
  | "expired"
  | "canceled_by_payer"
  | "canceled_by_merchant"
  | "underpaid"
  | "simulated"
  | "swept"
  | "sweep_failed"
  | "reorged"
  | "paid_after_cancel";
/** Money moved without a status change (the status stays as it was). */
export type MoneyEventReason = "funds_received" | "funds_settled" | "funds_reverted";
export type EventReason = TransitionReason | MoneyEventReason;
export type Environment = "sandbox" | "production";
export type EventType =
  | "payment_session.pending"
  | "payment_session.funded"
  | "payment_session.succeeded"
  | "payment_session.canceled"
  | "payment_session.error"
  | "payment_session.funds_received"
  | "payment_session.funds_settled"
  | "payment_session.funds_reverted";

/** Where and how much to pay on one network. */
export interface PaymentNetwork {
  chainId: number;
  network: string;
  tokenAddress: string;
  tokenSymbol: string;
  decimals: number;
  /** The session's one-time address on this network. */
  depositAddress: string;
  /** The amount in the token's base units, as a decimal string (never a float). */
  amountBaseUnits: string;
  confirmations: number;
  /** Where this session's funds on this network are swept (fixed at creation). */
  settlementAddress?: string;
}

export interface HistoryEntry {
  sequence: number;
  status: SessionStatus;
  previousStatus: SessionStatus | null;
  reason: EventReason;
  detail: Record<string, unknown>;
  at: string;
}

export interface PaymentSession {
  paymentSessionId: string;
  status: SessionStatus;
  statusReason: TransitionReason;
  /** Decimal string with two places, e.g. "12.34". */
  amount: string;
  currency: string;
  environment: Environment;
  merchantId: string;
  referenceId: string | null;
  metadata: Record<string, string>;
  expiresAt: string;
  createdAt: string;
  updatedAt: string;
  networks: PaymentNetwork[];
  history?: HistoryEntry[];
}

/** What create answers: the session plus the short-lived token the browser passes to sdk.open. */
export interface CreatedPaymentSession extends Omit<PaymentSession, "history"> {
  paymentSessionToken: string;
  tokenExpiresAt: string;
}

export interface CreatePaymentSessionParams {
  /** Decimal string with exactly two places, e.g. "12.34". */
  amount: string;
  currency: string;
  metadata?: Record<string, string>;
  referenceId?: string;
  expiresInSeconds?: number;
}

export interface Page<T> {
  data: T[];
  hasMore: boolean;
  nextCursor: string | null;
}

export interface ListParams {
  limit?: number;
  startingAfter?: string;
}

export interface WebhookEndpoint {
  id: string;
  url: string;
  description: string | null;
  enabled: boolean;
  disabledReason: "gone" | null;
  environment: Environment;
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface CreatedWebhookEndpoint extends WebhookEndpoint {
  /** The signing secret (whsec_…), shown here and at GET /webhook-endpoints/{id}/secret. */
  secret: string;
}

export interface WebhookSecret {
  secret: string;
  previousSecretExpiresAt: string | null;
}

export interface PaymentSessionEvent {
  id: string;
  type: EventType;
  createdAt: string;
  data: Omit<PaymentSession, "history"> & {
    previousStatus: SessionStatus | null;
    reason: EventReason;
    sequence: number;
    detail: Record<string, unknown>;
  };
}

export interface Delivery {
  webhookEndpointId: string;
  state: "waiting" | "pending" | "sending" | "succeeded" | "failed" | "canceled";
  ordered: boolean;
  attempts: number;
  nextAttemptAt: string | null;
  lastAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
}

export interface PaymentSessionEventWithDeliveries extends PaymentSessionEvent {
  deliveries: Delivery[];
}

/** An account event: a settlement address changed. No session, no sequence; not in `events.list`. */
export interface SettlementAddressUpdatedEvent {
  id: string;
  type: "settlement_address.updated";
  createdAt: string;
  data: {
    environment: "sandbox" | "production";
    merchantId: string;
    chainId: number;
    network: string;
    address: string;
    previousAddress: string | null;
    changedBy: string;
  };
}

export interface SettlementAddressUpdatedEventWithDeliveries extends SettlementAddressUpdatedEvent {
  deliveries: Delivery[];
}

export interface WebhookAttempt {
  id: string;
  eventId: string;
  webhookEndpointId: string;
  kind: "event" | "redelivery" | "test" | "account";
  attemptNumber: number;
  url: string;
  succeeded: boolean;
  statusCode: number | null;
  latencyMs: number;
  responseBody: string | null;
  error: string | null;
  createdAt: string;
}

export interface TestEventResult {
  event: { id: string; type: "webhook.test"; createdAt: string; data: { webhookEndpointId: string; environment: Environment; message: string } };
  attempt: WebhookAttempt;
}

export interface SettlementAddress {
  chainId: number;
  network: string;
  address: string | null;
  isDefault: boolean;
  updatedAt: string | null;
}
