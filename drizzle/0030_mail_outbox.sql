CREATE TABLE "app"."mail_outbox" (
	"id" text PRIMARY KEY NOT NULL,
	"merchant_id" text,
	"to_address" text NOT NULL,
	"kind" text NOT NULL,
	"subject" text NOT NULL,
	"body_sealed" text NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_error" text,
	"message_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"sent_at" timestamp with time zone,
	CONSTRAINT "mail_outbox_state_chk" CHECK ("app"."mail_outbox"."state" in ('pending', 'sending', 'sent', 'failed'))
);
--> statement-breakpoint
ALTER TABLE "app"."mail_outbox" ADD CONSTRAINT "mail_outbox_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "app"."merchants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "mail_outbox_due_idx" ON "app"."mail_outbox" USING btree ("next_attempt_at") WHERE "app"."mail_outbox"."state" in ('pending', 'sending');--> statement-breakpoint
CREATE INDEX "mail_outbox_merchant_idx" ON "app"."mail_outbox" USING btree ("merchant_id","created_at");