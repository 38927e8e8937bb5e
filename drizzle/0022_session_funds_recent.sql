-- After a reorg, the sessions whose money moved lately on that chain look again (the runner): by chain and time, the
-- movements the chain may have taken back only.
CREATE INDEX "session_funds_recent_idx" ON "app"."session_funds" USING btree ("chain_id","created_at") WHERE "app"."session_funds"."reverted_at" is null;
