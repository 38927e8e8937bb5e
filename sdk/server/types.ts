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
  /** Every stablecoin the session accepts on this network, the main one first: any pays, at par; several add up. */
  tokens: PaymentNetworkToken[];
  /** Where this session's funds on this network are swept (fixed at creation). */
  settlementAddress?: string;
}

/** A stablecoin accepted on a network, with the session's amount in its own base units. */
export interface PaymentNetworkToken {
  tokenAddress: string;
  tokenSymbol: string;
  decimals: number;
  amountBaseUnits: string;
}

/** No fields. */
export type NoDetail = Record<never, never>;

/**
 * How a payment was made: `transfer` (to the deposit address, then swept), or `authorization`
 * (the payer's signed EIP-3009 authorization moved it straight to the settlement address).
 */
export type PaymentMethod = "transfer" | "authorization";

/** How it was paid, by whom and in what; absent on events written before these fields were added. */
export interface PaidBy {
  method?: PaymentMethod;
  /** The address the money came from (EIP-55 checksum), when one address paid it all. */
  payer?: string;
  /** What each stablecoin brought on that network, in the session's unit there (any accepted one pays, at par; they add up). */
  tokens?: { token: string; amount: string }[];
}

/** The payment that funded the session (`paid`, `overpaid`). */
export interface PaymentDetail extends PaidBy {
  chainId: number;
  /** Confirmed on time on that network, in total (base units, decimal string). */
  amount: string;
  /** What came on top of the session's amount: "0" for `paid`, the surplus for `overpaid`. */
  overpaid: string;
  /** The transactions of the payments on that network (transfers into the deposit address, or the authorization carried out). */
  txHashes: string[];
}

/**
 * What an event's `detail` holds, by its reason (docs/webhooks.md, "Event detail"). Amounts are
 * decimal strings of the token's base units (never floats). Money events also carry the
 * session's `statusReason` at that moment.
 */
export interface EventDetails {
  created: NoDetail;
  paid: PaymentDetail;
  overpaid: PaymentDetail;
  expired: NoDetail;
  canceled_by_payer: NoDetail;
  canceled_by_merchant: NoDetail;
  /** Expired with part of the amount paid (swept all the same). */
  underpaid: PaidBy & { chainId: number; amount: string; /** What is missing to the session's amount. */ shortBy: string; txHashes: string[] };
  simulated: NoDetail;
  /**
   * The funding amount reached the settlement address; `sweepTxHash`: the last transaction that
   * moved it — a sweep (`method` `transfer`), or the payment by authorization itself (`authorization`, no sweep).
   */
  swept: { chainId: number; sweepTxHash: string; method?: PaymentMethod };
  /** Every sweep round failed; the money waits at the deposit address. `attempts` of the last round, its last `error`. */
  sweep_failed: { chainId: number; attempts: number; error: string };
  /** The funding payment left the chain; `amount`: what the network still shows at the deposit address. */
  reorged: { chainId: number; amount: string };
  /** Money confirmed after the session was canceled or expired (swept all the same). */
  paid_after_cancel: PaidBy & { chainId: number; amount: string; txHashes: string[] };
  /** A confirmed transfer into a deposit address that no transition reported. `onTime`: its block is no later than the expiry. */
  funds_received: Omit<PaidBy, "tokens"> & {
    chainId: number;
    txHash: string;
    logIndex: number;
    amountBaseUnits: string;
    blockTimestamp: string;
    onTime: boolean;
    /** The stablecoin that moved (EIP-55 checksum); absent on events written before it was added. */
    token?: string;
    /** false: a token the session does not accept (sent by mistake): not counted, `amountBaseUnits` in its own base units, swept all the same. */
    accepted?: boolean;
    statusReason: TransitionReason;
  };
  /** Money that reached the settlement address outside the `swept` transition. */
  funds_settled: { chainId: number; txHash: string; amountBaseUnits: string; statusReason: TransitionReason };
  /** A movement reported before that the chain no longer has. */
  funds_reverted: { chainId: number; direction: "received" | "settled"; txHash: string; amountBaseUnits: string; statusReason: TransitionReason };
}

/** The detail of an event of reason R. */
export type EventDetail<R extends EventReason = EventReason> = EventDetails[R];

/** An event's reason with its detail, one variant per reason: checking `reason` narrows `detail`. */
export type ReasonAndDetail = { [R in EventReason]: { reason: R; detail: EventDetail<R> } }[EventReason];

/** One event of the session's history (`if (h.reason === "paid") h.detail.txHashes`). */
export type HistoryEntry = ReasonAndDetail & {
  sequence: number;
  status: SessionStatus;
  previousStatus: SessionStatus | null;
  at: string;
};

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
  /** The payment link whose page started the session; null when it was created with the API. */
  paymentLinkId: string | null;
  expiresAt: string;
  createdAt: string;
  updatedAt: string;
  networks: PaymentNetwork[];
  /** What its refunds that are not CANCELED or FAILED hold, in its currency (retrieve, list and cancel answers). */
  amountRefunded?: string;
  history?: HistoryEntry[];
}

