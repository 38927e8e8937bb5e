/**
 * `bun run start` and `bun run dev` on the embedded Postgres, stopped as operators stop them:
 * a signal to the whole process group (a terminal's Ctrl-C, `kill -TERM -<pgid>`), or to every
 * process of the unit at once (systemd's control-group stop: Postgres hears it as well). Each
 * exits 0 with no uncaught error and leaves nothing running. Killed hard (SIGKILL), it leaves no
 * Postgres holding the data directory either.
 */
import { afterAll, expect, test } from "bun:test";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort } from "../../testing/ports.ts";
import { childEnv } from "../../testing/suite-processes.ts";
import { eventually } from "../../testing/eventually.ts";
import { livePostmaster } from "./db/embedded-server.ts";

const ROOT = resolve(import.meta.dir, "../..");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}, 60_000);
/**
 * `bun run dev` starts a chain, Ponder and the shop (10–30 s on a busy machine): `bun test` runs
 * it once, in the hardest stop (the whole unit, Postgres included), and `bun run start` in the
 * stops that failed before (SIGINT to the group restarted Postgres; SIGKILL left it running);
 * `bun run test:stops` runs every signal against both commands.
 */
const everyStop = process.env.PAYSESSION_EVERY_STOP === "1";

interface Run {
  child: ChildProcess;
  dataDir: string;
  out: () => string;
  exited: Promise<number | null>;
}

/** The service in a process group of its own, on the embedded Postgres of a fresh data dir, once it serves. */
async function startService(mode: "start" | "dev", dataDir = mkdtempSync(join(tmpdir(), "paysession-stop-"))): Promise<Run> {
  dirs.push(dataDir);
  const port = await freePort();
  const env = childEnv({
    SERVICE_DATA_DIR: dataDir,
    SERVICE_PORT: String(port),
    SERVICE_EMBEDDED_PG_PORT: String(await freePort()),
    SERVICE_INDEXER_PORT: String(await freePort()),
    SERVICE_DEV_CHAIN_PORT: String(await freePort()),
    MERCHANT_EXAMPLE_PORT: String(await freePort()),
  });
  const child = spawn("bun", ["api/src/main.ts", ...(mode === "dev" ? ["--dev"] : [])], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let out = "";
  child.stdout!.on("data", (d: Buffer) => void (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => void (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  // `dev` with everything (its chain, the indexer, the runner thread, the sweeper, the shop);
  // `start` with no network configured, so the API and its loops only (seconds to start).
  const ready = mode === "dev" ? "shop      http" : "API       http";
  await eventually(() => {
    if (child.exitCode !== null) throw new Error(`exited during start:\n${out}`);
    return out.includes(ready);
  }, `"${ready}" from ${mode}`, 90_000);
  return { child, dataDir, out: () => out, exited };
}

/** Every live (not zombie) process whose parent chain leads to `root`. */
function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (state !== "Z") parent.set(Number(d), Number(ppid));
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  for (const pid of parent.keys()) {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) {
      if (p === root) {
        found.push(pid);
        break;
      }
    }
  }
  return found;
}
const alive = (pids: number[]) => pids.filter((pid) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
});

async function expectCleanStop(run: Run, signal: "SIGTERM" | "SIGINT", wholeUnit = false) {
  const started = descendants(run.child.pid!);
  const postmaster = livePostmaster(join(run.dataDir, "pg"));
  expect(postmaster).toBeDefined();
  process.kill(-run.child.pid!, signal);
  // systemd's stop: every process of the unit at once, the detached Postgres too.
  if (wholeUnit) process.kill(postmaster!, signal);
  expect(await run.exited).toBe(0);
  const out = run.out();
  expect(out).toContain(`${signal}: stopping`);
  expect(out).not.toMatch(/PostgresError|error: |Unhandled|uncaught/i);
  // Not restarted by its supervisor while the service stopped.
  expect(out).not.toContain("embedded Postgres exited");
  // Nothing left: Postgres, its watchdog, the indexer, the local chain.
  await eventually(() => alive(started).length === 0, `every process it started to end (left: ${alive(started).join(", ")})`, 5_000);
  expect(livePostmaster(join(run.dataDir, "pg"))).toBeUndefined();
}

test.if(everyStop)("bun run dev, SIGTERM to its process group: exits 0, no uncaught error, nothing left running", async () => {
  await expectCleanStop(await startService("dev"), "SIGTERM");
}, 120_000);

test.if(everyStop)("bun run dev, SIGINT to its process group (Ctrl-C): exits 0, nothing left running", async () => {
  await expectCleanStop(await startService("dev"), "SIGINT");
}, 120_000);

test.if(everyStop)("bun run start, SIGTERM to its process group: exits 0, nothing left running", async () => {
  await expectCleanStop(await startService("start"), "SIGTERM");
}, 120_000);

test("bun run start, SIGINT to its process group: exits 0, nothing left running", async () => {
  await expectCleanStop(await startService("start"), "SIGINT");
}, 120_000);

test("bun run dev, SIGTERM to every process of the unit at once (systemd), Postgres too: exits 0, nothing left running", async () => {
  await expectCleanStop(await startService("dev"), "SIGTERM", true);
}, 120_000);

test("bun run start killed with SIGKILL, alone or with its group: its Postgres does not outlive it; the next start takes the data dir", async () => {
  const run = await startService("start");
  const pgDir = join(run.dataDir, "pg");
  const postmaster = livePostmaster(pgDir)!;
  expect(postmaster).toBeDefined();
  process.kill(run.child.pid!, "SIGKILL"); // the service only (an OOM kill): not its group
  await run.exited;
  await eventually(() => livePostmaster(pgDir) === undefined, "the orphaned Postgres to stop", 10_000);
  const again = await startService("start", run.dataDir);
  expect(livePostmaster(pgDir)).toBeDefined();
  process.kill(-again.child.pid!, "SIGKILL"); // the whole group: Postgres is not in it
  await again.exited;
  await eventually(() => livePostmaster(pgDir) === undefined, "the orphaned Postgres to stop", 10_000);
}, 120_000);
