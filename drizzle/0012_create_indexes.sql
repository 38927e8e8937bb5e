-- Fewer index entries per session creation (bench/api-create.ts), no read left without its index:
-- created_at alone had no reader left (bounded indexing asks app.watched_addresses by address since
-- 0010; the merchant lists read by merchant, environment, created_at), and one unique index on
-- (address, chain_id) serves both the per-network uniqueness and the lookups by address alone.
-- The migration runs in one transaction, so the uniqueness is never off for anyone else.
DROP INDEX "app"."payment_sessions_created_idx";--> statement-breakpoint
DROP INDEX "app"."session_deposits_address_idx";--> statement-breakpoint
DROP INDEX "app"."session_deposits_address_uq";--> statement-breakpoint
CREATE UNIQUE INDEX "session_deposits_address_uq" ON "app"."session_deposits" USING btree ("address","chain_id");