ALTER TABLE "app"."session_deposits" ADD COLUMN "tokens" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "app"."session_funds" ADD COLUMN "token_address" text;