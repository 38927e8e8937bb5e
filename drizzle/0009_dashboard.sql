CREATE TABLE "app"."dashboard_logins" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"csrf_token" text NOT NULL,
	"ip" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "app"."dashboard_users" (
	"id" text PRIMARY KEY NOT NULL,
	"merchant_id" text NOT NULL,
	"email" text NOT NULL,
	"password_hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"password_changed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "dashboard_users_email_unique" UNIQUE("email")
);
--> statement-breakpoint
CREATE TABLE "app"."security_events" (
	"id" text PRIMARY KEY NOT NULL,
	"merchant_id" text,
	"user_id" text,
	"email" text,
	"action" text NOT NULL,
	"environment" text,
	"detail" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"ip" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "app"."dashboard_logins" ADD CONSTRAINT "dashboard_logins_user_id_dashboard_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "app"."dashboard_users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "app"."dashboard_users" ADD CONSTRAINT "dashboard_users_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "app"."merchants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "dashboard_logins_user_idx" ON "app"."dashboard_logins" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "dashboard_logins_expires_idx" ON "app"."dashboard_logins" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "dashboard_users_merchant_idx" ON "app"."dashboard_users" USING btree ("merchant_id");--> statement-breakpoint
CREATE INDEX "security_events_merchant_idx" ON "app"."security_events" USING btree ("merchant_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "security_events_failures_idx" ON "app"."security_events" USING btree ("email","created_at" DESC NULLS LAST) WHERE "app"."security_events"."action" = 'sign_in_failed';--> statement-breakpoint
CREATE INDEX "security_events_ip_failures_idx" ON "app"."security_events" USING btree ("ip","created_at" DESC NULLS LAST) WHERE "app"."security_events"."action" = 'sign_in_failed';--> statement-breakpoint
CREATE INDEX "payment_sessions_reference_idx" ON "app"."payment_sessions" USING btree ("merchant_id","environment","reference_id") WHERE "app"."payment_sessions"."reference_id" is not null;--> statement-breakpoint
CREATE INDEX "session_deposits_address_idx" ON "app"."session_deposits" USING btree ("address");--> statement-breakpoint
CREATE INDEX "session_funds_tx_idx" ON "app"."session_funds" USING btree ("tx_hash");--> statement-breakpoint
-- The security history is append-only: no row of it is ever changed or removed (hand-written;
-- drizzle-kit does not model triggers).
CREATE FUNCTION "app"."security_events_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'app.security_events is append-only';
END $$;--> statement-breakpoint
CREATE TRIGGER "security_events_append_only" BEFORE UPDATE OR DELETE ON "app"."security_events"
  FOR EACH ROW EXECUTE FUNCTION "app"."security_events_append_only"();
