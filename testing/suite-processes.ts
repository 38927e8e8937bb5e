/**
 * What the fault suites (testing/faults.ts, testing/cluster.ts) share to run the service as
 * real processes: the environment they get, a process in its own group that can be SIGKILLed
 * with everything it started (the indexer child too), waiting for one to answer, the admin
 * command and a merchant's key.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";

export const ROOT = resolve(import.meta.dir, "..");

/**
 * Settings every suite process gets: webhook retries and sweep retries within a suite's
 * minutes, not days, and a receiver on this machine allowed on purpose (a private target).
 */
export const SUITE_SERVICE_ENV: Record<string, string> = {
  SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
  SERVICE_WEBHOOK_RETRY_SCHEDULE: "1s,2s,4s,8s,10s,10s,10s,10s,10s,10s,10s,10s,10s,10s,10s",
  SERVICE_SWEEP_RETRY_BASE_SECONDS: "2",
  SERVICE_SWEEP_STUCK_SECONDS: "20",
};

/** This process's environment without any SERVICE_* or DATABASE_* of the caller's, plus `own`. */
export function childEnv(own: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("SERVICE_") && !k.startsWith("DATABASE_")) env[k] = v;
  return Object.assign(env, SUITE_SERVICE_ENV, own);
}

/** A service process in a process group of its own, started again after a kill. */
export interface GroupProcess {
  readonly name: string;
  /** The group leader's pid while it runs. */
  pid(): number | undefined;
  running(): boolean;
  /** The last 20,000 characters it wrote. */
  log(): string;
  start(): void;
  /** SIGKILL of the whole group: the process and whatever it started. */
  kill(): void;
  /** SIGTERM, then SIGKILL of what is left after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export function groupProcess(name: string, args: string[], env: Record<string, string>): GroupProcess {
  let child: ChildProcess | undefined;
  let log = "";
  const append = (d: Buffer) => void (log = (log + d.toString()).slice(-20_000));
  const running = () => !!child && child.exitCode === null && child.signalCode === null;
  const signal = (sig: NodeJS.Signals) => {
    try {
      if (child?.pid) process.kill(-child.pid, sig);
    } catch {} // the group is already gone
  };
  return {
    name,
    pid: () => (running() ? child!.pid : undefined),
    running,
    log: () => log,
    start() {
      log = "";
      child = spawn("bun", args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
      child.stdout!.on("data", append);
      child.stderr!.on("data", append);
    },
    kill: () => signal("SIGKILL"),
    async stop(graceMs = 1_500) {
      if (!child?.pid) return;
      signal("SIGTERM");
      const by = Date.now() + graceMs;
      while (running() && Date.now() < by) await Bun.sleep(50);
      signal("SIGKILL"); // the group: a child the leader left behind too
    },
  };
}

/** Waits until `url` answers 2xx; throws with the process's log if it exits or takes longer than `ms`. */
export async function waitHealthy(proc: GroupProcess, url: string, ms = 150_000): Promise<void> {
  const by = Date.now() + ms;
  for (;;) {
    if (!proc.running()) throw new Error(`${proc.name} exited during start-up:\n${proc.log()}`);
    if (Date.now() > by) throw new Error(`${proc.name} did not answer ${url} within ${ms} ms:\n${proc.log()}`);
    if (await fetch(url, { signal: AbortSignal.timeout(2_000) }).then((r) => r.ok).catch(() => false)) return;
    await Bun.sleep(200);
  }
}

/** `bun run admin …` with the suite's environment. */
export function admin(env: Record<string, string>, ...args: string[]) {
  return spawnSync("bun", ["run", "--silent", "admin", ...args], { cwd: ROOT, env, encoding: "utf8" });
}

/** A new merchant through the admin command; its sandbox API key. */
export function createMerchantKey(env: Record<string, string>, name: string): string {
  const m = admin(env, "merchant:create", "--name", name, "--json");
  if (m.status !== 0) throw new Error(`merchant:create: ${m.stderr}`);
  return JSON.parse(m.stdout).keys.sandbox as string;
}

/** A JSON client of the service with one API key; never throws on an answer, only on no answer. */
export function apiClient(host: string, key: string) {
  return async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${host}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}), ...headers },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(15_000),
    });
    return { status: res.status, retryAfter: Number(res.headers.get("retry-after") ?? 1), body: (await res.json().catch(() => ({}))) as any };
  };
}

/** The process group a pid belongs to (/proc/<pid>/stat, field 5): a node started by `groupProcess` leads its own. */
export function processGroupOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
  } catch {
    return undefined;
  }
}
