import postgres, { type Sql } from "postgres";
import { drizzle, type PostgresJsDatabase } from "drizzle-orm/postgres-js";
import * as schema from "./schema.ts";

export type Db = PostgresJsDatabase<typeof schema> & { $client: Sql };

export interface Database {
  sql: Sql;
  db: Db;
  close(): Promise<void>;
}

/**
 * One postgres.js pool, shared by drizzle and by the few raw statements on hot paths.
 * Beware: drizzle takes over postgres.js's parsing and serializing of dates and json on
 * the client it wraps, so raw statements pass only strings and numbers (json as
 * `${JSON.stringify(x)}::jsonb`, times from now() in SQL) and read dates back as text.
 */
export function connect(url: string, opts: { max?: number } = {}): Database {
  const sql = postgres(url, {
    max: opts.max ?? 20,
    onnotice: () => {},
    // bigint columns come back as JS bigint, never a lossy number.
    types: { bigint: postgres.BigInt },
  });
  const db = drizzle(sql, { schema });
  return { sql, db, close: () => sql.end({ timeout: 5 }) };
}

/** Raw-row readers for the shared client (see connect): dates and json come back as text. */
export const asDate = (v: unknown): Date => (v instanceof Date ? v : new Date(v as string));
export const asJson = <T>(v: unknown): T => (typeof v === "string" ? (JSON.parse(v) as T) : (v as T));
