/**
 * Runs the Ponder indexer as a child process (for the indexer seat, tests and benches):
 *
 *   bun --bun node_modules/ponder/dist/esm/bin/ponder.js start --root indexer \
 *       --schema <schema> --port <port> --hostname 127.0.0.1 --log-format json
 *
 * into one schema: `indexer` by default (the tests of the indexer alone), a node's instance schema
 * `indexer_<n>` under the indexer seat (api/src/nodes/indexer-seat.ts; the service then reads the
 * views schema `indexer`, indexer/views.ts). With DATABASE_URL, DATABASE_SCHEMA=<schema>, PONDER_TELEMETRY_DISABLED=true and
 * SERVICE_START_BLOCK_<KEY> resolved here, in an allow-listed environment (indexerChildEnv:
 * no service secret reaches the child). Before spawning it validates the chain config,
 * checks each chain (chain id, stablecoin decimals) and resolves persisted start blocks.
 *
 * Rebuilds: Ponder refuses to reuse its schema when its build id changed (new indexing code,
 * config or chains). We then drop that schema and start again: the tables are rebuilt
 * from the persisted start blocks, mostly from Ponder's RPC cache (schema ponder_sync). While
 * that runs, /ready answers 503 and <schema>._ponder_meta says is_ready = 0: readers must not
 * take missing rows for reorgs until the indexer is ready again.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { checkNetworks, publicClientFor } from "../shared/chains/check.ts";
import { ENV_PREFIXES, loadChainsConfig, type ChainsConfig } from "../shared/chains/config.ts";
import { ensureStateTables, resolveStartBlocks, swapSetting } from "./state.ts";
import { chainsThatWentBack, PONDER_WENT_BACK, rebuildAfterChainWentBack } from "./rewind.ts";
import { installHeadNotify } from "./head-notify.ts";
import { isDatabaseUnavailable } from "../api/src/db/outage.ts";
import { hasErrorCode } from "../shared/error-chain.ts";
import { describeError } from "../shared/describe-error.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
/** Ponder's bin, behind a wrapper that exits with us (ponder-child.ts). */
const PONDER_CHILD = resolve(ROOT, "indexer/ponder-child.ts");
const PONDER_BIN = resolve(ROOT, "node_modules/ponder/dist/esm/bin/ponder.js");
const BUILD_CHANGED = "was previously used by a different Ponder app";

export interface StartIndexerOptions {
  /** The Postgres shared with the API (Ponder writes `schema` and `ponder_sync`). */
  databaseUrl: string;
  /** Service env (SERVICE_RPC_URL_*, SERVICE_INDEX_MODE, …), laid over process.env. */
  env?: Record<string, string | undefined>;
  /** HTTP port on 127.0.0.1 for /sql, /graphql, /ready. */
  port: number;
  /** Postgres schema for the indexed tables; default "indexer" (the seat passes its node's instance schema). */
  schema?: string;
  /** Each log line of the child (JSON, Ponder's pino format). Default: kept in memory only. */
  onLog?: (line: string) => void;
  /** One line for the operator when the launcher rebuilds the index (chain went back, build changed). */
  notice?: (line: string) => void;
  /** Skip the RPC start-up checks (chain id, decimals); tests of the checks themselves only. */
  skipChainChecks?: boolean;
  /**
   * The caller holds the schema's instance slot (api/src/nodes/indexer-seat.ts), so a Ponder lock
   * left on the schema is a dead process's: cleared, so Ponder starts at once instead of waiting out
   * its 25-s heartbeat expiry.
   */
  clearStaleLock?: boolean;
  /**
   * Aborted: stop the start where it is — before the lock is cleared, before Ponder is spawned, or
   * by killing the child spawned (the start then rejects). The caller lost the right to write.
   */
  signal?: AbortSignal;
  /**
   * Install the head notification's trigger on this instance's chain_heads (default true). False
   * for a node's instance under the views schema (api/src/nodes/indexer-seat.ts): the trigger
   * moves with the views to the followed instance (views.ts), so only that one wakes the runners.
   */
  headNotify?: boolean;
}

