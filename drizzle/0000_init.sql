CREATE SCHEMA "app";
--> statement-breakpoint
CREATE TABLE "app"."api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"merchant_id" text NOT NULL,
	"environment" text NOT NULL,
	"name" text NOT NULL,
	"prefix" text NOT NULL,
	"key_hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "api_keys_key_hash_unique" UNIQUE("key_hash"),
	CONSTRAINT "api_keys_environment_chk" CHECK ("app"."api_keys"."environment" in ('sandbox', 'production'))
);
--> statement-breakpoint
CREATE TABLE "app"."idempotency_keys" (
	"merchant_id" text NOT NULL,
	"environment" text NOT NULL,
	"key_hash" text NOT NULL,
	"endpoint" text NOT NULL,
	"request_hash" text NOT NULL,
	"response_status" integer NOT NULL,
	"response_sealed" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "idempotency_keys_merchant_id_environment_key_hash_pk" PRIMARY KEY("merchant_id","environment","key_hash")
);
--> statement-breakpoint
CREATE TABLE "app"."merchants" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"sandbox_public_id" text NOT NULL,
	"live_public_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "merchants_sandbox_public_id_unique" UNIQUE("sandbox_public_id"),
	CONSTRAINT "merchants_live_public_id_unique" UNIQUE("live_public_id")
);
--> statement-breakpoint
CREATE TABLE "app"."payment_sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"merchant_id" text NOT NULL,
	"environment" text NOT NULL,
	"status" text NOT NULL,
	"status_reason" text NOT NULL,
	"amount_minor" bigint NOT NULL,
	"currency" text NOT NULL,
	"reference_id" text,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"token_hash" text NOT NULL,
	"token_expires_at" timestamp with time zone NOT NULL,
	"sequence" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "payment_sessions_token_hash_unique" UNIQUE("token_hash"),
	CONSTRAINT "payment_sessions_amount_chk" CHECK ("app"."payment_sessions"."amount_minor" > 0),
	CONSTRAINT "payment_sessions_environment_chk" CHECK ("app"."payment_sessions"."environment" in ('sandbox', 'production')),
	CONSTRAINT "payment_sessions_status_chk" CHECK ("app"."payment_sessions"."status" in ('PENDING', 'FUNDED', 'SUCCEEDED', 'CANCELED', 'ERROR'))
);
--> statement-breakpoint
CREATE TABLE "app"."session_events" (
	"id" text PRIMARY KEY NOT NULL,
	"session_id" text NOT NULL,
	"merchant_id" text NOT NULL,
	"environment" text NOT NULL,
	"sequence" integer NOT NULL,
	"status" text NOT NULL,
	"previous_status" text,
	"reason" text NOT NULL,
	"detail" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "app"."api_keys" ADD CONSTRAINT "api_keys_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "app"."merchants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "app"."payment_sessions" ADD CONSTRAINT "payment_sessions_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "app"."merchants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "app"."session_events" ADD CONSTRAINT "session_events_session_id_payment_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "app"."payment_sessions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_keys_merchant_idx" ON "app"."api_keys" USING btree ("merchant_id","environment");--> statement-breakpoint
CREATE INDEX "idempotency_keys_created_idx" ON "app"."idempotency_keys" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "payment_sessions_list_idx" ON "app"."payment_sessions" USING btree ("merchant_id","environment","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "payment_sessions_status_idx" ON "app"."payment_sessions" USING btree ("merchant_id","environment","status","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE UNIQUE INDEX "session_events_session_seq_uq" ON "app"."session_events" USING btree ("session_id","sequence");--> statement-breakpoint
CREATE INDEX "session_events_merchant_idx" ON "app"."session_events" USING btree ("merchant_id","environment","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);