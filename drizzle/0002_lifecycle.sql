CREATE TABLE "app"."merchant_settlements" (
	"merchant_id" text NOT NULL,
	"environment" text NOT NULL,
	"chain_id" integer NOT NULL,
	"address" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "merchant_settlements_merchant_id_environment_chain_id_pk" PRIMARY KEY("merchant_id","environment","chain_id")
);
--> statement-breakpoint
CREATE TABLE "app"."runner_cursors" (
	"chain_id" integer PRIMARY KEY NOT NULL,
	"block_number" bigint NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "app"."session_deposits" (
	"session_id" text NOT NULL,
	"chain_id" integer NOT NULL,
	"address" text NOT NULL,
	"settlement_address" text NOT NULL,
	"token_address" text NOT NULL,
	"decimals" integer NOT NULL,
	"required_base_units" numeric(78, 0) NOT NULL,
	"confirmations" integer NOT NULL,
	CONSTRAINT "session_deposits_session_id_chain_id_pk" PRIMARY KEY("session_id","chain_id")
);
--> statement-breakpoint
CREATE TABLE "app"."sweep_transactions" (
	"id" text PRIMARY KEY NOT NULL,
	"chain_id" integer NOT NULL,
	"relayer" text NOT NULL,
	"nonce" bigint NOT NULL,
	"tx_hash" text,
	"tx_hashes" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"state" text NOT NULL,
	"max_fee_per_gas" numeric(78, 0),
	"block_number" bigint,
	"gas_used" bigint,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"sent_at" timestamp with time zone,
	"mined_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "app"."sweeps" (
	"id" text PRIMARY KEY NOT NULL,
	"session_id" text NOT NULL,
	"chain_id" integer NOT NULL,
	"deposit_address" text NOT NULL,
	"settlement_address" text NOT NULL,
	"token_address" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"state" text DEFAULT 'queued' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"transaction_id" text,
	"swept_amount" numeric(78, 0),
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sweeps_state_chk" CHECK ("app"."sweeps"."state" in ('queued', 'sending', 'confirmed', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "app"."watched_addresses" (
	"address" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "app"."payment_sessions" ADD COLUMN "wake_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "app"."payment_sessions" ADD COLUMN "funding_chain_id" integer;--> statement-breakpoint
ALTER TABLE "app"."payment_sessions" ADD COLUMN "funding_amount" numeric(78, 0);--> statement-breakpoint
ALTER TABLE "app"."payment_sessions" ADD COLUMN "force_sweep_failure" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "app"."merchant_settlements" ADD CONSTRAINT "merchant_settlements_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "app"."merchants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "app"."session_deposits" ADD CONSTRAINT "session_deposits_session_id_payment_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "app"."payment_sessions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "app"."sweeps" ADD CONSTRAINT "sweeps_session_id_payment_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "app"."payment_sessions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "session_deposits_address_uq" ON "app"."session_deposits" USING btree ("chain_id","address");--> statement-breakpoint
CREATE UNIQUE INDEX "sweep_transactions_nonce_uq" ON "app"."sweep_transactions" USING btree ("chain_id","relayer","nonce");--> statement-breakpoint
CREATE INDEX "sweeps_due_idx" ON "app"."sweeps" USING btree ("chain_id","next_attempt_at") WHERE "app"."sweeps"."state" = 'queued';--> statement-breakpoint
CREATE INDEX "sweeps_session_idx" ON "app"."sweeps" USING btree ("session_id");--> statement-breakpoint
CREATE INDEX "payment_sessions_wake_idx" ON "app"."payment_sessions" USING btree ("wake_at") WHERE "app"."payment_sessions"."wake_at" is not null;