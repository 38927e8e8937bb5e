CREATE TABLE "app"."payment_links" (
	"id" text PRIMARY KEY NOT NULL,
	"merchant_id" text NOT NULL,
	"environment" text NOT NULL,
	"amount_minor" bigint,
	"min_amount_minor" bigint,
	"max_amount_minor" bigint,
	"currency" text NOT NULL,
	"description" text NOT NULL,
	"max_uses" integer,
	"expires_at" timestamp with time zone,
	"redirect_url" text,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"deactivated_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "payment_links_environment_chk" CHECK ("app"."payment_links"."environment" in ('sandbox', 'production')),
	CONSTRAINT "payment_links_amount_chk" CHECK (("app"."payment_links"."amount_minor" is not null and "app"."payment_links"."amount_minor" > 0 and "app"."payment_links"."min_amount_minor" is null and "app"."payment_links"."max_amount_minor" is null) or ("app"."payment_links"."amount_minor" is null and "app"."payment_links"."min_amount_minor" > 0 and "app"."payment_links"."max_amount_minor" >= "app"."payment_links"."min_amount_minor")),
	CONSTRAINT "payment_links_max_uses_chk" CHECK ("app"."payment_links"."max_uses" is null or "app"."payment_links"."max_uses" > 0)
);
--> statement-breakpoint
ALTER TABLE "app"."payment_sessions" ADD COLUMN "payment_link_id" text;--> statement-breakpoint
ALTER TABLE "app"."payment_links" ADD CONSTRAINT "payment_links_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "app"."merchants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "payment_links_list_idx" ON "app"."payment_links" USING btree ("merchant_id","environment","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
ALTER TABLE "app"."payment_sessions" ADD CONSTRAINT "payment_sessions_payment_link_id_payment_links_id_fk" FOREIGN KEY ("payment_link_id") REFERENCES "app"."payment_links"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "payment_sessions_link_idx" ON "app"."payment_sessions" USING btree ("payment_link_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST) WHERE "app"."payment_sessions"."payment_link_id" is not null;