/**
 * The API's tables, in the Postgres schema `app` (the indexer owns schema `indexer`).
 * Money columns are bigint minor units; timestamps are timestamptz; ids are prefixed nanoids.
 * Change this file, then `bun run db:generate` writes the next SQL migration into drizzle/.
 */
import { sql } from "drizzle-orm";
import {
  bigint,
  check,
  index,
  integer,
  jsonb,
  pgSchema,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";

export const app = pgSchema("app");

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });

export const merchants = app.table("merchants", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  /** Public merchant ids (NEXT_PUBLIC_SERVICE_MERCHANT_ID), one per environment. */
  sandboxPublicId: text("sandbox_public_id").notNull().unique(),
  livePublicId: text("live_public_id").notNull().unique(),
  createdAt: ts("created_at").notNull().defaultNow(),
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
    environment: text("environment").notNull(),
    status: text("status").notNull(),
    statusReason: text("status_reason").notNull(),
    amountMinor: bigint("amount_minor", { mode: "bigint" }).notNull(),
    currency: text("currency").notNull(),
    referenceId: text("reference_id"),
    metadata: jsonb("metadata").$type<Record<string, string>>().notNull().default({}),
    expiresAt: ts("expires_at").notNull(),
    /** SHA-256 of the session token, hex. */
    tokenHash: text("token_hash").notNull().unique(),
    tokenExpiresAt: ts("token_expires_at").notNull(),
    /** Sequence number of the latest event of this session (1 = created). */
    sequence: integer("sequence").notNull().default(1),
    createdAt: ts("created_at").notNull().defaultNow(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    index("payment_sessions_list_idx").on(t.merchantId, t.environment, t.createdAt.desc(), t.id.desc()),
    index("payment_sessions_status_idx").on(t.merchantId, t.environment, t.status, t.createdAt.desc(), t.id.desc()),
    check("payment_sessions_amount_chk", sql`${t.amountMinor} > 0`),
    check("payment_sessions_environment_chk", sql`${t.environment} in ('sandbox', 'production')`),
    check(
      "payment_sessions_status_chk",
      sql`${t.status} in ('PENDING', 'FUNDED', 'SUCCEEDED', 'CANCELED', 'ERROR')`,
    ),
  ],
);

/**
 * One row per status change of a session: its history, and (later) the source of its
 * webhook events. `sequence` increases by one per session, starting at 1 on creation.
 */
export const sessionEvents = app.table(
  "session_events",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id")
      .notNull()
      .references(() => paymentSessions.id),
    merchantId: text("merchant_id").notNull(),
    environment: text("environment").notNull(),
    sequence: integer("sequence").notNull(),
    status: text("status").notNull(),
    previousStatus: text("previous_status"),
    reason: text("reason").notNull(),
    detail: jsonb("detail").$type<Record<string, unknown>>().notNull().default({}),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("session_events_session_seq_uq").on(t.sessionId, t.sequence),
    index("session_events_merchant_idx").on(t.merchantId, t.environment, t.createdAt.desc(), t.id.desc()),
  ],
);

/**
 * Idempotency-Key records (DESIGN.md §8): the first response to a key is kept for 24 h
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
    /** AES-256-GCM of the response body, base64 (iv.tag.ciphertext). */
    responseSealed: text("response_sealed").notNull(),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.merchantId, t.environment, t.keyHash] }),
    index("idempotency_keys_created_idx").on(t.createdAt),
  ],
);