export interface IndexerProcess {
  url: string;
  pid: number;
  config: ChainsConfig;
  /** Resolves once Ponder has finished its backfill and serves /ready with 200. */
  waitUntilReady(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
  /** stop() or kill() was called (an exit after that is no failure). */
  readonly stopped: boolean;
  /** SIGKILL at once, the schema's lock left as it is (fencing: another node may hold it now). */
  kill(): void;
  /** Resolves when the child has exited (by itself or stopped). */
  readonly exited: Promise<number | null>;
  /** The last few hundred log lines, for error messages. */
  recentLogs(): string[];
}

export async function startIndexer(opts: StartIndexerOptions): Promise<IndexerProcess> {
  const schema = opts.schema ?? "indexer";
  const env: Record<string, string | undefined> = { ...process.env, ...opts.env };
  const config = loadChainsConfig(env);
  if (config.networks.length === 0) throw new Error("startIndexer: no network enabled (set a SERVICE_RPC_URL_<KEY>)");
  if (!opts.skipChainChecks) await checkNetworks(config.networks);
  opts.signal?.throwIfAborted();

  const sql = postgres(opts.databaseUrl, { max: 1, onnotice: () => {} });
  let startBlocks: Record<string, string>;
  try {
    await ensureStateTables(sql);
    opts.signal?.throwIfAborted();
    if (opts.clearStaleLock) await unlockSchema(sql, schema);
    startBlocks = await resolveStartBlocks(sql, config.networks, async (n) => Number(await publicClientFor(n).getBlockNumber()));
    const fingerprint = createHash("sha256")
      .update(readFileSync(resolve(ROOT, "ponder.schema.ts")))
      .update(`mode=${config.indexMode}`)
      .digest("hex");
    const previous = await swapSetting(sql, `fingerprint:${schema}`, fingerprint);
    if (previous !== null && previous !== fingerprint) await dropSchema(sql, schema);
    const wentBack = opts.skipChainChecks ? [] : await chainsThatWentBack(sql, schema, config.networks, publicClientFor);
    if (wentBack.length > 0) {
      opts.notice?.(
        `indexer: the chain went backwards (${wentBack.map((w) => `${w.network.name}: indexed to block ${w.indexed}, the chain is at ${w.chainHead}`).join("; ")}): rebuilding the index from the chain`,
      );
      await rebuildAfterChainWentBack(sql, schema, wentBack.map((w) => ({ chainId: w.network.chainId, head: w.chainHead })));
      startBlocks = await resolveStartBlocks(sql, config.networks, async (n) => Number(await publicClientFor(n).getBlockNumber()));
    }
  } finally {
    await sql.end();
  }

  const childEnv = indexerChildEnv(env, { ...startBlocks, DATABASE_URL: opts.databaseUrl, DATABASE_SCHEMA: schema });

  const logs: string[] = [];
  const onLine = (line: string) => {
    logs.push(line);
    if (logs.length > 300) logs.shift();
    opts.onLog?.(line);
  };

  // Checked before each spawn and after each one's outcome: a start that lost the right to write
  // must not go on to drop or rebuild a schema that another node's Ponder now writes.
  const spawnNow = async () => {
    opts.signal?.throwIfAborted();
    const result = await spawnPonder(opts.port, schema, childEnv, onLine, opts.signal);
    opts.signal?.throwIfAborted();
    return result;
  };
  let run = await spawnNow();
  if (run.outcome === "exited" && logs.some((l) => l.includes(BUILD_CHANGED))) {
    onLine(JSON.stringify({ level: 40, msg: `Ponder build changed: dropping schema "${schema}" and re-indexing from the start blocks` }));
    const admin = postgres(opts.databaseUrl, { max: 1, onnotice: () => {} });
    await dropSchema(admin, schema).finally(() => admin.end());
    run = await spawnNow();
  }
  if (run.outcome === "exited" && logs.some((l) => l.includes(PONDER_WENT_BACK))) {
    // The chain went back below what Ponder had finalized (the check above could not see it).
    opts.notice?.("indexer: the chain went backwards below the indexer's finalized block: rebuilding the index from the chain");
    const admin = postgres(opts.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      const heads = await Promise.all(config.networks.map(async (n) => ({ chainId: n.chainId, head: await publicClientFor(n).getBlockNumber() })));
      await rebuildAfterChainWentBack(admin, schema, heads);
      Object.assign(childEnv, await resolveStartBlocks(admin, config.networks, async (n) => Number(await publicClientFor(n).getBlockNumber())));
    } finally {
      await admin.end();
    }
    run = await spawnNow();
  }
  if (run.outcome === "exited") {
    throw new Error(`Ponder exited during start-up (code ${run.code}):\n${logs.slice(-30).join("\n")}`);
  }
  const { child, port } = run;
  const url = `http://127.0.0.1:${port}`;
  let stopped = false;
  const exited = new Promise<number | null>((r) => (child.exitCode !== null || child.signalCode !== null ? r(child.exitCode) : child.once("exit", (code) => r(code))));
  if (opts.headNotify !== false) void keepHeadNotifyInstalled(opts.databaseUrl, schema, () => stopped || child.exitCode !== null, onLine);

  return {
    url,
    get stopped() {
      return stopped;
    },
    pid: child.pid!,
    config,
    exited,
    kill() {
      stopped = true;
      child.kill("SIGKILL");
    },
    recentLogs: () => [...logs],
    async waitUntilReady(timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        if (child.exitCode !== null) throw new Error(`Ponder exited (code ${child.exitCode}):\n${logs.slice(-30).join("\n")}`);
        try {
          if ((await fetch(`${url}/ready`, { signal: AbortSignal.timeout(1000) })).status === 200) return;
        } catch {
          // not listening yet
        }
        await sleep(100);
      }
      throw new Error(`indexer not ready after ${timeoutMs} ms:\n${logs.slice(-30).join("\n")}`);
    },
    async stop() {
      stopped = true;
      await stopChild(child);
      // Ponder 0.16 aborts its query builder before its own shutdown hook runs, so the
      // "unlock" never reaches the database and the next start would wait out the 25 s
      // heartbeat expiry. Our child is dead and held the lock, so releasing it is safe.
      const admin = postgres(opts.databaseUrl, { max: 1, onnotice: () => {} });
      await unlockSchema(admin, schema)
        // A database shutting down with us (a whole unit stopped at once) takes no new
        // connection: the lock stays, and the next start clears it (clearStaleLock).
        .catch((e) => (isDatabaseUnavailable(e) ? undefined : Promise.reject(e)))
        .finally(() => admin.end());
    },
  };
}

