/**
 * Every statement planned for its own parameters and the tables as they are now. postgres.js
 * prepares statements, and after five runs Postgres may keep one generic plan for the life of
 * the connection (up to an hour): a plan made while a table was tiny — a fresh install, a
 * bench's first minute — stays a sequential scan as the table grows to millions of rows (seen:
 * the runner's due list, a step's reads and the bench's own poll at 4–7 ms each a minute into
 * 1,000 creates/s, where an index scan takes 0.05). Planning each time costs ≈ 0.1 ms of
 * Postgres CPU per statement; group commit shares it among a batch's creates. Used by every
 * pool of the service (api/src/db/client.ts) but the grouped statements' (server.ts, which is left
 * to Postgres's default and in practice re-plans them on every run too: README "Create figures",
 * session 8) and by the indexer's bounded-mode lookup.
 */
export const CUSTOM_PLANS = { plan_cache_mode: "force_custom_plan" } as const;
