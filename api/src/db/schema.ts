/**
 * The API's tables, in the Postgres schema `app` (the indexer owns schema `indexer`).
 * Money columns are bigint minor units; timestamps are timestamptz; ids are prefixed nanoids.
 * Change this file, then `bun run db:generate` writes the next SQL migration into drizzle/.
 */
import { sql } from "drizzle-orm";
import type { Environment } from "../../../shared/environment.ts";
import type { EventReason, SessionStatus, TransitionReason } from "../../../shared/status.ts";
import {
  type AnyPgColumn,
  bigint,
  boolean,
  check,
  date,
  index,
  integer,
  jsonb,
  numeric,
  pgSchema,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import type { AccountEventType, DeliveryState, RefundEventType } from "./column-values.ts";

export const app = pgSchema("app");

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });

export const merchants = app.table("merchants", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  /** Public merchant ids (NEXT_PUBLIC_SERVICE_MERCHANT_ID), one per environment. */
  sandboxPublicId: text("sandbox_public_id").notNull().unique(),
  livePublicId: text("live_public_id").notNull().unique(),
  createdAt: ts("created_at").notNull().defaultNow(),
  /** An owner's choice: every member signs in with a second factor (those without one enroll at their next sign-in). */
  requireTwoFactor: boolean("require_two_factor").notNull().default(false),
});

export const apiKeys = app.table(
  "api_keys",
  {
    id: text("id").primaryKey(),
    merchantId: text("merchant_id")
      .notNull()
      .references(() => merchants.id),
    environment: text("environment").notNull(),
    name: text("name").notNull(),
    /** The first characters of the key, safe to show (e.g. "sk_test_4f9K"). */
    prefix: text("prefix").notNull(),
    /** SHA-256 of the whole key, hex. The key itself is never stored. */
    keyHash: text("key_hash").notNull().unique(),
    createdAt: ts("created_at").notNull().defaultNow(),
    lastUsedAt: ts("last_used_at"),
    revokedAt: ts("revoked_at"),
    /** What the key may do (credentials/scopes.ts); NULL: everything, as every key made before scopes existed. */
    scopes: text("scopes").array(),
    /** After this the key is refused like an unknown one; NULL: never. */
    expiresAt: ts("expires_at"),
  },
  (t) => [
    index("api_keys_merchant_idx").on(t.merchantId, t.environment),
    check("api_keys_environment_chk", sql`${t.environment} in ('sandbox', 'production')`),
  ],
);

export const paymentSessions = app.table(
  "payment_sessions",
  {
    id: text("id").primaryKey(),
    merchantId: text("merchant_id")
      .notNull()
      .references(() => merchants.id),
    environment: text("environment").$type<Environment>().notNull(),
    status: text("status").$type<SessionStatus>().notNull(),
    statusReason: text("status_reason").$type<TransitionReason>().notNull(),
    amountMinor: bigint("amount_minor", { mode: "bigint" }).notNull(),
    currency: text("currency").notNull(),
    referenceId: text("reference_id"),
    metadata: jsonb("metadata").$type<Record<string, string>>().notNull().default({}),
    expiresAt: ts("expires_at").notNull(),
    /** SHA-256 of the session token, hex. */
    tokenHash: text("token_hash").notNull().unique(),
    tokenExpiresAt: ts("token_expires_at").notNull(),
    /** Sequence number of the latest event of this session (1 = created), its refunds' events (app.refund_events) counted too. */
    sequence: integer("sequence").notNull().default(1),
    /**
     * The actor's durable timer: a runner advances the session once now() passes it
     * (expiry, confirmation re-checks, news from the indexer or the sweeper set it to now()).
     * Null: nothing to do until something new happens.
     */
    wakeAt: ts("wake_at"),
    /** Once FUNDED: the network that paid and the amount confirmed then (token base units). */
    fundingChainId: integer("funding_chain_id"),
    fundingAmount: numeric("funding_amount", { precision: 78, scale: 0 }),
    /** Sandbox: the next sweep of this session fails (→ ERROR sweep_failed). */
    forceSweepFailure: boolean("force_sweep_failure").notNull().default(false),
    createdAt: ts("created_at").notNull().defaultNow(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
    /** The payment link whose page started it (docs/payment-links.md); null for a session created by the API. */
    paymentLinkId: text("payment_link_id").references((): AnyPgColumn => paymentLinks.id),
  },
  (t) => [
    // A link's sessions, newest first (its dashboard page), and its live uses (payment-links/store.ts).
    index("payment_sessions_link_idx").on(t.paymentLinkId, t.createdAt.desc(), t.id.desc()).where(sql`${t.paymentLinkId} is not null`),
    index("payment_sessions_wake_idx").on(t.wakeAt).where(sql`${t.wakeAt} is not null`),
    index("payment_sessions_funded_idx").on(t.fundingChainId).where(sql`${t.status} = 'FUNDED'`),
    // No index on created_at alone: every read by creation time is a merchant's (the two below);
    // bounded indexing asks about addresses (session_deposits_address_uq). One entry fewer per create.
    index("payment_sessions_list_idx").on(t.merchantId, t.environment, t.createdAt.desc(), t.id.desc()),
    index("payment_sessions_status_idx").on(t.merchantId, t.environment, t.status, t.createdAt.desc(), t.id.desc()),
    // The dashboard's search by reference, exact or by prefix (api/src/dashboard/transactions.ts):
    // text_pattern_ops so `like 'abc%'` uses it whatever the database's collation.
    index("payment_sessions_reference_idx").on(t.merchantId, t.environment, t.referenceId.op("text_pattern_ops")).where(sql`${t.referenceId} is not null`),
    check("payment_sessions_amount_chk", sql`${t.amountMinor} > 0`),
    check("payment_sessions_environment_chk", sql`${t.environment} in ('sandbox', 'production')`),
    check(
      "payment_sessions_status_chk",
      sql`${t.status} in ('PENDING', 'FUNDED', 'SUCCEEDED', 'CANCELED', 'ERROR')`,
    ),
  ],
);

/**
 * One row per status change of a session: its history, and the source of its webhook events.
 * `sequence` increases per session, starting at 1 on creation; the numbers its refunds' events
 * took (app.refund_events) are not here, so a session with refunds skips them.
 */
export const sessionEvents = app.table(
  "session_events",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id")
      .notNull()
      .references(() => paymentSessions.id),
    merchantId: text("merchant_id").notNull(),
    environment: text("environment").$type<Environment>().notNull(),
    sequence: integer("sequence").notNull(),
    status: text("status").$type<SessionStatus>().notNull(),
    previousStatus: text("previous_status").$type<SessionStatus>(),
    reason: text("reason").$type<EventReason>().notNull(),
    detail: jsonb("detail").$type<Record<string, unknown>>().notNull().default({}),
    /**
     * What the event's webhook body is built from, taken when the event is written and never
     * changed: the session row as of the event (without its token hash) and its deposits
     * (effects/event-snapshot.ts). So every attempt, redelivery and GET /events sends the same
     * bytes whatever the session does next. Null in rows an older build wrote: the worker's
     * first claim of such an event takes it then (webhooks/statements/claim-deliveries.ts).
     */
    snapshot: jsonb("snapshot").$type<{ session: Record<string, unknown>; deposits: Record<string, unknown>[] }>(),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("session_events_session_seq_uq").on(t.sessionId, t.sequence),
    index("session_events_merchant_idx").on(t.merchantId, t.environment, t.createdAt.desc(), t.id.desc()),
  ],
);

