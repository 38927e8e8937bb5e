CREATE TABLE "app"."leases" (
	"name" text PRIMARY KEY NOT NULL,
	"holder" text NOT NULL,
	"acquired_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "app"."nodes" (
	"id" text PRIMARY KEY NOT NULL,
	"roles" text[] NOT NULL,
	"host" text NOT NULL,
	"pid" integer NOT NULL,
	"version" text NOT NULL,
	"migration" text NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"heartbeat_at" timestamp with time zone DEFAULT now() NOT NULL,
	"indexer" text
);
--> statement-breakpoint
CREATE TABLE "app"."rate_buckets" (
	"name" text PRIMARY KEY NOT NULL,
	"tokens" numeric NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "nodes_heartbeat_idx" ON "app"."nodes" USING btree ("heartbeat_at");--> statement-breakpoint
CREATE INDEX "rate_buckets_at_idx" ON "app"."rate_buckets" USING btree ("at");