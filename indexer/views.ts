/**
 * The views schema: what the service and analysts read as `indexer.*` (transfers,
 * authorized_transfers, chain_heads, and Ponder's _ponder_meta and _ponder_checkpoint) is a set of
 * views over ONE indexer instance's schema — the instance whose node holds the indexer seat
 * (api/src/nodes/indexer-seat.ts). Every indexer node runs its own Ponder into a schema of its
 * own (`indexer_1`, `indexer_2`, …: one writer per schema, as Ponder requires), all the time, so a
 * standby is caught up when it takes the seat; taking the seat is switching these views, in one
 * transaction, to its schema. That is Ponder's own zero-downtime pattern (its `--views-schema`),
 * done by us: Ponder 0.16 re-points the views only when an instance finishes its backfill,
 * whichever instance that is, where we need them to follow the seat.
 *
 * The head notification's trigger (head-notify.ts) moves with the views: only the followed
 * instance wakes the session runners.
 */
import type postgres from "postgres";
import { dropHeadNotifyExcept, installHeadNotifyIn } from "./head-notify.ts";

/** The schema the service's reads (api/src/sessions/indexed.ts) and analysts' queries name. */
export const VIEWS_SCHEMA = "indexer";

/** Ponder's own tables besides the app's (its readiness, its checkpoints): the service reads is_ready. */
const PONDER_TABLES = ["_ponder_meta", "_ponder_checkpoint"];

/** The schema of instance slot `n` (api/src/nodes/indexer-seat.ts hands the slots out). */
export const instanceSchema = (slot: number) => `${VIEWS_SCHEMA}_${slot}`;

const q = (name: string) => `"${name.replace(/"/g, '""')}"`;

type Sql = postgres.Sql | postgres.TransactionSql;

/**
 * Which instance schema the views follow now: null when there are none (no instance has been
 * followed yet, or the followed one was dropped for a rebuild — `drop schema … cascade` takes its
 * views along), or when they are not all over one schema.
 */
export async function viewsFollow(sql: Sql): Promise<string | null> {
  const rows = await sql`
    select count(distinct v.oid)::int as views, min(tn.nspname) as lo, max(tn.nspname) as hi
      from pg_class v
      join pg_namespace vn on vn.oid = v.relnamespace and vn.nspname = ${VIEWS_SCHEMA}
      join pg_rewrite r on r.ev_class = v.oid
      join pg_depend d on d.objid = r.oid and d.classid = 'pg_rewrite'::regclass and d.refclassid = 'pg_class'::regclass and d.refobjid <> v.oid
      join pg_class t on t.oid = d.refobjid
      join pg_namespace tn on tn.oid = t.relnamespace
     where v.relkind = 'v'`;
  const r = rows[0] as { views: number; lo: string | null; hi: string | null } | undefined;
  if (!r || r.views === 0 || r.lo !== r.hi) return null;
  // Every table of the followed instance must have its view (a view missing is not following).
  const tables = await tablesOf(sql, r.lo!);
  return tables !== null && r.views === tables.length ? r.lo : null;
}

/** The tables an instance's views cover (its Ponder's app tables, from its _ponder_meta, and Ponder's own two); null before its Ponder made them. */
async function tablesOf(sql: Sql, schema: string): Promise<string[] | null> {
  const [t] = await sql`select to_regclass(${`${q(schema)}._ponder_meta`})::text as t`;
  if (!t?.t) return null;
  const [meta] = await sql.unsafe(`select value->'table_names' as names from ${q(schema)}._ponder_meta where key = 'app'`);
  const names = (meta?.names ?? null) as string[] | null;
  if (!Array.isArray(names) || names.length === 0) return null;
  const present = await sql`select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
                             where n.nspname = ${schema} and c.relname = any(${[...names, ...PONDER_TABLES]}) and c.relkind in ('r', 'p')`;
  return present.length === names.length + PONDER_TABLES.length ? [...names, ...PONDER_TABLES] : null;
}

/**
 * Points the views at `schema`, inside the caller's transaction (the seat checks in it that it
 * still holds the seat): readers see the old instance's rows or the new one's, never a mix nor a
 * gap. Same columns (the same build): CREATE OR REPLACE, which keeps the views' identity, so
 * statements running meanwhile are not disturbed. Other columns (a rolling upgrade that changed
 * the tables): dropped and created again. False when `schema` has no tables yet.
 */
export async function followSchema(tx: postgres.TransactionSql, schema: string): Promise<boolean> {
  const tables = await tablesOf(tx, schema);
  if (tables === null) return false;
  // Readers queue behind a view's lock: give up soon (the next look tries again) rather than stall them.
  await tx`set local lock_timeout = '1s'`;
  await tx.unsafe(`create schema if not exists ${q(VIEWS_SCHEMA)}`);
  // Views of a table the instance no longer has (an older build's) would keep following the old schema.
  const stale = await tx`select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
                          where n.nspname = ${VIEWS_SCHEMA} and c.relkind = 'v' and not (c.relname = any(${tables}))`;
  for (const s of stale) await tx.unsafe(`drop view if exists ${q(VIEWS_SCHEMA)}.${q(String(s.relname))}`);
  for (const table of tables) {
    const view = `${q(VIEWS_SCHEMA)}.${q(table)}`;
    const body = `select * from ${q(schema)}.${q(table)}`;
    try {
      await tx.savepoint((sp) => sp.unsafe(`create or replace view ${view} as ${body}`));
    } catch {
      await tx.unsafe(`drop view if exists ${view}`);
      await tx.unsafe(`create view ${view} as ${body}`);
    }
  }
  await dropHeadNotifyExcept(tx, schema);
  await installHeadNotifyIn(tx, schema);
  return true;
}

/**
 * Whether schema `indexer` still holds an index of its own (a build before the views schema: its
 * Ponder wrote there). The seat's holder renames it into its instance schema (takeLegacyIndex).
 */
export async function legacyIndexPresent(sql: Sql): Promise<boolean> {
  const [r] = await sql`select c.relkind::text as kind from pg_class c join pg_namespace n on n.oid = c.relnamespace
                         where n.nspname = ${VIEWS_SCHEMA} and c.relname = '_ponder_meta'`;
  return r?.kind === "r";
}

/**
 * Moves a legacy index (schema `indexer`, written by a build before the views schema) to `schema`,
 * so that instance resumes it instead of indexing again from the start blocks: a rename, and its
 * rebuild fingerprint with it. Only by the seat's holder with its own Ponder not started yet (the
 * old build's writer stops when it loses the seat). When `schema` already exists, the legacy index
 * is dropped instead (that instance has its own).
 */
export async function takeLegacyIndex(sql: postgres.Sql, schema: string): Promise<"renamed" | "dropped"> {
  return sql.begin(async (tx) => {
    const [exists] = await tx`select 1 from pg_namespace where nspname = ${schema}`;
    if (exists) {
      await tx.unsafe(`drop schema ${q(VIEWS_SCHEMA)} cascade`);
      return "dropped" as const;
    }
    await tx.unsafe(`alter schema ${q(VIEWS_SCHEMA)} rename to ${q(schema)}`);
    const [settings] = await tx`select to_regclass('indexer_meta.settings')::text as t`;
    if (settings?.t) {
      await tx`insert into indexer_meta.settings (key, value)
               select ${`fingerprint:${schema}`}, value from indexer_meta.settings where key = ${`fingerprint:${VIEWS_SCHEMA}`}
               on conflict (key) do update set value = excluded.value`;
    }
    return "renamed" as const;
  });
}