/**
 * Idempotency-Key records (docs/decisions.md, "Idempotency"): the first response to a key is kept for 24 h
 * and replayed for the same request; a different request with the same key is refused.
 * The key is stored only as a hash and the response sealed with a key derived from it:
 * a creation response holds a session token, and the database alone must not give it away.
 */
export const idempotencyKeys = app.table(
  "idempotency_keys",
  {
    merchantId: text("merchant_id").notNull(),
    environment: text("environment").notNull(),
    keyHash: text("key_hash").notNull(),
    /** "POST /payment-sessions" etc.: a key is scoped to one endpoint. */
    endpoint: text("endpoint").notNull(),
    requestHash: text("request_hash").notNull(),
    /** 0 while the first request is still being processed (its transaction holds the row). */
    responseStatus: integer("response_status").notNull(),
    /** AES-256-GCM of the response body, base64 (v2.iv.tag.ciphertext; v1 rows: iv.tag.ciphertext). See http/idempotency.ts. */
    responseSealed: text("response_sealed").notNull(),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.merchantId, t.environment, t.keyHash] }),
    index("idempotency_keys_created_idx").on(t.createdAt),
  ],
);

/**
 * Webhook endpoints (docs/decisions.md, "Webhooks"): several per merchant and environment. The signing
 * secret (`whsec_…`) must be shown again on demand, so it is stored sealed (AES-256-GCM
 * under SERVICE_ENCRYPTION_KEY, bound to the endpoint id), never in clear. During a
 * rotation the previous secret stays valid until `previous_secret_expires_at`, and every
 * delivery carries a signature with each. Deleting an endpoint sets `deleted_at` (its
 * attempt log stays); disabling (by the merchant, or by a `410 Gone`) stops deliveries.
 */
export const webhookEndpoints = app.table(
  "webhook_endpoints",
  {
    id: text("id").primaryKey(),
    merchantId: text("merchant_id")
      .notNull()
      .references(() => merchants.id),
    environment: text("environment").$type<Environment>().notNull(),
    url: text("url").notNull(),
    description: text("description"),
    enabled: boolean("enabled").notNull().default(true),
    /** Why the service disabled it ("gone": the endpoint answered 410); null when the merchant did, or when enabled. */
    disabledReason: text("disabled_reason"),
    secretSealed: text("secret_sealed").notNull(),
    previousSecretSealed: text("previous_secret_sealed"),
    previousSecretExpiresAt: ts("previous_secret_expires_at"),
    createdAt: ts("created_at").notNull().defaultNow(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
    deletedAt: ts("deleted_at"),
  },
  (t) => [
    index("webhook_endpoints_merchant_idx").on(t.merchantId, t.environment, t.createdAt),
    check("webhook_endpoints_environment_chk", sql`${t.environment} in ('sandbox', 'production')`),
  ],
);

/**
 * Account events: what happens to a merchant's account rather than to a session (today
 * `settlement_address.updated`), announced to its webhook endpoints through the same outbox
 * as session events. `data` is the event's `data` object exactly as delivered, frozen when the
 * change commits (the account may change again before a retry), so every attempt and
 * redelivery carries the same body. Written in the transaction of the change it announces.
 */
export const accountEvents = app.table(
  "account_events",
  {
    id: text("id").primaryKey(),
    merchantId: text("merchant_id")
      .notNull()
      .references(() => merchants.id),
    environment: text("environment").notNull(),
    type: text("type").$type<AccountEventType>().notNull(),
    data: jsonb("data").$type<Record<string, unknown>>().notNull(),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [
    index("account_events_merchant_idx").on(t.merchantId, t.environment, t.createdAt.desc(), t.id.desc()),
    check("account_events_environment_chk", sql`${t.environment} in ('sandbox', 'production')`),
  ],
);

/**
 * A refund's webhook events (docs/refunds.md, "Webhooks"): `refund.created`, `.sent`,
 * `.succeeded`, `.failed`, `.canceled`, each written in the transaction of the refund's state
 * change. They belong to the refund's session's event sequence: `sequence` is taken from the
 * session's counter (app.payment_sessions.sequence) under its row lock, so the outbox orders them
 * with the session's own events. `data` is the event's `data` exactly as delivered (the refund as
 * GET /refunds/{id} shows it then, with the sequence), frozen at the change, so every attempt and
 * redelivery sends the same bytes.
 */
export const refundEvents = app.table(
  "refund_events",
  {
    id: text("id").primaryKey(),
    refundId: text("refund_id")
      .notNull()
      .references(() => refunds.id),
    sessionId: text("session_id")
      .notNull()
      .references(() => paymentSessions.id),
    merchantId: text("merchant_id").notNull(),
    environment: text("environment").$type<Environment>().notNull(),
    sequence: integer("sequence").notNull(),
    type: text("type").$type<RefundEventType>().notNull(),
    data: jsonb("data").$type<Record<string, unknown>>().notNull(),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("refund_events_session_seq_uq").on(t.sessionId, t.sequence),
    index("refund_events_merchant_idx").on(t.merchantId, t.environment, t.createdAt.desc(), t.id.desc()),
    index("refund_events_refund_idx").on(t.refundId),
    check("refund_events_type_chk", sql`${t.type} in ('refund.created', 'refund.sent', 'refund.succeeded', 'refund.failed', 'refund.canceled')`),
  ],
);

/**
 * The durable outbox: one row per (event, endpoint), written in the same statement or
 * transaction as the event itself, so an event is never without its deliveries.
 *
 * An event is either a session event (`event_id`, with its session and sequence) or an
 * account event (`account_event_id`; session_id and sequence null); exactly one is set. One
 * table and one worker for both: the claim, retry schedule, signing, attempt log, lease,
 * redelivery and disable-on-410 rules are written once. Two foreign keys rather than one
 * untyped id, so either kind of event is guaranteed to exist.
 *
 * state: waiting (an earlier event of the same session to the same endpoint is still
 * open) → pending (due at next_attempt_at) → sending (claimed; next_attempt_at is then
 * the lease's end, after which another worker may take it again) → succeeded | failed
 * (retries used up, or the endpoint answered 410) | canceled (endpoint disabled or deleted).
 * `ordered` deliveries (the automatic ones) keep at most one pending/sending row per
 * (endpoint, session); redeliveries asked for by the merchant are not ordered. An account
 * event has no session, so its automatic delivery is its own queue's head: never waiting,
 * and never holding up (or held up by) a session's events.
 */
export const webhookDeliveries = app.table(
  "webhook_deliveries",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    /** A session event; null for an account event. */
    eventId: text("event_id").references(() => sessionEvents.id),
    /** An account event; null for a session event. */
    accountEventId: text("account_event_id").references(() => accountEvents.id),
    /** A refund's event (with its session and sequence: ordered with the session's events). */
    refundEventId: text("refund_event_id").references(() => refundEvents.id),
    endpointId: text("endpoint_id")
      .notNull()
      .references(() => webhookEndpoints.id),
    sessionId: text("session_id"),
    sequence: integer("sequence"),
    ordered: boolean("ordered").notNull().default(true),
    state: text("state").$type<DeliveryState>().notNull(),
    /** Claims so far; also the fencing token of the current claim. */
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: ts("next_attempt_at"),
    lastAttemptAt: ts("last_attempt_at"),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error"),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [
    index("webhook_deliveries_due_idx").on(t.nextAttemptAt).where(sql`${t.state} in ('pending', 'sending')`),
    index("webhook_deliveries_queue_idx")
      .on(t.sessionId, t.endpointId, t.sequence)
      .where(sql`${t.state} in ('waiting', 'pending', 'sending')`),
    index("webhook_deliveries_event_idx").on(t.eventId),
    index("webhook_deliveries_account_event_idx").on(t.accountEventId).where(sql`${t.accountEventId} is not null`),
    index("webhook_deliveries_refund_event_idx").on(t.refundEventId).where(sql`${t.refundEventId} is not null`),
    index("webhook_deliveries_endpoint_open_idx").on(t.endpointId).where(sql`${t.state} in ('waiting', 'pending', 'sending')`),
    check(
      "webhook_deliveries_state_chk",
      sql`${t.state} in ('waiting', 'pending', 'sending', 'succeeded', 'failed', 'canceled')`,
    ),
    check(
      "webhook_deliveries_event_kind_chk",
      sql`(${t.eventId} is not null and ${t.accountEventId} is null and ${t.refundEventId} is null and ${t.sessionId} is not null and ${t.sequence} is not null)
       or (${t.eventId} is null and ${t.accountEventId} is not null and ${t.refundEventId} is null and ${t.sessionId} is null and ${t.sequence} is null and ${t.state} <> 'waiting')
       or (${t.eventId} is null and ${t.accountEventId} is null and ${t.refundEventId} is not null and ${t.sessionId} is not null and ${t.sequence} is not null)`,
    ),
  ],
);

/** Every delivery attempt, including test events: time, status code, latency, the first 1 KB of the answer, the error. */
export const webhookAttempts = app.table(
  "webhook_attempts",
  {
    id: text("id").primaryKey(),
    endpointId: text("endpoint_id")
      .notNull()
      .references(() => webhookEndpoints.id),
    merchantId: text("merchant_id").notNull(),
    environment: text("environment").notNull(),
    /** An event of app.session_events or app.account_events, or a test event's own id (not stored as an event). */
    eventId: text("event_id").notNull(),
    /** "event" (a session event, automatic), "account" (an account event, automatic), "redelivery" (asked for), "test". */
    kind: text("kind").notNull(),
    attemptNumber: integer("attempt_number").notNull(),
    url: text("url").notNull(),
    succeeded: boolean("succeeded").notNull(),
    statusCode: integer("status_code"),
    latencyMs: integer("latency_ms").notNull(),
    responseExcerpt: text("response_excerpt"),
    error: text("error"),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [
    index("webhook_attempts_event_idx").on(t.eventId, t.createdAt.desc()),
    index("webhook_attempts_endpoint_idx").on(t.endpointId, t.createdAt.desc(), t.id.desc()),
  ],
);

/**
 * Where a merchant's funds go, per environment and network. A deposit address commits to
 * its settlement address, so a change applies to sessions created afterwards.
 */
export const merchantSettlements = app.table(
  "merchant_settlements",
  {
    merchantId: text("merchant_id")
      .notNull()
      .references(() => merchants.id),
    environment: text("environment").notNull(),
    chainId: integer("chain_id").notNull(),
    /** Lowercase 0x hex. */
    address: text("address").notNull(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.merchantId, t.environment, t.chainId] }),
    // Bounded indexing asks app.watched_addresses about each transfer's two addresses (indexer/watched-db.ts).
    index("merchant_settlements_address_idx").on(t.address),
  ],
);

