import postgres from "postgres";
import { customAlphabet } from "nanoid";

const suffix = customAlphabet("abcdefghijklmnopqrstuvwxyz0123456789", 10);

/**
 * A fresh, empty database on the test Postgres started by preload.ts. Returns its URL
 * and a drop() for afterAll. Migrations are not applied here (callers choose).
 */
export async function createTestDatabase(prefix = "t"): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const base = process.env.PAYSESSION_TEST_PG_URL;
  if (!base) throw new Error("PAYSESSION_TEST_PG_URL is not set: run tests with `bun test` (bunfig.toml preloads the database)");
  const name = `${prefix}_${suffix()}`;
  const admin = postgres(base, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const a = postgres(base, { max: 1, onnotice: () => {} });
      try {
        await a.unsafe(`drop database if exists "${name}" with (force)`);
      } finally {
        await a.end();
      }
    },
  };
}
