/**
 * Every statement planned for its own parameters and the tables as they are now. postgres.js
 * prepares statements, and after five runs Postgres may keep one generic plan for the life of
 * the connection (up to an hour): a plan made while a table was tiny — a fresh install, a
 * bench's first minute — stays a sequential scan as the table grows to millions of rows (seen:
 * the runner's due list, a step's reads and the bench's own poll at 4–7 ms each a minute into
 * 1,000 creates/s, where an index scan takes 0.05). Planning each time costs ≈ 0.1 ms of
 * Postgres CPU per statement; group commit shares it among a batch's creates. Used by every
 * pool of the service (api/src/db/client.ts) but the grouped statements' (KEPT_PLANS), and by
 * the indexer's bounded-mode lookup.
 */
export const CUSTOM_PLANS = { plan_cache_mode: "force_custom_plan" } as const;

/**
 * The grouped statements (api/src/server.ts: creates, keyed creates, API-key lookups), which run
 * thousands of times a second: each statement planned once per connection (a generic plan) and never with a
 * sequential scan, so the plan kept is an index plan whatever the tables' sizes when it was
 * made. That alone is not enough: with sequential scans off, a join planned on small tables
 * can still read a whole index. So the statements run there are written to have one plan
 * only: inserts from the batch's arrays, and per row of the batch one probe of a unique or
 * leading-column index (LATERAL subqueries with `offset 0`: credentials/store.ts lookupApiKeys,
 * effects/webhook-outbox.ts newSessionDeliveries, http/idempotency.ts claimKeys and
 * storeResponses, which delete and update the rows so found by tuple id). api/src/db/plans.test.ts
 * plans them on one-row tables, grows the tables without ANALYZE, and counts what they read.
 *
 * Postgres's own choice ("auto") re-planned the creates and lookups on every run
 * (pg_prepared_statements: custom plans only; a generic plan counts 100 rows for an array's
 * unnest, so it always looks dearer): planning was a sixth of the create batch's Postgres CPU and
 * most of a key lookup's (pg_stat_statements: 0.27 ms planning, 0.05 ms executing). For the keyed
 * creates it switched to generic plans after five runs, made on whatever the tables held then: on
 * a young table, sequential scans of the idempotency keys for the connection's life.
 */
export const KEPT_PLANS = { plan_cache_mode: "force_generic_plan", enable_seqscan: "off" } as const;
