/**
 * Applies the SQL migrations drizzle-kit wrote into drizzle/, in journal order, at boot.
 * Safe to run twice (applied ones are recorded in app.__migrations by tag and hash) and
 * from two processes at once (the whole run holds a transaction-scoped advisory lock,
 * so the second waits, then finds nothing left to do). A migration whose file changed
 * after it was applied is an error, not a silent skip.
 *
 * Every process runs it at start, so the build and the database always agree: an older build
 * meets a database migrated by a newer one and refuses to start (`DatabaseAhead`) instead of
 * running against tables it does not know. A rolling upgrade migrates first (the first node of
 * the new build, or `bun run admin migrate`), then replaces the nodes one by one: the nodes
 * still running the old build keep running, because migrations only add (docs/topology.md).
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createHash } from "node:crypto";
import type { Sql } from "postgres";
import { col, decodeRows, rowShape } from "./rows.ts";
import { AFTER_MIGRATION } from "./backfills.ts";
import { BaseError } from "../../../shared/base-error.ts";

const MIGRATIONS_DIR = resolve(import.meta.dir, "../../../drizzle");
/** Arbitrary constant: "paysession migrations". */
const LOCK_KEY = 7_301_552_019n;

interface JournalEntry {
  idx: number;
  tag: string;
}

export interface Migration {
  tag: string;
  hash: string;
  statements: string[];
}

export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  const journal = JSON.parse(readFileSync(join(dir, "meta/_journal.json"), "utf8")) as { entries: JournalEntry[] };
  return [...journal.entries]
    .sort((a, b) => a.idx - b.idx)
    .map(({ tag }) => {
      const text = readFileSync(join(dir, `${tag}.sql`), "utf8");
      return {
        tag,
        hash: createHash("sha256").update(text).digest("hex"),
        statements: text
          .split("--> statement-breakpoint")
          .map((s) => s.trim())
          .filter(Boolean),
      };
    });
}

const AppliedMigration = rowShape("applied migrations, with their hashes", { tag: col.text, hash: col.text });

/** The database holds migrations this build does not know: it was migrated by a newer build. */
export class DatabaseAhead extends BaseError {
  override name = "DatabaseAhead";
  constructor(readonly unknownTags: string[], readonly newestKnown: string) {
    super(
      `the database was migrated by a newer build (migrations ${unknownTags.join(", ")}; this build knows up to ${newestKnown}): ` +
        "refusing to start an older build against it. Deploy the build that migrated it (see docs/topology.md, Rolling upgrades)",
    );
  }
}

/** Returns the tags it applied (empty when the database was up to date). Throws DatabaseAhead. */
export async function migrate(sql: Sql, migrations = readMigrations()): Promise<string[]> {
  return sql.begin(async (tx) => {
    // Migrations (and waiting for another process's) may take longer than a request's statement.
    await tx.unsafe(`set local statement_timeout = 0`);
    await tx.unsafe(`set local idle_in_transaction_session_timeout = 0`);
    await tx`select pg_advisory_xact_lock(${LOCK_KEY.toString()}::bigint)`;
    await tx.unsafe(`create schema if not exists app`);
    await tx.unsafe(`create table if not exists app.__migrations (
      tag text primary key,
      hash text not null,
      applied_at timestamptz not null default now()
    )`);
    const rows = decodeRows(AppliedMigration, await tx`select tag, hash from app.__migrations`);
    const done = new Map(rows.map((r) => [r.tag, r.hash]));
    const known = new Set(migrations.map((m) => m.tag));
    const unknown = rows.map((r) => r.tag).filter((tag) => !known.has(tag));
    if (unknown.length > 0) throw new DatabaseAhead(unknown.sort(), migrations.at(-1)?.tag ?? "none");
    const applied: string[] = [];
    for (const m of migrations) {
      const prior = done.get(m.tag);
      if (prior !== undefined) {
        if (prior !== m.hash) throw new Error(`migration ${m.tag} was changed after it was applied`);
        continue;
      }
      for (const statement of m.statements) {
        // drizzle-kit emits CREATE SCHEMA for our schema; it exists already (see above).
        if (/^create schema "app";?$/i.test(statement)) continue;
        await tx.unsafe(statement);
      }
      // What SQL cannot do for it (db/backfills.ts), in the same transaction.
      await AFTER_MIGRATION[m.tag]?.(tx);
      await tx`insert into app.__migrations (tag, hash) values (${m.tag}, ${m.hash})`;
      applied.push(m.tag);
    }
    return applied;
  });
}
