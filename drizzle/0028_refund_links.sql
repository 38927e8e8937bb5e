-- Refund links (docs/refunds.md, "Refund links"): a refund whose destination the payer claims at /refund/{linkId}. The link id is
-- kept as its SHA-256 (the lookup) and sealed (the merchant's view shows it again); single-use (claimed_at, claimed_address), with
-- an expiry and an optional approval. The refund waits awaiting_claim, then awaiting_approval when approval is required.
CREATE TABLE "app"."refund_links" (
	"refund_id" text PRIMARY KEY NOT NULL,
	"link_hash" text NOT NULL,
	"link_sealed" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"require_approval" boolean DEFAULT false NOT NULL,
	"claimed_at" timestamp with time zone,
	"claimed_address" text,
	"approved_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "refund_links_claim_chk" CHECK (("app"."refund_links"."claimed_at" is null) = ("app"."refund_links"."claimed_address" is null))
);
--> statement-breakpoint
ALTER TABLE "app"."refunds" DROP CONSTRAINT "refunds_waiting_reason_chk";--> statement-breakpoint
ALTER TABLE "app"."refund_links" ADD CONSTRAINT "refund_links_refund_id_refunds_id_fk" FOREIGN KEY ("refund_id") REFERENCES "app"."refunds"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "refund_links_hash_uq" ON "app"."refund_links" USING btree ("link_hash");--> statement-breakpoint
ALTER TABLE "app"."refunds" ADD CONSTRAINT "refunds_waiting_reason_chk" CHECK ("app"."refunds"."waiting_reason" in ('destination_unknown', 'insufficient_refund_balance', 'spend_guard', 'awaiting_claim', 'awaiting_approval'));