-- The dashboard searches references by prefix (`like 'abc%'`, api/src/dashboard/transactions.ts): with
-- text_pattern_ops the index serves it under any collation (a libc locale's plain index does
-- not); equality still uses it.
DROP INDEX "app"."payment_sessions_reference_idx";--> statement-breakpoint
CREATE INDEX "payment_sessions_reference_idx" ON "app"."payment_sessions" USING btree ("merchant_id","environment","reference_id" text_pattern_ops) WHERE "app"."payment_sessions"."reference_id" is not null;