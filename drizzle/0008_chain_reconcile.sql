DROP INDEX "app"."sweep_transactions_nonce_uq";--> statement-breakpoint
ALTER TABLE "app"."session_funds" ADD COLUMN "reverted_at" timestamp with time zone;--> statement-breakpoint
CREATE UNIQUE INDEX "sweep_transactions_nonce_uq" ON "app"."sweep_transactions" USING btree ("chain_id","relayer","nonce") WHERE "app"."sweep_transactions"."state" <> 'dropped';