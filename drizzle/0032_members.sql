CREATE TABLE "app"."invitations" (
	"id" text PRIMARY KEY NOT NULL,
	"merchant_id" text NOT NULL,
	"email" text NOT NULL,
	"role" text NOT NULL,
	"token_hash" text NOT NULL,
	"invited_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"accepted_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "invitations_token_hash_unique" UNIQUE("token_hash"),
	CONSTRAINT "invitations_role_chk" CHECK ("app"."invitations"."role" in ('admin', 'developer', 'finance', 'support', 'viewer'))
);
--> statement-breakpoint
CREATE TABLE "app"."recovery_codes" (
	"user_id" text NOT NULL,
	"code_hash" text NOT NULL,
	"used_at" timestamp with time zone,
	CONSTRAINT "recovery_codes_user_id_code_hash_pk" PRIMARY KEY("user_id","code_hash")
);
--> statement-breakpoint
CREATE TABLE "app"."user_totp" (
	"user_id" text PRIMARY KEY NOT NULL,
	"secret_sealed" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"confirmed_at" timestamp with time zone,
	"last_step" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE "app"."dashboard_logins" ADD COLUMN "awaiting_second_factor" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "app"."dashboard_logins" ADD COLUMN "second_factor_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "app"."dashboard_users" ADD COLUMN "role" text DEFAULT 'owner' NOT NULL;--> statement-breakpoint
ALTER TABLE "app"."merchants" ADD COLUMN "require_two_factor" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "app"."invitations" ADD CONSTRAINT "invitations_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "app"."merchants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "app"."recovery_codes" ADD CONSTRAINT "recovery_codes_user_id_dashboard_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "app"."dashboard_users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "app"."user_totp" ADD CONSTRAINT "user_totp_user_id_dashboard_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "app"."dashboard_users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "invitations_merchant_idx" ON "app"."invitations" USING btree ("merchant_id","created_at");--> statement-breakpoint
CREATE INDEX "security_events_user_sign_in_idx" ON "app"."security_events" USING btree ("user_id","created_at" DESC NULLS LAST) WHERE "app"."security_events"."action" = 'sign_in';--> statement-breakpoint
CREATE INDEX "security_events_second_factor_failures_idx" ON "app"."security_events" USING btree ("email","created_at" DESC NULLS LAST) WHERE "app"."security_events"."action" = 'two_factor_failed';--> statement-breakpoint
ALTER TABLE "app"."dashboard_users" ADD CONSTRAINT "dashboard_users_role_chk" CHECK ("app"."dashboard_users"."role" in ('owner', 'admin', 'developer', 'finance', 'support', 'viewer'));