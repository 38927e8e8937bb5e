-- Bounded indexing asks this view about each block's transfer addresses (indexer/watched-db.ts).
-- Its first form joined app.payment_sessions for a created_at nobody reads any more; with
-- statistics behind a growing table (a burst of creates before autoanalyze), the planner hashed
-- every session for that join: 84 ms a lookup at 200,000 sessions instead of 0.08, in the
-- indexer's path of every block (bench/detection.ts). Now each branch is one indexed table.
DROP VIEW "app"."watched_addresses";--> statement-breakpoint
CREATE VIEW "app"."watched_addresses" AS
  SELECT d.address, 'deposit'::text AS kind FROM "app"."session_deposits" d
  UNION ALL
  SELECT m.address, 'settlement'::text AS kind FROM "app"."merchant_settlements" m;
