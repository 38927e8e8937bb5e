-- Account events (settlement_address.updated) become durable: app.account_events holds them,
-- and app.webhook_deliveries references either a session event (event_id, with session_id and
-- sequence) or an account event (account_event_id), exactly one, so the one delivery worker
-- sends both with the same retries, signing, attempt log and disable rules.
CREATE TABLE "app"."account_events" (
	"id" text PRIMARY KEY NOT NULL,
	"merchant_id" text NOT NULL,
	"environment" text NOT NULL,
	"type" text NOT NULL,
	"data" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "account_events_environment_chk" CHECK ("app"."account_events"."environment" in ('sandbox', 'production'))
);
--> statement-breakpoint
ALTER TABLE "app"."webhook_deliveries" ALTER COLUMN "event_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "app"."webhook_deliveries" ALTER COLUMN "session_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "app"."webhook_deliveries" ALTER COLUMN "sequence" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "app"."webhook_deliveries" ADD COLUMN "account_event_id" text;--> statement-breakpoint
ALTER TABLE "app"."account_events" ADD CONSTRAINT "account_events_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "app"."merchants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "account_events_merchant_idx" ON "app"."account_events" USING btree ("merchant_id","environment","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
ALTER TABLE "app"."webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_account_event_id_account_events_id_fk" FOREIGN KEY ("account_event_id") REFERENCES "app"."account_events"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_account_event_idx" ON "app"."webhook_deliveries" USING btree ("account_event_id") WHERE "app"."webhook_deliveries"."account_event_id" is not null;--> statement-breakpoint
ALTER TABLE "app"."webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_event_kind_chk" CHECK (("app"."webhook_deliveries"."event_id" is not null and "app"."webhook_deliveries"."account_event_id" is null and "app"."webhook_deliveries"."session_id" is not null and "app"."webhook_deliveries"."sequence" is not null)
       or ("app"."webhook_deliveries"."event_id" is null and "app"."webhook_deliveries"."account_event_id" is not null and "app"."webhook_deliveries"."session_id" is null and "app"."webhook_deliveries"."sequence" is null and "app"."webhook_deliveries"."state" <> 'waiting'));