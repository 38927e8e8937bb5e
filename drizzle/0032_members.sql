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
ALTER TABLE "app"."dashboard_users" ADD COLUMN "role" text DEFAULT 'owner' NOT NULL;--> statement-breakpoint
ALTER TABLE "app"."invitations" ADD CONSTRAINT "invitations_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "app"."merchants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "invitations_merchant_idx" ON "app"."invitations" USING btree ("merchant_id","created_at");--> statement-breakpoint
ALTER TABLE "app"."dashboard_users" ADD CONSTRAINT "dashboard_users_role_chk" CHECK ("app"."dashboard_users"."role" in ('owner', 'admin', 'developer', 'finance', 'support', 'viewer'));