-- Payment authorizations by nonce: bounded indexing asks whether an AuthorizationUsed is ours (indexer/watched-db.ts),
-- and the runner maps an indexed authorized payment to its session (api/src/sessions/indexed.ts).
CREATE INDEX "payment_authorizations_nonce_idx" ON "app"."payment_authorizations" USING btree ("nonce");