-- The dashboard home's per-day figures (api/src/dashboard/home.ts): a cache of past days, each row
-- deleted when a session of its day changes and counted again when next shown.
CREATE TABLE "app"."dashboard_day_checks" (
	"merchant_id" text NOT NULL,
	"environment" text NOT NULL,
	"checked_at" timestamp with time zone NOT NULL,
	CONSTRAINT "dashboard_day_checks_merchant_id_environment_pk" PRIMARY KEY("merchant_id","environment")
);
--> statement-breakpoint
CREATE TABLE "app"."dashboard_days" (
	"merchant_id" text NOT NULL,
	"environment" text NOT NULL,
	"day" date NOT NULL,
	"groups" jsonb NOT NULL,
	"computed_at" timestamp with time zone NOT NULL,
	CONSTRAINT "dashboard_days_merchant_id_environment_day_pk" PRIMARY KEY("merchant_id","environment","day")
);
--> statement-breakpoint
ALTER TABLE "app"."dashboard_day_checks" ADD CONSTRAINT "dashboard_day_checks_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "app"."merchants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "app"."dashboard_days" ADD CONSTRAINT "dashboard_days_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "app"."merchants"("id") ON DELETE no action ON UPDATE no action;