/** A stablecoin a session accepts on a network (session_deposits.tokens). */
export interface AcceptedToken {
  /** Lowercase 0x hex, as the indexer stores `token`. */
  address: string;
  symbol: string;
  decimals: number;
}

/** A session's one-time deposit address on each network it can be paid on. */
export const sessionDeposits = app.table(
  "session_deposits",
  {
    sessionId: text("session_id")
      .notNull()
      .references(() => paymentSessions.id),
    chainId: integer("chain_id").notNull(),
    /** Lowercase 0x hex, as the indexer stores `to`. */
    address: text("address").notNull(),
    settlementAddress: text("settlement_address").notNull(),
    /** The network's main stablecoin (the first of `tokens`). */
    tokenAddress: text("token_address").notNull(),
    /**
     * The session's unit on this network: the most decimals among its accepted stablecoins (6 for
     * USDC and USDT). Amounts of every token are counted in it (at par: 1 USDT = 1 USDC = 1 USD).
     */
    decimals: integer("decimals").notNull(),
    /** The session amount in that unit. */
    requiredBaseUnits: numeric("required_base_units", { precision: 78, scale: 0 }).notNull(),
    confirmations: integer("confirmations").notNull(),
    /**
     * The stablecoins this session accepts on the network, as when it was created (main first):
     * [{ address (lowercase), symbol, decimals }]. Empty (sessions created before several tokens):
     * only `token_address`, in `decimals`.
     */
    tokens: jsonb("tokens").$type<AcceptedToken[]>().notNull().default(sql`'[]'::jsonb`),
  },
  (t) => [
    primaryKey({ columns: [t.sessionId, t.chainId] }),
    // One index for both: unique per (network, address), and, address first, a lookup for the
    // dashboard's search by deposit address and for bounded indexing, which asks about addresses
    // whatever the chain (the view has no chain). Two indexes here cost an entry more per create.
    uniqueIndex("session_deposits_address_uq").on(t.address, t.chainId),
  ],
);

/**
 * A request to move a session's funds on one network to its settlement address, written by
 * the session actor with the transition that calls for it; carried out by the sweeper.
 */