/**
 * What of our environment the Ponder child may see: the chain settings it indexes by, Ponder's
 * own settings, and what any process needs to run and reach the network (paths, locale, proxies,
 * CA certificates, libpq's TLS settings). Nothing else: the relayer key, the encryption key and
 * whatever else the service's environment holds never reach the indexer.
 */
const CHILD_ENV_NAMES = new Set([
  "SERVICE_INDEX_MODE",
  "SERVICE_INDEXER_POLLING_MS",
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "TMPDIR",
  "TMP",
  "TEMP",
  "LANG",
  "TZ",
  "NODE_ENV",
  "NODE_EXTRA_CA_CERTS",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "ALL_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "all_proxy",
  "NO_COLOR",
  "FORCE_COLOR",
  "BUN_RUNTIME_TRANSPILER_CACHE_PATH",
]);
const CHILD_ENV_PREFIXES = [...ENV_PREFIXES, "SERVICE_WS_URL_", "SERVICE_INDEXER_RPC_LANES_", "PONDER_", "LC_", "PGSSL"];
/** Never, whatever the lists above say: Ponder would prefer it over the DATABASE_URL we give. */
const CHILD_ENV_NEVER = new Set(["DATABASE_PRIVATE_URL"]);

export function indexerChildEnv(env: Record<string, string | undefined>, set: Record<string, string>): Record<string, string> {
  const childEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined || CHILD_ENV_NEVER.has(k)) continue;
    if (CHILD_ENV_NAMES.has(k) || CHILD_ENV_PREFIXES.some((p) => k.startsWith(p))) childEnv[k] = v;
  }
  return { ...childEnv, ...set, PONDER_TELEMETRY_DISABLED: "true" };
}

