-- Refunds (docs/refunds.md): the refunds themselves, one part per token in parts; the counter per session, network and token
-- that keeps their sum under what the session received (a create raises it with one conditional update); and relayer
-- transactions of kind refund on the sweeper's one nonce sequence.
CREATE TABLE "app"."refund_totals" (
	"session_id" text NOT NULL,
	"chain_id" integer NOT NULL,
	"token_address" text NOT NULL,
	"held" numeric(78, 0) DEFAULT '0' NOT NULL,
	CONSTRAINT "refund_totals_session_id_chain_id_token_address_pk" PRIMARY KEY("session_id","chain_id","token_address"),
	CONSTRAINT "refund_totals_held_chk" CHECK ("app"."refund_totals"."held" >= 0)
);
--> statement-breakpoint
CREATE TABLE "app"."refunds" (
	"id" text PRIMARY KEY NOT NULL,
	"session_id" text NOT NULL,
	"merchant_id" text NOT NULL,
	"environment" text NOT NULL,
	"chain_id" integer NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"unit_decimals" integer NOT NULL,
	"currency" text NOT NULL,
	"reason" text NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"parts" jsonb NOT NULL,
	"state" text DEFAULT 'PENDING' NOT NULL,
	"waiting_reason" text,
	"failure_reason" text,
	"transaction_id" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"sent_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	CONSTRAINT "refunds_amount_chk" CHECK ("app"."refunds"."amount" > 0),
	CONSTRAINT "refunds_environment_chk" CHECK ("app"."refunds"."environment" in ('sandbox', 'production')),
	CONSTRAINT "refunds_state_chk" CHECK ("app"."refunds"."state" in ('PENDING', 'SENT', 'SUCCEEDED', 'FAILED', 'CANCELED')),
	CONSTRAINT "refunds_reason_chk" CHECK ("app"."refunds"."reason" in ('requested_by_customer', 'duplicate', 'overpayment', 'late_payment', 'underpaid_expired', 'other')),
	CONSTRAINT "refunds_waiting_reason_chk" CHECK ("app"."refunds"."waiting_reason" in ('destination_unknown', 'insufficient_refund_balance', 'spend_guard')),
	CONSTRAINT "refunds_failure_reason_chk" CHECK ("app"."refunds"."failure_reason" in ('reverted', 'transfer_missing'))
);
--> statement-breakpoint
ALTER TABLE "app"."sweep_transactions" DROP CONSTRAINT "sweep_transactions_kind_chk";--> statement-breakpoint
ALTER TABLE "app"."refund_totals" ADD CONSTRAINT "refund_totals_session_id_payment_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "app"."payment_sessions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "app"."refunds" ADD CONSTRAINT "refunds_session_id_payment_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "app"."payment_sessions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "refunds_list_idx" ON "app"."refunds" USING btree ("merchant_id","environment","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "refunds_session_idx" ON "app"."refunds" USING btree ("session_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "refunds_due_idx" ON "app"."refunds" USING btree ("chain_id","next_attempt_at") WHERE "app"."refunds"."state" = 'PENDING';--> statement-breakpoint
CREATE INDEX "refunds_transaction_idx" ON "app"."refunds" USING btree ("transaction_id") WHERE "app"."refunds"."transaction_id" is not null;--> statement-breakpoint
ALTER TABLE "app"."sweep_transactions" ADD CONSTRAINT "sweep_transactions_kind_chk" CHECK ("app"."sweep_transactions"."kind" in ('sweep', 'authorization', 'refund'));