export const sweeps = app.table(
  "sweeps",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id")
      .notNull()
      .references(() => paymentSessions.id),
    chainId: integer("chain_id").notNull(),
    depositAddress: text("deposit_address").notNull(),
    settlementAddress: text("settlement_address").notNull(),
    tokenAddress: text("token_address").notNull(),
    /** Base units the actor expected to move; the sweep moves the whole balance. */
    amount: numeric("amount", { precision: 78, scale: 0 }).notNull(),
    /** queued → sending → confirmed | failed (queued again between failed attempts). */
    state: text("state").notNull().default("queued"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: ts("next_attempt_at").notNull().defaultNow(),
    transactionId: text("transaction_id"),
    /** What the confirmed sweep actually moved (from the receipt's Transfer log). */
    sweptAmount: numeric("swept_amount", { precision: 78, scale: 0 }),
    lastError: text("last_error"),
    createdAt: ts("created_at").notNull().defaultNow(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    index("sweeps_due_idx").on(t.chainId, t.nextAttemptAt).where(sql`${t.state} = 'queued'`),
    index("sweeps_session_idx").on(t.sessionId),
    // The sweeper's hot lookups: a deposit's sweep in flight, a transaction's sweeps.
    index("sweeps_sending_idx").on(t.chainId, t.depositAddress).where(sql`${t.state} = 'sending'`),
    index("sweeps_transaction_idx").on(t.transactionId).where(sql`${t.transactionId} is not null`),
    check("sweeps_state_chk", sql`${t.state} in ('queued', 'sending', 'confirmed', 'failed')`),
  ],
);

/**
 * One relayer transaction (re-sent with the same nonce when stuck): a batch of sweeps (kind
 * `sweep`) or one payer's EIP-3009 authorization (kind `authorization`). Both share the nonces,
 * the record-before-broadcast and the spend guards of sweeps/.
 */
export const sweepTransactions = app.table(
  "sweep_transactions",
  {
    id: text("id").primaryKey(),
    /** What it carries: the sweeps whose transaction_id it is, the authorization whose it is, or the refunds whose it is. */
    kind: text("kind").$type<"sweep" | "authorization" | "refund">().notNull().default("sweep"),
    chainId: integer("chain_id").notNull(),
    relayer: text("relayer").notNull(),
    nonce: bigint("nonce", { mode: "bigint" }).notNull(),
    /** The newest hash sent for this nonce (a replacement changes it). */
    txHash: text("tx_hash"),
    /** Every hash sent for this nonce, oldest first: any of them may be the one mined. */
    txHashes: jsonb("tx_hashes").$type<string[]>().notNull().default([]),
    /**
     * signed → sent → mined | failed; `dropped` when the chain no longer has it (a reorg deeper
     * than the confirmations, a node or chain that went back) or it could never be mined (above
     * a nonce the chain lost): its sweeps were queued again (sweeps/reconcile.ts).
     */
    state: text("state").notNull(),
    maxFeePerGas: numeric("max_fee_per_gas", { precision: 78, scale: 0 }),
    /**
     * The signed bytes of tx_hash (public once broadcast; no secret): after a restart they
     * are broadcast again at once instead of waiting to be replaced as stuck.
     */
    rawTx: text("raw_tx"),
    blockNumber: bigint("block_number", { mode: "bigint" }),
    gasUsed: bigint("gas_used", { mode: "bigint" }),
    /** The mined receipt's effective gas price (wei): gas_used × it is what the relayer paid. */
    effectiveGasPrice: numeric("effective_gas_price", { precision: 78, scale: 0 }),
    lastError: text("last_error"),
    createdAt: ts("created_at").notNull().defaultNow(),
    sentAt: ts("sent_at"),
    minedAt: ts("mined_at"),
  },
  (t) => [
    // A nonce is held by one live transaction; a `dropped` one (the chain lost it, or it was
    // stranded above a nonce the chain lost) gives its nonce back to be signed again.
    uniqueIndex("sweep_transactions_nonce_uq").on(t.chainId, t.relayer, t.nonce).where(sql`${t.state} <> 'dropped'`),
    index("sweep_transactions_open_idx").on(t.chainId, t.relayer).where(sql`${t.state} in ('signed', 'sent')`),
    check("sweep_transactions_kind_chk", sql`${t.kind} in ('sweep', 'authorization', 'refund')`),
  ],
);

/**
 * The session's money ledger (sessions/funds.ts): each confirmed movement into a deposit
 * address (`in`, per log) or from it to the settlement address (`out`, per transaction;
 * log_index -1), with the event that reported it to the merchant.
 */
export const sessionFunds = app.table(
  "session_funds",
  {
    sessionId: text("session_id")
      .notNull()
      .references(() => paymentSessions.id),
    chainId: integer("chain_id").notNull(),
    direction: text("direction").notNull(),
    txHash: text("tx_hash").notNull(),
    logIndex: integer("log_index").notNull(),
    /** In the session's unit on the network (session_deposits.decimals). */
    amount: numeric("amount", { precision: 78, scale: 0 }).notNull(),
    /** The stablecoin of a payment in (lowercase); null: the deposit's main token, or money out (one sweep may move several). */
    tokenAddress: text("token_address"),
    blockTimestamp: ts("block_timestamp"),
    eventId: text("event_id"),
    /** The chain no longer has it (reported as `funds_reverted`); a later movement is a row of its own. */
    revertedAt: ts("reverted_at"),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.sessionId, t.chainId, t.direction, t.txHash, t.logIndex] }),
    // The dashboard's search by transaction hash (payments in, sweeps out).
    index("session_funds_tx_idx").on(t.txHash),
    // After a reorg, the sessions whose money moved lately on that chain look again (sessions/runner.ts).
    index("session_funds_recent_idx").on(t.chainId, t.createdAt).where(sql`${t.revertedAt} is null`),
    check("session_funds_direction_chk", sql`${t.direction} in ('in', 'out')`),
  ],
);

/** A recorded authorization's states (the relayer's part: sweeps/send-authorization.ts, gasless/submission.ts). */
export type AuthorizationStatus = "recorded" | "sending" | "mined" | "failed";
/**
 * Why a recorded authorization waits (the first four) or why it failed for good (the rest).
 * Their words are in gasless/submission.ts (REASON_TEXT).
 */
export type AuthorizationReason =
  | "gasless_off"
  | "spend_guard"
  | "fee_above_ceiling"
  | "relayer_unfunded"
  | "used_elsewhere"
  | "expired"
  | "session_closed"
  | "session_budget"
  | "rejected"
  | "reverted";

/**
 * A payer's signed EIP-3009 authorization for a session (api/src/gasless/), checked in full
 * before it was written here: signature, terms, balance, a simulation of the exact transfer.
 * One per session (the session's nonce allows no other); the relayer carries it out later.
 */