type SpawnResult = { outcome: "listening"; child: ChildProcess; port: number } | { outcome: "exited"; code: number | null };

/** Spawns Ponder and waits until it listens (resolving the port it really took) or exits. */
function spawnPonder(port: number, schema: string, env: Record<string, string>, onLine: (l: string) => void, signal?: AbortSignal): Promise<SpawnResult> {
  const args = ["start", "--root", "indexer", "--schema", schema, "--port", String(port), "--hostname", "127.0.0.1", "--log-format", "json"];
  // Under Node (which cannot run the TypeScript wrapper) Ponder's bin runs bare, without the orphan guard.
  const useNode = env.PONDER_RUNTIME === "node";
  const child = spawn(useNode ? "node" : bunBinary(), useNode ? [PONDER_BIN, ...args] : ["--bun", PONDER_CHILD, ...args], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  signal?.addEventListener("abort", () => child.kill("SIGKILL"), { once: true });
  return new Promise((resolvePromise) => {
    let settled = false;
    const settle = (r: SpawnResult) => {
      if (!settled) {
        settled = true;
        resolvePromise(r);
      }
    };
    const feed = (stream: NodeJS.ReadableStream | null) => {
      let buf = "";
      stream?.on("data", (d: Buffer) => {
        buf += d.toString();
        let i: number;
        while ((i = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, i);
          buf = buf.slice(i + 1);
          if (!line.trim()) continue;
          onLine(line);
          // {"msg":"Created HTTP server","port":42069,...}: Ponder moves to the next port if ours is taken.
          if (line.includes('"Created HTTP server"')) {
            try {
              settle({ outcome: "listening", child, port: Number(JSON.parse(line).port) || port });
            } catch {
              settle({ outcome: "listening", child, port });
            }
          }
        }
      });
    };
    feed(child.stdout);
    feed(child.stderr);
    child.once("exit", (code) => settle({ outcome: "exited", code }));
  });
}

function bunBinary(): string {
  // Under Bun, execPath is bun itself; from Node fall back to `bun` on PATH.
  return process.versions.bun ? process.execPath : "bun";
}

/** Marks Ponder's lock on the schema released (its holder is known to be dead). */
async function unlockSchema(sql: postgres.Sql, schema: string): Promise<void> {
  try {
    await sql.unsafe(`update "${schema.replace(/"/g, '""')}"._ponder_meta set value = jsonb_set(value, '{is_locked}', to_jsonb(0)) where key = 'app'`);
  } catch (e) {
    // No _ponder_meta yet (never started, or stopped before migrating): nothing to unlock.
    if (!hasErrorCode(e, "42P01", "3F000")) throw e;
  }
}

async function dropSchema(sql: postgres.Sql, schema: string): Promise<void> {
  await sql.unsafe(`drop schema if exists "${schema.replace(/"/g, '""')}" cascade`);
}

/** SIGTERM (Ponder shuts down cleanly and releases its schema lock), SIGKILL after 10 s. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

/**
 * The head NOTIFY's trigger (head-notify.ts) goes on the table Ponder creates during its start:
 * look for it every 100 ms until it is there, then install. Until then runners only poll.
 */
async function keepHeadNotifyInstalled(databaseUrl: string, schema: string, done: () => boolean, onLine: (l: string) => void): Promise<void> {
  const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    while (!done()) {
      try {
        if (await installHeadNotify(admin, schema)) return;
      } catch (e) {
        onLine(JSON.stringify({ level: 40, msg: `head notification trigger not installed yet: ${describeError(e)}` }));
      }
      await sleep(100);
    }
  } finally {
    await admin.end();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
