CREATE TABLE "app"."mail_outbox" (
	"id" text PRIMARY KEY NOT NULL,
	"merchant_id" text,
	"to_address" text NOT NULL,
	"kind" text NOT NULL,
	"subject" text,
	"body_sealed" text,
	"security_event_id" text,
	"state" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_error" text,
	"message_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"sent_at" timestamp with time zone,
	CONSTRAINT "mail_outbox_state_chk" CHECK ("app"."mail_outbox"."state" in ('pending', 'sending', 'sent', 'failed')),
	CONSTRAINT "mail_outbox_content_chk" CHECK (("app"."mail_outbox"."subject" is not null and "app"."mail_outbox"."body_sealed" is not null) or "app"."mail_outbox"."security_event_id" is not null)
);
--> statement-breakpoint
CREATE TABLE "app"."password_resets" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"ip" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "app"."dashboard_logins" ADD COLUMN "user_agent" text;--> statement-breakpoint
ALTER TABLE "app"."mail_outbox" ADD CONSTRAINT "mail_outbox_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "app"."merchants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "app"."mail_outbox" ADD CONSTRAINT "mail_outbox_security_event_id_security_events_id_fk" FOREIGN KEY ("security_event_id") REFERENCES "app"."security_events"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "app"."password_resets" ADD CONSTRAINT "password_resets_user_id_dashboard_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "app"."dashboard_users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "mail_outbox_due_idx" ON "app"."mail_outbox" USING btree ("next_attempt_at") WHERE "app"."mail_outbox"."state" in ('pending', 'sending');--> statement-breakpoint
CREATE INDEX "mail_outbox_merchant_idx" ON "app"."mail_outbox" USING btree ("merchant_id","created_at");--> statement-breakpoint
CREATE INDEX "password_resets_user_idx" ON "app"."password_resets" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE INDEX "security_events_reset_email_idx" ON "app"."security_events" USING btree ("email","created_at" DESC NULLS LAST) WHERE "app"."security_events"."action" = 'password_reset_requested';--> statement-breakpoint
CREATE INDEX "security_events_reset_ip_idx" ON "app"."security_events" USING btree ("ip","created_at" DESC NULLS LAST) WHERE "app"."security_events"."action" = 'password_reset_requested';--> statement-breakpoint
-- Security notices: a line of the security history that a person must hear about queues its
-- mails in the same transaction, whichever code wrote it (the dashboard, the API, the admin CLI).
-- The worker writes the mail from the line when it sends (api/src/mail/notices.ts).
CREATE FUNCTION "app"."queue_security_notice"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.merchant_id IS NULL THEN
    RETURN NEW;
  END IF;
  IF NEW.action IN ('settlement_address_changed', 'api_key_created') AND NEW.environment = 'production' THEN
    -- The whole account hears of where production money goes and of new production keys.
    INSERT INTO "app"."mail_outbox" (id, merchant_id, to_address, kind, security_event_id)
    SELECT 'mail_' || left(replace(gen_random_uuid()::text, '-', ''), 24), NEW.merchant_id, u.email, NEW.action, NEW.id
      FROM "app"."dashboard_users" u WHERE u.merchant_id = NEW.merchant_id;
  ELSIF NEW.action IN ('password_changed', 'password_reset', 'two_factor_enabled', 'two_factor_disabled') AND NEW.user_id IS NOT NULL THEN
    -- The person whose password it is.
    INSERT INTO "app"."mail_outbox" (id, merchant_id, to_address, kind, security_event_id)
    SELECT 'mail_' || left(replace(gen_random_uuid()::text, '-', ''), 24), NEW.merchant_id, u.email, NEW.action, NEW.id
      FROM "app"."dashboard_users" u WHERE u.id = NEW.user_id;
  ELSIF NEW.action = 'sign_in' AND NEW.user_id IS NOT NULL
        AND EXISTS (SELECT 1 FROM "app"."security_events" e WHERE e.user_id = NEW.user_id AND e.action = 'sign_in' AND e.id <> NEW.id)
        AND NOT EXISTS (SELECT 1 FROM "app"."security_events" e
                         WHERE e.user_id = NEW.user_id AND e.action = 'sign_in' AND e.id <> NEW.id
                           AND e.ip IS NOT DISTINCT FROM NEW.ip AND e.detail->>'device' IS NOT DISTINCT FROM NEW.detail->>'device'
                           AND e.created_at > now() - interval '90 days') THEN
    -- A sign-in from a device (browser and address) this person has not signed in from in 90 days; not their first ever.
    INSERT INTO "app"."mail_outbox" (id, merchant_id, to_address, kind, security_event_id)
    SELECT 'mail_' || left(replace(gen_random_uuid()::text, '-', ''), 24), NEW.merchant_id, u.email, 'new_sign_in', NEW.id
      FROM "app"."dashboard_users" u WHERE u.id = NEW.user_id;
  ELSE
    RETURN NEW;
  END IF;
  PERFORM pg_notify('paysession_mail', '');
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER "security_events_notice" AFTER INSERT ON "app"."security_events" FOR EACH ROW EXECUTE FUNCTION "app"."queue_security_notice"();