export const paymentAuthorizations = app.table(
  "payment_authorizations",
  {
    sessionId: text("session_id")
      .primaryKey()
      .references(() => paymentSessions.id),
    chainId: integer("chain_id").notNull(),
    /** Lowercase 0x hex, as everywhere. */
    tokenAddress: text("token_address").notNull(),
    fromAddress: text("from_address").notNull(),
    /** The session's settlement address on that network. */
    toAddress: text("to_address").notNull(),
    value: numeric("value", { precision: 78, scale: 0 }).notNull(),
    validAfter: numeric("valid_after", { precision: 78, scale: 0 }).notNull(),
    validBefore: numeric("valid_before", { precision: 78, scale: 0 }).notNull(),
    /** 0x + 64 lowercase hex: the session's nonce (gasless/authorization.ts authorizationNonce). */
    nonce: text("nonce").notNull(),
    /** 0x hex, as the payer sent it (65 bytes from a plain wallet; a contract wallet's may be longer). */
    signature: text("signature").notNull(),
    /**
     * recorded (checked, waiting for the relayer; `reason` says why it waits, if it does) →
     * sending (a relayer transaction carries it: `transaction_id`) → mined (its receipt shows the
     * Transfer to the settlement address and AuthorizationUsed) | failed (final, `reason` says
     * why). A sending one goes back to recorded only when its transaction can never land
     * (sweeps/watch.ts, sweeps/reconcile.ts). gasless/submission.ts names the reasons.
     */
    status: text("status").$type<AuthorizationStatus>().notNull().default("recorded"),
    /** Why it waits (recorded) or why it failed (failed): a code of gasless/submission.ts. */
    reason: text("reason").$type<AuthorizationReason>(),
    /** The reason in words, for the operator and the payer view. */
    detail: text("detail"),
    /** Relayer transactions sent for it (the per-session spend guard counts them with the sweeps'). */
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: ts("next_attempt_at").notNull().defaultNow(),
    /** The app.sweep_transactions row carrying it (kind 'authorization'). */
    transactionId: text("transaction_id"),
    /** The mined transaction's hash (mined, or failed by its receipt). */
    txHash: text("tx_hash"),
    createdAt: ts("created_at").notNull().defaultNow(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    check("payment_authorizations_status_chk", sql`${t.status} in ('recorded', 'sending', 'mined', 'failed')`),
    index("payment_authorizations_due_idx").on(t.chainId, t.nextAttemptAt).where(sql`${t.status} = 'recorded'`),
    index("payment_authorizations_transaction_idx").on(t.transactionId).where(sql`${t.transactionId} is not null`),
    // Bounded indexing asks by nonce whether an AuthorizationUsed on-chain is one of ours, and the
    // runner maps an indexed authorized transfer back to its session (indexer/watched-db.ts, sessions/indexed.ts).
    index("payment_authorizations_nonce_idx").on(t.nonce),
    // After a reorg, the runner wakes the sessions whose payment by authorization it may have
    // taken away: those still usable lately (sessions/runner.ts).
    index("payment_authorizations_valid_before_idx").on(t.chainId, t.validBefore),
  ],
);

/**
 * Every session's EIP-3009 nonce (gasless/authorization.ts authorizationNonce), written by the
 * create statement with its session. The nonce is a hash of the session id, which SQL cannot
 * compute: this table is how an AuthorizationUsed indexed on-chain finds its session whether or
 * not we ever recorded the authorization (anyone who saw the payer's signature may submit it
 * first) — the runner's wake-up (sessions/indexed.ts) and bounded indexing (indexer/watched-db.ts)
 * look a nonce up here. Sessions created before it: their open ones were filled in by the
 * migration that made it (db/backfills.ts).
 */
export const sessionNonces = app.table("session_nonces", {
  /** 0x + 64 lowercase hex, as the indexer stores an AuthorizationUsed's nonce. */
  nonce: text("nonce").primaryKey(),
  /**
   * No foreign key: the row is written by the statement that writes its session (and sessions are
   * never deleted); a key's check would be one more trigger run on every create, the hot path.
   */
  sessionId: text("session_id").notNull(),
});

/** How far the session runner has looked at each chain's indexed transfers. */
export const runnerCursors = app.table("runner_cursors", {
  chainId: integer("chain_id").primaryKey(),
  blockNumber: bigint("block_number", { mode: "bigint" }).notNull(),
  /** The head's hash then: the same height with another hash, or a lower head, is a reorg. */
  blockHash: text("block_hash"),
  updatedAt: ts("updated_at").notNull().defaultNow(),
});

/**
 * People who sign in to the merchant dashboard (api/src/dashboard/). Several per merchant;
 * the email is stored lowercase and is unique across merchants (one sign-in, one merchant).
 * The password is an argon2id hash (Bun.password), never the password itself.
 */
export const dashboardUsers = app.table(
  "dashboard_users",
  {
    id: text("id").primaryKey(),
    merchantId: text("merchant_id")
      .notNull()
      .references(() => merchants.id),
    email: text("email").notNull().unique(),
    passwordHash: text("password_hash").notNull(),
    createdAt: ts("created_at").notNull().defaultNow(),
    passwordChangedAt: ts("password_changed_at").notNull().defaultNow(),
    /** What the person may do (dashboard/permissions.ts): owner, admin, developer, finance, support, viewer. Existing people are owners. */
    role: text("role").notNull().default("owner"),
  },
  (t) => [
    index("dashboard_users_merchant_idx").on(t.merchantId),
    check("dashboard_users_role_chk", sql`${t.role} in ('owner', 'admin', 'developer', 'finance', 'support', 'viewer')`),
  ],
);

/**
 * Invitations to join a merchant's team (dashboard/members.ts). The emailed link carries a
 * 238-bit secret whose SHA-256 is kept here; it works once, for 7 days, and only for its email.
 */
export const invitations = app.table(
  "invitations",
  {
    id: text("id").primaryKey(),
    merchantId: text("merchant_id")
      .notNull()
      .references(() => merchants.id),
    email: text("email").notNull(),
    role: text("role").notNull(),
    tokenHash: text("token_hash").notNull().unique(),
    invitedBy: text("invited_by"),
    createdAt: ts("created_at").notNull().defaultNow(),
    expiresAt: ts("expires_at").notNull(),
    acceptedAt: ts("accepted_at"),
    revokedAt: ts("revoked_at"),
  },
  (t) => [
    index("invitations_merchant_idx").on(t.merchantId, t.createdAt),
    check("invitations_role_chk", sql`${t.role} in ('admin', 'developer', 'finance', 'support', 'viewer')`),
  ],
);

/**
 * Signed-in dashboard sessions, server-side: the cookie holds a random secret whose SHA-256
 * is the key here, so sign-out (or a password change, which deletes a user's rows) ends it
 * at once. Each has its own CSRF token, checked on every state-changing request.
 */
export const dashboardLogins = app.table(
  "dashboard_logins",
  {
    tokenHash: text("token_hash").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => dashboardUsers.id, { onDelete: "cascade" }),
    csrfToken: text("csrf_token").notNull(),
    ip: text("ip"),
    /** The browser's User-Agent at sign-in (at most 300 characters): how the person's device list names it. */
    userAgent: text("user_agent"),
    /** Signed in with the password but not yet the second factor: only the two-factor page opens. */
    awaitingSecondFactor: boolean("awaiting_second_factor").notNull().default(false),
    /** When this login last passed a second factor (sensitive actions ask for one within minutes). */
    secondFactorAt: ts("second_factor_at"),
    createdAt: ts("created_at").notNull().defaultNow(),
    lastSeenAt: ts("last_seen_at").notNull().defaultNow(),
    expiresAt: ts("expires_at").notNull(),
  },
  (t) => [index("dashboard_logins_user_idx").on(t.userId), index("dashboard_logins_expires_idx").on(t.expiresAt)],
);

/**
 * The security history: sign-ins (and failed ones, which also drive the sign-in throttle),
 * sign-outs, key creation and revocation, webhook and settlement changes. Append-only: a
 * trigger (migration 0009) refuses UPDATE and DELETE.
 */
