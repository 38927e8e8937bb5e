CREATE TABLE "app"."passkeys" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"public_key" text NOT NULL,
	"counter" bigint DEFAULT 0 NOT NULL,
	"transports" text[],
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "app"."webauthn_challenges" (
	"login_hash" text NOT NULL,
	"purpose" text NOT NULL,
	"challenge" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "webauthn_challenges_login_hash_purpose_pk" PRIMARY KEY("login_hash","purpose")
);
--> statement-breakpoint
ALTER TABLE "app"."passkeys" ADD CONSTRAINT "passkeys_user_id_dashboard_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "app"."dashboard_users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "app"."webauthn_challenges" ADD CONSTRAINT "webauthn_challenges_login_hash_dashboard_logins_token_hash_fk" FOREIGN KEY ("login_hash") REFERENCES "app"."dashboard_logins"("token_hash") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "passkeys_user_idx" ON "app"."passkeys" USING btree ("user_id");