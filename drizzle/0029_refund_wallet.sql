-- A refund paid from the merchant's own wallet (docs/refunds.md, "From the merchant's own wallet"): app.refunds.funding says where its
-- money comes from (balance, the default, or merchant_wallet, which the refund balance's sender never picks up), and
-- app.refund_wallet_payments holds what the wallet gave: a signed EIP-3009 authorization, or the hash of its own transfer.
CREATE TABLE "app"."refund_wallet_payments" (
	"refund_id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"from_address" text NOT NULL,
	"token_address" text NOT NULL,
	"to_address" text NOT NULL,
	"value" numeric(78, 0) NOT NULL,
	"valid_after" numeric(78, 0),
	"valid_before" numeric(78, 0),
	"nonce" text,
	"signature" text,
	"tx_hash" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "refund_wallet_payments_kind_chk" CHECK ("app"."refund_wallet_payments"."kind" in ('authorization', 'transfer')),
	CONSTRAINT "refund_wallet_payments_shape_chk" CHECK (("app"."refund_wallet_payments"."kind" = 'authorization' and "app"."refund_wallet_payments"."signature" is not null and "app"."refund_wallet_payments"."nonce" is not null and "app"."refund_wallet_payments"."valid_before" is not null and "app"."refund_wallet_payments"."tx_hash" is null) or ("app"."refund_wallet_payments"."kind" = 'transfer' and "app"."refund_wallet_payments"."tx_hash" is not null and "app"."refund_wallet_payments"."signature" is null))
);
--> statement-breakpoint
ALTER TABLE "app"."refunds" DROP CONSTRAINT "refunds_waiting_reason_chk";--> statement-breakpoint
ALTER TABLE "app"."refunds" ADD COLUMN "funding" text DEFAULT 'balance' NOT NULL;--> statement-breakpoint
ALTER TABLE "app"."refund_wallet_payments" ADD CONSTRAINT "refund_wallet_payments_refund_id_refunds_id_fk" FOREIGN KEY ("refund_id") REFERENCES "app"."refunds"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "refund_wallet_payments_tx_uq" ON "app"."refund_wallet_payments" USING btree ("tx_hash");--> statement-breakpoint
ALTER TABLE "app"."refunds" ADD CONSTRAINT "refunds_funding_chk" CHECK ("app"."refunds"."funding" in ('balance', 'merchant_wallet'));--> statement-breakpoint
ALTER TABLE "app"."refunds" ADD CONSTRAINT "refunds_waiting_reason_chk" CHECK ("app"."refunds"."waiting_reason" in ('destination_unknown', 'insufficient_refund_balance', 'spend_guard', 'awaiting_claim', 'awaiting_approval', 'awaiting_wallet'));