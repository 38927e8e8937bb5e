-- Every session's EIP-3009 nonce (a hash of its id, which SQL cannot compute), so that an AuthorizationUsed indexed
-- on-chain finds its session whether or not an authorization was recorded: the runner's wake-up and bounded indexing
-- look nonces up here. The open sessions of before are filled in by code when this migration applies (db/backfills.ts).
CREATE TABLE "app"."session_nonces" (
	"nonce" text PRIMARY KEY NOT NULL,
	"session_id" text NOT NULL
);
