-- Bounded indexing (indexer/watched-db.ts) asks app.watched_addresses about the two addresses of
-- each transfer: an index on the address of each table under the view keeps that a lookup
-- (session_deposits_address_idx came with 0009).
CREATE INDEX "merchant_settlements_address_idx" ON "app"."merchant_settlements" USING btree ("address");