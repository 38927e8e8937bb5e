CREATE TABLE "app"."session_funds" (
	"session_id" text NOT NULL,
	"chain_id" integer NOT NULL,
	"direction" text NOT NULL,
	"tx_hash" text NOT NULL,
	"log_index" integer NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"block_timestamp" timestamp with time zone,
	"event_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "session_funds_session_id_chain_id_direction_tx_hash_log_index_pk" PRIMARY KEY("session_id","chain_id","direction","tx_hash","log_index"),
	CONSTRAINT "session_funds_direction_chk" CHECK ("app"."session_funds"."direction" in ('in', 'out'))
);
--> statement-breakpoint
ALTER TABLE "app"."sweep_transactions" ADD COLUMN "raw_tx" text;--> statement-breakpoint
ALTER TABLE "app"."session_funds" ADD CONSTRAINT "session_funds_session_id_payment_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "app"."payment_sessions"("id") ON DELETE no action ON UPDATE no action;