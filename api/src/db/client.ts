import postgres, { type Sql } from "postgres";
import { drizzle, type PostgresJsDatabase } from "drizzle-orm/postgres-js";
import * as schema from "./schema.ts";

export type Db = PostgresJsDatabase<typeof schema>;

export interface Database {
  sql: Sql;
  db: Db;
  close(): Promise<void>;
}

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
