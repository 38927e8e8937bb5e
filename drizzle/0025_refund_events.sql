-- Refunds' webhook events (docs/refunds.md, Webhooks): one row per event, its data frozen at the refund's state change and its
-- sequence taken from the session's counter, so the outbox orders it with the session's events; and deliveries of them.
CREATE TABLE "app"."refund_events" (
	"id" text PRIMARY KEY NOT NULL,
	"refund_id" text NOT NULL,
	"session_id" text NOT NULL,
	"merchant_id" text NOT NULL,
	"environment" text NOT NULL,
	"sequence" integer NOT NULL,
	"type" text NOT NULL,
	"data" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "refund_events_type_chk" CHECK ("app"."refund_events"."type" in ('refund.created', 'refund.sent', 'refund.succeeded', 'refund.failed', 'refund.canceled'))
);
--> statement-breakpoint
ALTER TABLE "app"."webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_event_kind_chk";--> statement-breakpoint
ALTER TABLE "app"."webhook_deliveries" ADD COLUMN "refund_event_id" text;--> statement-breakpoint
ALTER TABLE "app"."refund_events" ADD CONSTRAINT "refund_events_refund_id_refunds_id_fk" FOREIGN KEY ("refund_id") REFERENCES "app"."refunds"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "app"."refund_events" ADD CONSTRAINT "refund_events_session_id_payment_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "app"."payment_sessions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "refund_events_session_seq_uq" ON "app"."refund_events" USING btree ("session_id","sequence");--> statement-breakpoint
CREATE INDEX "refund_events_merchant_idx" ON "app"."refund_events" USING btree ("merchant_id","environment","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "refund_events_refund_idx" ON "app"."refund_events" USING btree ("refund_id");--> statement-breakpoint
ALTER TABLE "app"."webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_refund_event_id_refund_events_id_fk" FOREIGN KEY ("refund_event_id") REFERENCES "app"."refund_events"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_refund_event_idx" ON "app"."webhook_deliveries" USING btree ("refund_event_id") WHERE "app"."webhook_deliveries"."refund_event_id" is not null;--> statement-breakpoint
ALTER TABLE "app"."webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_event_kind_chk" CHECK (("app"."webhook_deliveries"."event_id" is not null and "app"."webhook_deliveries"."account_event_id" is null and "app"."webhook_deliveries"."refund_event_id" is null and "app"."webhook_deliveries"."session_id" is not null and "app"."webhook_deliveries"."sequence" is not null)
       or ("app"."webhook_deliveries"."event_id" is null and "app"."webhook_deliveries"."account_event_id" is not null and "app"."webhook_deliveries"."refund_event_id" is null and "app"."webhook_deliveries"."session_id" is null and "app"."webhook_deliveries"."sequence" is null and "app"."webhook_deliveries"."state" <> 'waiting')
       or ("app"."webhook_deliveries"."event_id" is null and "app"."webhook_deliveries"."account_event_id" is null and "app"."webhook_deliveries"."refund_event_id" is not null and "app"."webhook_deliveries"."session_id" is not null and "app"."webhook_deliveries"."sequence" is not null));