/** What create answers: the session plus the short-lived token the browser passes to sdk.open. */
export interface CreatedPaymentSession extends Omit<PaymentSession, "history" | "amountRefunded"> {
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

/** A session event's `data`: the session as of the event, with the reason and its detail (`if (d.reason === "paid") d.detail.overpaid`). */
export type PaymentSessionEventData = Omit<PaymentSession, "history"> &
  ReasonAndDetail & {
    previousStatus: SessionStatus | null;
    sequence: number;
  };

export interface PaymentSessionEvent {
  id: string;
  type: EventType;
  createdAt: string;
  data: PaymentSessionEventData;
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

export type RefundStatus = "PENDING" | "SENT" | "SUCCEEDED" | "FAILED" | "CANCELED";
export type RefundReason = "requested_by_customer" | "duplicate" | "overpayment" | "late_payment" | "underpaid_expired" | "other";

/** One token's share of a refund; all parts go out in one transaction. */
export interface RefundPart {
  tokenAddress: string;
  tokenSymbol: string;
  decimals: number;
  /** In the session's currency. */
  amount: string;
  /** Exactly what the payer receives, in the token's base units. */
  amountBaseUnits: string;
  /** The address that paid this token, or the one a refund link was claimed with; null while unknown (`destination_unknown`) or not claimed yet (`awaiting_claim`). */
  destination: string | null;
}

/** A page of ours that takes a payment for you (the service's docs/payment-links.md). */
export interface PaymentLink {
  paymentLinkId: string;
  /** The page: send it to the payer, or print it as a QR code. */
  url: string;
  status: "active" | "inactive" | "expired" | "used_up";
  /** The fixed price; null when the payer chooses within minAmount..maxAmount. */
  amount: string | null;
  minAmount: string | null;
  maxAmount: string | null;
  currency: string;
  description: string;
  maxUses: number | null;
  /** Sessions the link started that did not end CANCELED. */
  uses: number;
  expiresAt: string | null;
  redirectUrl: string | null;
  metadata: Record<string, string>;
  environment: Environment;
  createdAt: string;
  deactivatedAt: string | null;
}

export interface CreatePaymentLinkParams {
  /** A fixed price, e.g. "25.00"; or send minAmount and maxAmount instead. */
  amount?: string;
  minAmount?: string;
  maxAmount?: string;
  currency?: string;
  description: string;
  maxUses?: number;
  /** RFC 3339 date-time. */
  expiresAt?: string;
  redirectUrl?: string;
  metadata?: Record<string, string>;
}

/** Money back to the payer, from your refund balance (the service's docs/refunds.md). */
export interface Refund {
  refundId: string;
  paymentSessionId: string;
  status: RefundStatus;
  amount: string;
  currency: string;
  reason: RefundReason;
  environment: Environment;
  chainId: number;
  network: string;
  parts: RefundPart[];
  /** Why a PENDING refund has not gone out yet. */
  waitingReason: "destination_unknown" | "insufficient_refund_balance" | "spend_guard" | "awaiting_claim" | "awaiting_approval" | "awaiting_wallet" | null;
  failureReason: "reverted" | "transfer_missing" | null;
  /** Where its money comes from: the refund balance, or the merchant's own wallet (paid from the settlement address). */
  funding: "balance" | "merchant_wallet";
  transactionHash: string | null;
  metadata: Record<string, string>;
  createdAt: string;
  updatedAt: string;
  sentAt: string | null;
  finishedAt: string | null;
  /** A refund to a link: the page to give the payer (anyone holding it can claim it). Null otherwise. */
  claimUrl: string | null;
  /** Until when the link can be claimed. */
  claimExpiresAt: string | null;
  /** When the payer claimed the link. */
  claimedAt: string | null;
  /** When the merchant approved the claim (refunds that require approval); null until then. */
  approvedAt: string | null;
  /** Whether a claim waits for `refunds.approve` before it is sent. */
  requireApproval: boolean;
}

export type RefundEventType = "refund.created" | "refund.sent" | "refund.succeeded" | "refund.failed" | "refund.canceled";

/**
 * A refund's event: the refund as `refunds.retrieve` showed it at the change, and its `sequence`
 * in its payment session's sequence (shared with the session's own events, delivered in that order).
 */
export interface RefundEvent {
  id: string;
  type: RefundEventType;
  createdAt: string;
  data: Refund & { sequence: number };
}

export interface RefundEventWithDeliveries extends RefundEvent {
  deliveries: Delivery[];
}

export interface CreateRefundParams {
  reason: RefundReason;
  /** Decimal string with exactly two places; absent: everything left to refund. */
  amount?: string;
  /** Needed only when money is left to refund on more than one network. */
  chainId?: number;
  /** Refund in this one token; absent: every token received, in proportion. */
  token?: string;
  metadata?: Record<string, string>;
  /** `"link"`: the payer claims it with an address at the answer's `claimUrl`; absent: to the address that paid. */
  destination?: "link";
  /** With a link: a claim waits for `refunds.approve`. Default false. */
  requireApproval?: boolean;
  /** With a link: seconds it can be claimed, 600 to 2592000 (30 days). Default 604800 (7 days). */
  linkExpiresInSeconds?: number;
}

/** Your refund balance on one network: fund `address` with its stablecoins. */
export interface RefundBalance {
  chainId: number;
  network: string;
  address: string | null;
  tokens: { tokenAddress: string; tokenSymbol: string; decimals: number; balanceBaseUnits: string | null; balance: string | null }[];
}

/** This environment's automatic returns (`refundSettings.retrieve` / `update`; the service's docs/refunds.md, "Automatic returns"). */
export interface RefundSettings {
  /** Overpaid, late and underpaid money goes back by itself after `delaySeconds`. Off by default. */
  automaticReturns: boolean;
  /** How long such money waits for you first: 1 to 2592000 (30 days). Default 86400 (24 h). */
  delaySeconds: number;
}

/** A field left out keeps its value. */
export interface UpdateRefundSettingsParams {
  automaticReturns?: boolean;
  delaySeconds?: number;
}

export type AutomaticReturnStatus = "scheduled" | "refunded" | "kept" | "merchant_refunded" | "skipped";

/** One automatic return of a session: one per network and reason, with when it falls due and what became of it. */
export interface AutomaticReturn {
  automaticReturnId: string;
  chainId: number;
  reason: "overpayment" | "late_payment" | "underpaid_expired";
  /** `refunded`: see `refundId`; `skipped`: see `outcome` (`disabled`, `nothing_to_return`, or the refund rule that refused it). */
  status: AutomaticReturnStatus;
  dueAt: string;
  refundId: string | null;
  outcome: string | null;
  createdAt: string;
  decidedAt: string | null;
}

/**
 * Every code of the API's error catalogue (docs/merchant-guide.md, "Errors"), held to it by
 * types.test.ts. `api_key_scope_missing` (403) is a restricted key calling an operation outside
 * its scopes (the message names the scope); `api_key_expired` (401) is a key past its expiry.
 */
export type ApiErrorCode =
  | "body_malformed"
  | "body_not_object"
  | "body_too_large"
  | "content_type_unsupported"
  | "parameter_missing"
  | "parameter_invalid"
  | "parameter_unknown"
  | "amount_invalid"
  | "amount_too_small"
  | "amount_too_large"
  | "currency_unsupported"
  | "idempotency_key_invalid"
  | "address_checksum_invalid"
  | "url_invalid"
  | "redirect_url_invalid"
  | "url_https_required"
  | "url_address_forbidden"
  | "url_unresolvable"
  | "route_not_found"
  | "method_not_allowed"
  | "credentials_missing"
  | "credentials_malformed"
  | "api_key_required"
  | "session_token_required"
  | "api_key_invalid"
  | "api_key_revoked"
  | "api_key_expired"
  | "session_token_invalid"
  | "session_token_expired"
  | "metrics_token_invalid"
  | "environment_mismatch"
  | "pay_to_other_account"
  | "api_key_scope_missing"
  | "session_token_mismatch"
  | "resource_not_found"
  | "settlement_address_missing"
  | "session_not_pending"
  | "session_finished"
  | "faucet_unavailable"
  | "session_not_cancelable"
  | "webhook_endpoint_limit_reached"
  | "webhook_endpoint_disabled"
  | "no_webhook_endpoint"
  | "gasless_unavailable"
  | "authorization_signature_invalid"
  | "authorization_recipient_mismatch"
  | "authorization_value_mismatch"
  | "authorization_window_mismatch"
  | "authorization_nonce_mismatch"
  | "authorization_expired"
  | "authorization_insufficient_balance"
  | "authorization_nonce_used"
  | "authorization_rejected"
  | "authorization_exists"
  | "session_not_refundable"
  | "refund_exceeds_refundable"
  | "refund_not_cancelable"
  | "refund_not_approvable"
  | "refund_wallet_payment_invalid"
  | "refund_not_payable_from_wallet"
  | "payment_link_inactive"
  | "payment_link_expired"
  | "payment_link_used_up"
  | "idempotency_key_reused"
  | "rate_limited"
  | "internal_error"
  | "network_unavailable"
  | "service_unavailable";
/** Codes the client raises itself, with no answer from the API behind them. */
export type ClientErrorCode = "api_key_missing" | "api_key_malformed" | "host_missing" | "connection_failed" | "unexpected_response";
