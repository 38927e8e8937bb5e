/**
 * Every statement planned for its own parameters and the tables as they are now. postgres.js
 * prepares statements, and after five runs Postgres may keep one generic plan for the life of
 * the connection (up to an hour): a plan made while a table was tiny — a fresh install, a
 * bench's first minute — stays a sequential scan as the table grows to millions of rows (seen:
 * the runner's due list, a step's reads and the bench's own poll at 4–7 ms each a minute into
 * 1,000 creates/s, where an index scan takes 0.05). Planning each time costs ≈ 0.1 ms of
 * Postgres CPU per statement; group commit shares it among a batch's creates. Used by every
 * pool of the service (api/src/db/client.ts) and by the indexer's bounded-mode lookup.
 */
export const CUSTOM_PLANS = { plan_cache_mode: "force_custom_plan" } as const;

/**
 * The grouped statements (api/src/server.ts: plain creates, keyed creates, API-key lookups), which
 * run thousands of times a second: each planned once per connection (a generic plan), and never
 * with a sequential scan where an index serves, so the plan kept is the index plan whatever the
 * tables' sizes when it was made — a lookup planned on a fresh install's one-row tables still
 * probes by index a year on. Their statements are inserts, and reads, updates and deletes by a
 * unique key (joined to the batch's arrays), whose index plan is right at any size.
 *
 * Postgres's own choice ("auto") re-planned the creates and lookups on every run
 * (pg_prepared_statements: custom plans only): a generic plan counts 100 rows for an array
 * parameter's unnest, a custom plan the rows sent, so the generic one always looked dearer.
 * Planning was ≈ 15 % of the create batch's Postgres CPU (perf); kept, Postgres's CPU per create
 * is ≈ 8–12 % lower (bench/api-create.ts, alternating runs). A generic plan alone would not do:
 * made on small tables it joined the idempotency keys by scanning them whole, and keyed creates
 * per second halved as the table grew. api/src/db/plans.test.ts checks both properties.
 */
export const KEPT_PLANS = { plan_cache_mode: "force_generic_plan", enable_seqscan: "off" } as const;
