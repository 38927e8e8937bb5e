/** The I/O half of bounded mode: reads app.watched_addresses with its own small pool. */
import postgres from "postgres";
import type { WatchedLoader } from "./watched.ts";

export function postgresWatchedLoader(databaseUrl: string): WatchedLoader {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {}, idle_timeout: 30 });
  let warned = false;
  return async (since) => {
    const [exists] = await sql<{ t: string | null }[]>`select to_regclass('app.watched_addresses')::text as t`;
    if (!exists?.t) {
      // No table yet means no address was ever registered: nothing can be kept. Say so once.
      if (!warned) console.warn("bounded mode: app.watched_addresses does not exist yet; keeping no transfers");
      warned = true;
      return [];
    }
    const rows = since
      ? await sql<{ address: string; created_at: Date }[]>`
          select address, created_at from app.watched_addresses where created_at > ${since}`
      : await sql<{ address: string; created_at: Date }[]>`select address, created_at from app.watched_addresses`;
    return rows.map((r) => ({ address: r.address, createdAt: r.created_at }));
  };
}
