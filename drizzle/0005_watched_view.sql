ALTER TABLE "app"."watched_addresses" DISABLE ROW LEVEL SECURITY;--> statement-breakpoint
DROP TABLE "app"."watched_addresses" CASCADE;--> statement-breakpoint
CREATE INDEX "payment_sessions_created_idx" ON "app"."payment_sessions" USING btree ("created_at");--> statement-breakpoint
-- Bounded indexing (indexer/watched-db.ts) keeps transfers touching these addresses. A view
-- over the rows a session's creation and a settlement change write anyway, rather than a
-- table written beside them: one insert fewer on every session creation.
CREATE VIEW "app"."watched_addresses" AS
  SELECT d.address, 'deposit'::text AS kind, s.created_at
    FROM "app"."session_deposits" d JOIN "app"."payment_sessions" s ON s.id = d.session_id
  UNION ALL
  SELECT m.address, 'settlement'::text AS kind, m.updated_at AS created_at
    FROM "app"."merchant_settlements" m;