export const securityEvents = app.table(
  "security_events",
  {
    id: text("id").primaryKey(),
    /** Null for a failed sign-in with an unknown email. */
    merchantId: text("merchant_id"),
    userId: text("user_id"),
    /** Who: the email as typed (lowercased) for sign-ins, the user's for everything else. */
    email: text("email"),
    action: text("action").notNull(),
    environment: text("environment"),
    detail: jsonb("detail").$type<Record<string, unknown>>().notNull().default({}),
    ip: text("ip"),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [
    index("security_events_merchant_idx").on(t.merchantId, t.createdAt.desc(), t.id.desc()),
    index("security_events_failures_idx").on(t.email, t.createdAt.desc()).where(sql`${t.action} = 'sign_in_failed'`),
    index("security_events_ip_failures_idx").on(t.ip, t.createdAt.desc()).where(sql`${t.action} = 'sign_in_failed'`),
    // A person's earlier sign-ins, for the new-device notice (the trigger of migration 0030).
    index("security_events_user_sign_in_idx").on(t.userId, t.createdAt.desc()).where(sql`${t.action} = 'sign_in'`),
    // The reset-link throttle's counts (dashboard/password-resets.ts).
    index("security_events_reset_email_idx").on(t.email, t.createdAt.desc()).where(sql`${t.action} = 'password_reset_requested'`),
    index("security_events_second_factor_failures_idx").on(t.email, t.createdAt.desc()).where(sql`${t.action} = 'two_factor_failed'`),
    index("security_events_reset_ip_idx").on(t.ip, t.createdAt.desc()).where(sql`${t.action} = 'password_reset_requested'`),
  ],
);

/** One group of a day's sessions in app.dashboard_days: its status, and for a paid one the network and token. */
export interface DayGroup {
  status: string;
  chainId: number | null;
  /** Lowercase 0x hex of the token paid (the session's deposit on that network); null when unpaid. */
  token: string | null;
  decimals: number | null;
  sessions: number;
  /** The confirmed payments of the group, token base units as a decimal string ("0" when unpaid). */
  amount: string;
}

/**
 * The dashboard home's figures of a past UTC day (api/src/dashboard/home.ts): a merchant's
 * sessions of one environment created that day, grouped by status and paying network and token.
 * A cache of app.payment_sessions, never the truth: a day's row is deleted when a session of
 * that day changes (found through its events) and computed again when next shown, so deleting
 * any of these rows loses nothing. Today is always counted from the sessions themselves.
 */
export const dashboardDays = app.table(
  "dashboard_days",
  {
    merchantId: text("merchant_id")
      .notNull()
      .references(() => merchants.id),
    environment: text("environment").notNull(),
    day: date("day", { mode: "string" }).notNull(),
    groups: jsonb("groups").$type<DayGroup[]>().notNull(),
    /** The start of the statement that counted it: every change committed before is in it. */
    computedAt: ts("computed_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.merchantId, t.environment, t.day] })],
);

/**
 * Up to when a merchant's session events (environment by environment) have been looked at for
 * changes to the days cached in app.dashboard_days: the next look starts there (less a margin).
 */
export const dashboardDayChecks = app.table(
  "dashboard_day_checks",
  {
    merchantId: text("merchant_id")
      .notNull()
      .references(() => merchants.id),
    environment: text("environment").notNull(),
    checkedAt: ts("checked_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.merchantId, t.environment] })],
);

/**
 * The service's live processes (api/src/nodes/): each registers at start, beats every few
 * seconds and deletes its row on a clean stop. A row whose beat is old is a node that died:
 * the API processes share the per-key rate limit among the live ones, and `bun run admin nodes`
 * and /readyz show them all.
 */
export const nodes = app.table(
  "nodes",
  {
    id: text("id").primaryKey(),
    /** What the process does: api, actors, sweeper, webhooks, indexer (several for one API process). */
    roles: text("roles").array().notNull(),
    host: text("host").notNull(),
    pid: integer("pid").notNull(),
    /** The build's version (package.json) and the newest migration it knows. */
    version: text("version").notNull(),
    migration: text("migration").notNull(),
    startedAt: ts("started_at").notNull().defaultNow(),
    heartbeatAt: ts("heartbeat_at").notNull().defaultNow(),
    /** The indexer role's state: `active` (the service reads its index), `standby` (its index kept warm); null without it. */
    indexer: text("indexer"),
  },
  (t) => [index("nodes_heartbeat_idx").on(t.heartbeatAt)],
);

/**
 * A lease one node holds at a time (name `indexer`: the node whose index the service reads). The
 * holder renews it before `expires_at`; a node that cannot renew in time stops the work first.
 */
export const leases = app.table("leases", {
  name: text("name").primaryKey(),
  holder: text("holder").notNull(),
  acquiredAt: ts("acquired_at").notNull().defaultNow(),
  expiresAt: ts("expires_at").notNull(),
});

/**
 * Token buckets kept in the database, for limits that must hold across every API process and
 * restart whatever the load balancer does: the payer's sandbox helpers (http/payer-limit.ts),
 * which move test tokens and are rare, so one statement per use costs nothing that matters.
 */
export const rateBuckets = app.table(
  "rate_buckets",
  {
    name: text("name").primaryKey(),
    /** Whole and fractional tokens left at `at` (not money: a count of requests). */
    tokens: numeric("tokens").notNull(),
    at: ts("at").notNull().defaultNow(),
  },
  (t) => [index("rate_buckets_at_idx").on(t.at)],
);

/** One token's share of a refund (app.refunds.parts): what is sent, and to whom. */
export interface RefundPartColumn {
  /** Lowercase 0x hex. */
  token: string;
  symbol: string;
  decimals: number;
  /** In the session's unit on the network (what app.refund_totals counts). */
  amount: string;
  /** In the token's own base units (what the transfer moves). */
  baseUnits: string;
  /** Lowercase 0x hex; null until known (several payers, no index: docs/refunds.md). */
  destination: string | null;
}

/**
 * Money back to a payer (docs/refunds.md; api/src/refunds/): on one network, in the tokens the
 * session received there, one part per token, sent in one relayer transaction. `amount` is the
 * parts' sum in the session's unit; app.refund_totals keeps the sum under what was received.
 */
export const refunds = app.table(
  "refunds",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id")
      .notNull()
      .references(() => paymentSessions.id),
    merchantId: text("merchant_id").notNull(),
    environment: text("environment").$type<Environment>().notNull(),
    chainId: integer("chain_id").notNull(),
    amount: numeric("amount", { precision: 78, scale: 0 }).notNull(),
    /** The session's unit on the network (session_deposits.decimals), which `amount` is in. */
    unitDecimals: integer("unit_decimals").notNull(),
    currency: text("currency").notNull(),
    reason: text("reason").notNull(),
    metadata: jsonb("metadata").$type<Record<string, string>>().notNull().default({}),
    parts: jsonb("parts").$type<RefundPartColumn[]>().notNull(),
    /** PENDING → SENT → SUCCEEDED | FAILED; CANCELED while PENDING (refunds/logic.ts). */
    state: text("state").notNull().default("PENDING"),
    /** Why a PENDING refund waits (null: due at next_attempt_at). */
    waitingReason: text("waiting_reason"),
    failureReason: text("failure_reason"),
    /** The relayer transaction (app.sweep_transactions) it is bound to once SENT (none for a transfer the merchant's wallet sent itself). */
    transactionId: text("transaction_id"),
    /** `balance` (the refund vault, the relayer pays) or `merchant_wallet` (app.refund_wallet_payments): chosen at the create, never changed. */
    funding: text("funding").$type<"balance" | "merchant_wallet">().notNull().default("balance"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: ts("next_attempt_at").notNull().defaultNow(),
    createdAt: ts("created_at").notNull().defaultNow(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
    sentAt: ts("sent_at"),
    finishedAt: ts("finished_at"),
  },
  (t) => [
    index("refunds_list_idx").on(t.merchantId, t.environment, t.createdAt.desc(), t.id.desc()),
    index("refunds_session_idx").on(t.sessionId, t.createdAt.desc(), t.id.desc()),
    index("refunds_due_idx").on(t.chainId, t.nextAttemptAt).where(sql`${t.state} = 'PENDING'`),
    index("refunds_transaction_idx").on(t.transactionId).where(sql`${t.transactionId} is not null`),
    check("refunds_amount_chk", sql`${t.amount} > 0`),
    check("refunds_environment_chk", sql`${t.environment} in ('sandbox', 'production')`),
    check("refunds_state_chk", sql`${t.state} in ('PENDING', 'SENT', 'SUCCEEDED', 'FAILED', 'CANCELED')`),
    check(
      "refunds_reason_chk",
      sql`${t.reason} in ('requested_by_customer', 'duplicate', 'overpayment', 'late_payment', 'underpaid_expired', 'other')`,
    ),
    check(
      "refunds_waiting_reason_chk",
      sql`${t.waitingReason} in ('destination_unknown', 'insufficient_refund_balance', 'spend_guard', 'awaiting_claim', 'awaiting_approval', 'awaiting_wallet')`,
    ),
    check("refunds_failure_reason_chk", sql`${t.failureReason} in ('reverted', 'transfer_missing')`),
    check("refunds_funding_chk", sql`${t.funding} in ('balance', 'merchant_wallet')`),
  ],
);

/**
 * How the merchant's own wallet pays a refund (docs/refunds.md, "From the merchant's own wallet"),
 * one per refund, written once: `authorization` — an EIP-3009 TransferWithAuthorization the
 * settlement address signed (the relayer submits it); `transfer` — the hash of the ERC-20 transfer
 * the wallet sent itself (the service watches its receipt). A hash settles one refund only.
 */
export const refundWalletPayments = app.table(
  "refund_wallet_payments",
  {
    refundId: text("refund_id")
      .primaryKey()
      .references(() => refunds.id),
    kind: text("kind").$type<"authorization" | "transfer">().notNull(),
    /** Lowercase 0x hex: the session's settlement address, the token, the refund's destination. */
    fromAddress: text("from_address").notNull(),
    tokenAddress: text("token_address").notNull(),
    toAddress: text("to_address").notNull(),
    value: numeric("value", { precision: 78, scale: 0 }).notNull(),
    validAfter: numeric("valid_after", { precision: 78, scale: 0 }),
    validBefore: numeric("valid_before", { precision: 78, scale: 0 }),
    nonce: text("nonce"),
    signature: text("signature"),
    /** The wallet's own transaction (kind `transfer`), lowercase. */
    txHash: text("tx_hash"),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("refund_wallet_payments_tx_uq").on(t.txHash),
    check("refund_wallet_payments_kind_chk", sql`${t.kind} in ('authorization', 'transfer')`),
    check(
      "refund_wallet_payments_shape_chk",
      sql`(${t.kind} = 'authorization' and ${t.signature} is not null and ${t.nonce} is not null and ${t.validBefore} is not null and ${t.txHash} is null) or (${t.kind} = 'transfer' and ${t.txHash} is not null and ${t.signature} is null)`,
    ),
  ],
);

/**
 * A refund's link (docs/refunds.md, "Refund links"): the refund has no destination until the payer
 * opens /refund/{linkId} and claims it with an address. The link id is a bearer secret: looked up
 * by its SHA-256 (`link_hash`), kept readable for the merchant's view only sealed under the
 * service's encryption key (`link_sealed`, the refund's id as associated data). One per refund.
 */
export const refundLinks = app.table(
  "refund_links",
  {
    refundId: text("refund_id")
      .primaryKey()
      .references(() => refunds.id),
    /** Hex SHA-256 of the link id. */
    linkHash: text("link_hash").notNull(),
    linkSealed: text("link_sealed").notNull(),
    expiresAt: ts("expires_at").notNull(),
    /** After the claim the refund waits for POST /refunds/{id}/approve (awaiting_approval). */
    requireApproval: boolean("require_approval").notNull().default(false),
    /** Set once: a link is single-use. */
    claimedAt: ts("claimed_at"),
    /** Lowercase 0x hex. */
    claimedAddress: text("claimed_address"),
    approvedAt: ts("approved_at"),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("refund_links_hash_uq").on(t.linkHash),
    check("refund_links_claim_chk", sql`(${t.claimedAt} is null) = (${t.claimedAddress} is null)`),
  ],
);

/**
 * What a session's live refunds (PENDING, SENT, SUCCEEDED) hold per network and token, in the
 * session's unit: the counter that keeps their sum under what the session received. A create
 * raises it with one conditional update (`held + amount <= received`), so concurrent creates
 * queue on the row and each is judged against what the one before it left (refunds/store.ts).
 */
export const refundTotals = app.table(
  "refund_totals",
  {
    sessionId: text("session_id")
      .notNull()
      .references(() => paymentSessions.id),
    chainId: integer("chain_id").notNull(),
    /** Lowercase 0x hex. */
    tokenAddress: text("token_address").notNull(),
    held: numeric("held", { precision: 78, scale: 0 }).notNull().default("0"),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.chainId, t.tokenAddress] }), check("refund_totals_held_chk", sql`${t.held} >= 0`)],
);

/**
 * A merchant's automatic returns, per environment (docs/refunds.md, "Automatic returns"): off
 * unless a row says on. `delay_seconds` is how long the money waits for the merchant to act
 * (refund it themselves, or keep it) before the service returns it.
 */
export const autoReturnSettings = app.table(
  "auto_return_settings",
  {
    merchantId: text("merchant_id")
      .notNull()
      .references(() => merchants.id),
    environment: text("environment").$type<Environment>().notNull(),
    enabled: boolean("enabled").notNull().default(false),
    delaySeconds: integer("delay_seconds").notNull().default(86400),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.merchantId, t.environment] }),
    check("auto_return_settings_environment_chk", sql`${t.environment} in ('sandbox', 'production')`),
    check("auto_return_settings_delay_chk", sql`${t.delaySeconds} between 1 and 2592000`),
  ],
);

