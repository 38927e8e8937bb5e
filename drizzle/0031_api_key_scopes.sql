ALTER TABLE "app"."api_keys" ADD COLUMN "scopes" text[];--> statement-breakpoint
ALTER TABLE "app"."api_keys" ADD COLUMN "expires_at" timestamp with time zone;