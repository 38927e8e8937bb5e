CREATE TABLE "app"."webhook_attempts" (
	"id" text PRIMARY KEY NOT NULL,
	"endpoint_id" text NOT NULL,
	"merchant_id" text NOT NULL,
	"environment" text NOT NULL,
	"event_id" text NOT NULL,
	"kind" text NOT NULL,
	"attempt_number" integer NOT NULL,
	"url" text NOT NULL,
	"succeeded" boolean NOT NULL,
	"status_code" integer,
	"latency_ms" integer NOT NULL,
	"response_excerpt" text,
	"error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "app"."webhook_deliveries" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "app"."webhook_deliveries_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"event_id" text NOT NULL,
	"endpoint_id" text NOT NULL,
	"session_id" text NOT NULL,
	"sequence" integer NOT NULL,
	"ordered" boolean DEFAULT true NOT NULL,
	"state" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone,
	"last_attempt_at" timestamp with time zone,
	"last_status_code" integer,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "webhook_deliveries_state_chk" CHECK ("app"."webhook_deliveries"."state" in ('waiting', 'pending', 'sending', 'succeeded', 'failed', 'canceled'))
);
--> statement-breakpoint
CREATE TABLE "app"."webhook_endpoints" (
	"id" text PRIMARY KEY NOT NULL,
	"merchant_id" text NOT NULL,
	"environment" text NOT NULL,
	"url" text NOT NULL,
	"description" text,
	"enabled" boolean DEFAULT true NOT NULL,
	"disabled_reason" text,
	"secret_sealed" text NOT NULL,
	"previous_secret_sealed" text,
	"previous_secret_expires_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone,
	CONSTRAINT "webhook_endpoints_environment_chk" CHECK ("app"."webhook_endpoints"."environment" in ('sandbox', 'production'))
);
--> statement-breakpoint
ALTER TABLE "app"."webhook_attempts" ADD CONSTRAINT "webhook_attempts_endpoint_id_webhook_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "app"."webhook_endpoints"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "app"."webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_event_id_session_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "app"."session_events"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "app"."webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpoint_id_webhook_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "app"."webhook_endpoints"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "app"."webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "app"."merchants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "webhook_attempts_event_idx" ON "app"."webhook_attempts" USING btree ("event_id","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "webhook_attempts_endpoint_idx" ON "app"."webhook_attempts" USING btree ("endpoint_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_idx" ON "app"."webhook_deliveries" USING btree ("next_attempt_at") WHERE "app"."webhook_deliveries"."state" in ('pending', 'sending');--> statement-breakpoint
CREATE INDEX "webhook_deliveries_queue_idx" ON "app"."webhook_deliveries" USING btree ("session_id","endpoint_id","sequence") WHERE "app"."webhook_deliveries"."state" in ('waiting', 'pending', 'sending');--> statement-breakpoint
CREATE INDEX "webhook_deliveries_event_idx" ON "app"."webhook_deliveries" USING btree ("event_id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_endpoint_open_idx" ON "app"."webhook_deliveries" USING btree ("endpoint_id") WHERE "app"."webhook_deliveries"."state" in ('waiting', 'pending', 'sending');--> statement-breakpoint
CREATE INDEX "webhook_endpoints_merchant_idx" ON "app"."webhook_endpoints" USING btree ("merchant_id","environment","created_at");