/**
 * An automatic return's durable timer: one per session, network and reason (the unique key that
 * makes it happen once, whatever number of steps see the money or workers run), written in the
 * session step that records the money, due at `due_at`. The sweeper's loop of that network
 * claims it when due (FOR UPDATE SKIP LOCKED) and, in the same transaction, creates its refund
 * through the one refund path (refunds/store.ts) or says why not (`outcome`).
 */
export const autoReturns = app.table(
  "auto_returns",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id")
      .notNull()
      .references(() => paymentSessions.id),
    merchantId: text("merchant_id").notNull(),
    environment: text("environment").$type<Environment>().notNull(),
    chainId: integer("chain_id").notNull(),
    reason: text("reason").notNull(),
    /** scheduled → refunded | kept (the merchant's) | merchant_refunded (the merchant refunded first) | skipped (`outcome` says why). */
    state: text("state").notNull().default("scheduled"),
    dueAt: ts("due_at").notNull(),
    refundId: text("refund_id"),
    outcome: text("outcome"),
    createdAt: ts("created_at").notNull().defaultNow(),
    decidedAt: ts("decided_at"),
  },
  (t) => [
    uniqueIndex("auto_returns_once_uq").on(t.sessionId, t.chainId, t.reason),
    index("auto_returns_due_idx").on(t.chainId, t.dueAt).where(sql`${t.state} = 'scheduled'`),
    check("auto_returns_reason_chk", sql`${t.reason} in ('overpayment', 'late_payment', 'underpaid_expired')`),
    check("auto_returns_state_chk", sql`${t.state} in ('scheduled', 'refunded', 'kept', 'merchant_refunded', 'skipped')`),
  ],
);

