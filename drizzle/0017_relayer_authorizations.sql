-- The relayer submits recorded EIP-3009 authorizations (issue 29, part 3): their states, reasons and attempts;
-- app.sweep_transactions carries either kind of relayer transaction, with the gas price it paid.
ALTER TABLE "app"."payment_authorizations" DROP CONSTRAINT "payment_authorizations_status_chk";--> statement-breakpoint
ALTER TABLE "app"."payment_authorizations" ADD COLUMN "reason" text;--> statement-breakpoint
ALTER TABLE "app"."payment_authorizations" ADD COLUMN "detail" text;--> statement-breakpoint
ALTER TABLE "app"."payment_authorizations" ADD COLUMN "attempts" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "app"."payment_authorizations" ADD COLUMN "next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "app"."payment_authorizations" ADD COLUMN "transaction_id" text;--> statement-breakpoint
ALTER TABLE "app"."payment_authorizations" ADD COLUMN "tx_hash" text;--> statement-breakpoint
ALTER TABLE "app"."payment_authorizations" ADD COLUMN "updated_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "app"."sweep_transactions" ADD COLUMN "kind" text DEFAULT 'sweep' NOT NULL;--> statement-breakpoint
ALTER TABLE "app"."sweep_transactions" ADD COLUMN "effective_gas_price" numeric(78, 0);--> statement-breakpoint
CREATE INDEX "payment_authorizations_due_idx" ON "app"."payment_authorizations" USING btree ("chain_id","next_attempt_at") WHERE "app"."payment_authorizations"."status" = 'recorded';--> statement-breakpoint
CREATE INDEX "payment_authorizations_transaction_idx" ON "app"."payment_authorizations" USING btree ("transaction_id") WHERE "app"."payment_authorizations"."transaction_id" is not null;--> statement-breakpoint
ALTER TABLE "app"."payment_authorizations" ADD CONSTRAINT "payment_authorizations_status_chk" CHECK ("app"."payment_authorizations"."status" in ('recorded', 'sending', 'mined', 'failed'));--> statement-breakpoint
ALTER TABLE "app"."sweep_transactions" ADD CONSTRAINT "sweep_transactions_kind_chk" CHECK ("app"."sweep_transactions"."kind" in ('sweep', 'authorization'));