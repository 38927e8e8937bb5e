-- Payers' signed EIP-3009 authorizations, one per session, checked before they are written (api/src/gasless/).
CREATE TABLE "app"."payment_authorizations" (
	"session_id" text PRIMARY KEY NOT NULL,
	"chain_id" integer NOT NULL,
	"token_address" text NOT NULL,
	"from_address" text NOT NULL,
	"to_address" text NOT NULL,
	"value" numeric(78, 0) NOT NULL,
	"valid_after" numeric(78, 0) NOT NULL,
	"valid_before" numeric(78, 0) NOT NULL,
	"nonce" text NOT NULL,
	"signature" text NOT NULL,
	"status" text DEFAULT 'recorded' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "payment_authorizations_status_chk" CHECK ("app"."payment_authorizations"."status" in ('recorded'))
);
--> statement-breakpoint
ALTER TABLE "app"."payment_authorizations" ADD CONSTRAINT "payment_authorizations_session_id_payment_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "app"."payment_sessions"("id") ON DELETE no action ON UPDATE no action;