-- Payment authorizations by nonce: bounded indexing asks whether an AuthorizationUsed is ours (indexer/watched-db.ts),
-- and the runner maps an indexed authorized payment to its session (api/src/sessions/indexed.ts); by network and
-- validBefore: after a reorg the runner wakes the sessions whose payment by authorization it may have taken (runner.ts).
CREATE INDEX "payment_authorizations_nonce_idx" ON "app"."payment_authorizations" USING btree ("nonce");--> statement-breakpoint
CREATE INDEX "payment_authorizations_valid_before_idx" ON "app"."payment_authorizations" USING btree ("chain_id","valid_before");