/**
 * Telling the session runners at once that a block was indexed: a trigger on the indexer's
 * `chain_heads` table (which the ChainHead handler writes with every block) sends a NOTIFY from
 * inside the block's own transaction, so Postgres delivers it when the block's rows are committed
 * (never before: a runner that wakes finds them). Runners still poll the heads
 * (SERVICE_RUNNER_POLL_MS), so a missed notification only costs a poll.
 *
 * Why a trigger and not `context.db.sql` in the handler: Ponder parses every raw statement with
 * its SQL parser and runs it in a savepoint, ≈ 10–17 ms per block on the 2-core dev machine —
 * the largest single part of block → FUNDED at rest. The trigger costs a row's worth of plpgsql.
 * Ponder drops and re-creates only its own triggers (by name), so ours stays; the launcher
 * (process.ts) installs it once the table exists, at every start (a rebuild re-creates the table).
 *
 * Only for recent blocks: catching up, a notification per block would tell nobody anything the
 * next poll would not.
 */
import type postgres from "postgres";

/** The channel api/src/sessions/indexed.ts listens on (INDEXED_HEAD_CHANNEL there; a test checks both agree). Payload "<chainId>:<blockNumber>". */
export const INDEXED_HEAD_CHANNEL = "paysession_indexed_head";

/** Blocks stamped less than this before now count as live. */
export const LIVE_BLOCK_AGE_S = 60;

/** The trigger function lives in our own schema (kept across rebuilds of `indexer`). */
const FUNCTION = "indexer_meta.notify_indexed_head";
const TRIGGER = "paysession_notify_indexed_head";

/**
 * Installs the trigger on `<schema>.chain_heads` if that table exists; false if not yet (Ponder
 * creates it during its start-up). Idempotent.
 */
export async function installHeadNotify(sql: postgres.Sql, schema: string): Promise<boolean> {
  return sql.begin((tx) => installHeadNotifyIn(tx, schema));
}

/** installHeadNotify inside the caller's transaction (views.ts moves the trigger with the views). */
export async function installHeadNotifyIn(tx: postgres.TransactionSql, schema: string): Promise<boolean> {
  const q = `"${schema.replace(/"/g, '""')}"`;
  const [t] = await tx`select to_regclass(${`${q}.chain_heads`})::text as t`;
  if (!t?.t) return false;
  await tx`create schema if not exists indexer_meta`;
  await tx.unsafe(`
    create or replace function ${FUNCTION}() returns trigger language plpgsql as $$
    begin
      if new.block_timestamp + ${LIVE_BLOCK_AGE_S} >= extract(epoch from now()) then
        perform pg_notify('${INDEXED_HEAD_CHANNEL}', new.chain_id::text || ':' || new.block_number::text);
      end if;
      return null;
    end $$`);
  await tx.unsafe(`create or replace trigger ${TRIGGER} after insert or update on ${q}.chain_heads for each row execute function ${FUNCTION}()`);
  return true;
}

/**
 * Removes the trigger from every schema but `schema`: with one Ponder per node (views.ts), only
 * the instance the service reads tells the runners of its blocks.
 */
export async function dropHeadNotifyExcept(tx: postgres.TransactionSql, schema: string): Promise<void> {
  const others = await tx`select n.nspname from pg_trigger g join pg_class c on c.oid = g.tgrelid join pg_namespace n on n.oid = c.relnamespace
                           where g.tgname = ${TRIGGER} and c.relname = 'chain_heads' and n.nspname <> ${schema}`;
  for (const o of others) await tx.unsafe(`drop trigger if exists ${TRIGGER} on "${String(o.nspname).replace(/"/g, '""')}".chain_heads`);
}