/**
 * The mail outbox (mail/outbox.ts): every mail the service sends (invitations, password resets,
 * security notices) is a row written in the transaction of what it tells, then sent by the mail
 * worker (mail/worker.ts) with retries, so a mail is never dropped silently and never sent for a
 * change that rolled back. The body is sealed (it may hold a single-use link); the row is kept
 * for the dashboard's Outbox and purged a week after it was sent.
 */
export const mailOutbox = app.table(
  "mail_outbox",
  {
    id: text("id").primaryKey(),
    merchantId: text("merchant_id").references(() => merchants.id),
    toAddress: text("to_address").notNull(),
    /** What the mail is (password_reset, settlement_changed, …): for the Outbox and the logs. */
    kind: text("kind").notNull(),
    /**
     * A written mail: its subject, and `{text, html?}` as JSON sealed with the service's key
     * bound to the row's id. A security notice has neither: the trigger on app.security_events
     * queues it in the change's transaction, and the worker writes it from that line when it
     * sends (mail/notices.ts).
     */
    subject: text("subject"),
    bodySealed: text("body_sealed"),
    securityEventId: text("security_event_id").references(() => securityEvents.id),
    state: text("state").notNull().default("pending"),
    /** Claims so far; also the fencing token of the current claim. */
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: ts("next_attempt_at").notNull().defaultNow(),
    lastError: text("last_error"),
    messageId: text("message_id"),
    createdAt: ts("created_at").notNull().defaultNow(),
    sentAt: ts("sent_at"),
  },
  (t) => [
    index("mail_outbox_due_idx").on(t.nextAttemptAt).where(sql`${t.state} in ('pending', 'sending')`),
    index("mail_outbox_merchant_idx").on(t.merchantId, t.createdAt),
    check("mail_outbox_state_chk", sql`${t.state} in ('pending', 'sending', 'sent', 'failed')`),
    check("mail_outbox_content_chk", sql`(${t.subject} is not null and ${t.bodySealed} is not null) or ${t.securityEventId} is not null`),
  ],
);;

/**
 * Password reset links (dashboard/password-resets.ts): the emailed link carries a random secret
 * whose SHA-256 is the key here, so a database read gives no one a reset. Single use (used_at),
 * 30 minutes (expires_at); a reset ends every other link of the person and all their logins.
 */
export const passwordResets = app.table(
  "password_resets",
  {
    tokenHash: text("token_hash").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => dashboardUsers.id, { onDelete: "cascade" }),
    ip: text("ip"),
    createdAt: ts("created_at").notNull().defaultNow(),
    expiresAt: ts("expires_at").notNull(),
    usedAt: ts("used_at"),
  },
  (t) => [index("password_resets_user_idx").on(t.userId, t.createdAt)],
);

/**
 * A person's TOTP authenticator (RFC 6238; dashboard/two-factor.ts). The secret is sealed with the
 * service's key bound to the user; confirmed_at is null while enrolling (until a first code
 * matches). last_step is the 30-second step of the last code accepted: a code is never accepted
 * twice, nor one of an earlier step.
 */
export const userTotp = app.table("user_totp", {
  userId: text("user_id")
    .primaryKey()
    .references(() => dashboardUsers.id, { onDelete: "cascade" }),
  secretSealed: text("secret_sealed").notNull(),
  createdAt: ts("created_at").notNull().defaultNow(),
  confirmedAt: ts("confirmed_at"),
  lastStep: bigint("last_step", { mode: "number" }).notNull().default(0),
});

/** Ten single-use recovery codes per person with TOTP, kept as SHA-256 of the normalized code. */
export const recoveryCodes = app.table(
  "recovery_codes",
  {
    userId: text("user_id")
      .notNull()
      .references(() => dashboardUsers.id, { onDelete: "cascade" }),
    codeHash: text("code_hash").notNull(),
    usedAt: ts("used_at"),
  },
  (t) => [primaryKey({ columns: [t.userId, t.codeHash] })],
);

/**
 * A payment link (docs/payment-links.md): a page, /pay/{id}, that starts a payment session for
 * whoever opens it — a fixed amount, or one the payer types within [min, max]. Its id is public
 * (it is printed on invoices), unlike a refund link's. `max_uses` counts the sessions it started
 * that did not end CANCELED (expired or canceled unpaid): payment-links/store.ts counts them
 * under the row's lock, so concurrent visits of a link with one use left start one session.
 */
export const paymentLinks = app.table(
  "payment_links",
  {
    id: text("id").primaryKey(),
    merchantId: text("merchant_id")
      .notNull()
      .references(() => merchants.id),
    environment: text("environment").$type<Environment>().notNull(),
    /** A fixed amount (minor units), or null when the payer chooses one within min..max. */
    amountMinor: bigint("amount_minor", { mode: "bigint" }),
    minAmountMinor: bigint("min_amount_minor", { mode: "bigint" }),
    maxAmountMinor: bigint("max_amount_minor", { mode: "bigint" }),
    currency: text("currency").notNull(),
    /** Shown to the payer. */
    description: text("description").notNull(),
    maxUses: integer("max_uses"),
    expiresAt: ts("expires_at"),
    /** Where the payer goes once the session is paid (with ?paymentSessionId=…); null: a receipt page. */
    redirectUrl: text("redirect_url"),
    /** Copied into each session it starts, beside paymentLinkId. */
    metadata: jsonb("metadata").$type<Record<string, string>>().notNull().default({}),
    deactivatedAt: ts("deactivated_at"),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [
    index("payment_links_list_idx").on(t.merchantId, t.environment, t.createdAt.desc(), t.id.desc()),
    check("payment_links_environment_chk", sql`${t.environment} in ('sandbox', 'production')`),
    check(
      "payment_links_amount_chk",
      sql`(${t.amountMinor} is not null and ${t.amountMinor} > 0 and ${t.minAmountMinor} is null and ${t.maxAmountMinor} is null) or (${t.amountMinor} is null and ${t.minAmountMinor} > 0 and ${t.maxAmountMinor} >= ${t.minAmountMinor})`,
    ),
    check("payment_links_max_uses_chk", sql`${t.maxUses} is null or ${t.maxUses} > 0`),
  ],
);

/**
 * Passkeys (WebAuthn) as a second factor (dashboard/passkeys.ts): the credential's id and public
 * key (base64url) as the authenticator gave them, and its signature counter, which must rise.
 */
export const passkeys = app.table(
  "passkeys",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => dashboardUsers.id, { onDelete: "cascade" }),
    publicKey: text("public_key").notNull(),
    counter: bigint("counter", { mode: "number" }).notNull().default(0),
    transports: text("transports").array(),
    name: text("name").notNull(),
    createdAt: ts("created_at").notNull().defaultNow(),
    lastUsedAt: ts("last_used_at"),
  },
  (t) => [index("passkeys_user_idx").on(t.userId)],
);

/** A WebAuthn ceremony's challenge, one per login and purpose, used once, for five minutes. */
export const webauthnChallenges = app.table(
  "webauthn_challenges",
  {
    loginHash: text("login_hash")
      .notNull()
      .references(() => dashboardLogins.tokenHash, { onDelete: "cascade" }),
    purpose: text("purpose").notNull(),
    challenge: text("challenge").notNull(),
    expiresAt: ts("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.loginHash, t.purpose] })],
);
