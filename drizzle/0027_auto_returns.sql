-- Automatic returns (docs/refunds.md, "Automatic returns"): the per-merchant, per-environment setting (off by default), and
-- each return's durable timer, one per session, network and reason (the unique index that makes it happen once).
CREATE TABLE "app"."auto_return_settings" (
	"merchant_id" text NOT NULL,
	"environment" text NOT NULL,
	"enabled" boolean DEFAULT false NOT NULL,
	"delay_seconds" integer DEFAULT 86400 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "auto_return_settings_merchant_id_environment_pk" PRIMARY KEY("merchant_id","environment"),
	CONSTRAINT "auto_return_settings_environment_chk" CHECK ("app"."auto_return_settings"."environment" in ('sandbox', 'production')),
	CONSTRAINT "auto_return_settings_delay_chk" CHECK ("app"."auto_return_settings"."delay_seconds" between 1 and 2592000)
);
--> statement-breakpoint
CREATE TABLE "app"."auto_returns" (
	"id" text PRIMARY KEY NOT NULL,
	"session_id" text NOT NULL,
	"merchant_id" text NOT NULL,
	"environment" text NOT NULL,
	"chain_id" integer NOT NULL,
	"reason" text NOT NULL,
	"state" text DEFAULT 'scheduled' NOT NULL,
	"due_at" timestamp with time zone NOT NULL,
	"refund_id" text,
	"outcome" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"decided_at" timestamp with time zone,
	CONSTRAINT "auto_returns_reason_chk" CHECK ("app"."auto_returns"."reason" in ('overpayment', 'late_payment', 'underpaid_expired')),
	CONSTRAINT "auto_returns_state_chk" CHECK ("app"."auto_returns"."state" in ('scheduled', 'refunded', 'kept', 'merchant_refunded', 'skipped'))
);
--> statement-breakpoint
ALTER TABLE "app"."auto_return_settings" ADD CONSTRAINT "auto_return_settings_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "app"."merchants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "app"."auto_returns" ADD CONSTRAINT "auto_returns_session_id_payment_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "app"."payment_sessions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "auto_returns_once_uq" ON "app"."auto_returns" USING btree ("session_id","chain_id","reason");--> statement-breakpoint
CREATE INDEX "auto_returns_due_idx" ON "app"."auto_returns" USING btree ("chain_id","due_at") WHERE "app"."auto_returns"."state" = 'scheduled';