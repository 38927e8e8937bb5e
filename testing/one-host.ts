/**
 * `bun run test:one-host` — docs/topology.md's "One host" walk-through, run as written: every
 * `sh` block of that section in order (testing/one-host-doc.ts reads them), each long-running
 * command in a process group of its own as in a terminal, each one-shot command with bash; the
 * walk-through's own ports replaced by free ones and its data directory by a fresh one. Then
 * Ctrl-C (SIGINT to the group) in each terminal, the service's processes first: each must exit 0.
 *
 * Prints one JSON line (steps, their seconds, exit codes) and exits non-zero on the first step
 * that fails, with the output of the terminals.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./ports.ts";
import { childEnv, ROOT } from "./suite-processes.ts";
import { walkThrough } from "./one-host-doc.ts";
import { livePostmaster } from "../api/src/db/embedded-server.ts";
import { describeError } from "../shared/describe-error.ts";

const READY_MS = 180_000;
const SHELL_MS = 180_000;
const STOP_MS = 40_000;

interface Terminal {
  name: string;
  child: ChildProcess;
  out: string;
  exited: Promise<number | null>;
}

const t0 = Date.now();
const say = (line: string) => console.error(`[one-host +${((Date.now() - t0) / 1000).toFixed(1)}s] ${line}`);
const dir = mkdtempSync(join(tmpdir(), "paysession-one-host-"));
chmodSync(dir, 0o755); // as root, Postgres runs as the user postgres, which must reach its data dir
const terminals: Terminal[] = [];
const report: { step: string; seconds: number; exit?: number | null }[] = [];

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

function fail(what: string): never {
  throw new Error(`${what}\n${terminals.map((t) => `--- ${t.name}\n${t.out.slice(-3000)}`).join("\n")}`);
}

async function main() {
  const steps = walkThrough(readFileSync(join(ROOT, "docs/topology.md"), "utf8"));
  const settings = steps.find((s) => s.kind === "settings");
  if (!settings || steps[0] !== settings) fail("the walk-through does not open with its settings block");
  // The doc's ports, free ones here; its data directory, a fresh one.
  const own: Record<string, string> = {};
  for (const name of settings.names) {
    if (name === "ONE_HOST") own[name] = join(dir, "one-host");
    else if (name.endsWith("_PORT")) own[name] = String(await freePort());
    else fail(`the settings block sets ${name}, which this runner does not know how to choose`);
  }
  const env = childEnv(own);

  for (const step of steps) {
    const began = Date.now();
    if (step.kind === "settings") continue;
    if (step.kind === "terminal") {
      const child = spawn("bash", ["-c", step.script], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
      const t: Terminal = { name: step.name, child, out: "", exited: new Promise((r) => child.once("exit", (code) => r(code))) };
      child.stdout!.on("data", (d: Buffer) => void (t.out += d.toString()));
      child.stderr!.on("data", (d: Buffer) => void (t.out += d.toString()));
      terminals.push(t);
      for (const by = Date.now() + READY_MS; !t.out.includes(step.readyAt); await Bun.sleep(100)) {
        if (child.exitCode !== null) fail(`terminal ${step.name} exited (${child.exitCode}) before "${step.readyAt}"`);
        if (Date.now() > by) fail(`terminal ${step.name}: no "${step.readyAt}" within ${READY_MS / 1000} s`);
      }
      report.push({ step: `terminal ${step.name}`, seconds: (Date.now() - began) / 1000 });
      say(`terminal ${step.name} ready`);
      continue;
    }
    const child = spawn("bash", ["-e", "-o", "pipefail", "-c", step.script], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout!.on("data", (d: Buffer) => void (out += d.toString()));
    child.stderr!.on("data", (d: Buffer) => void (out += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), SHELL_MS);
    const code = await new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
    clearTimeout(timer);
    const first = step.script.split("\n").find((l) => !l.startsWith("#"))!.slice(0, 60);
    if (code !== 0) fail(`"${first}…" exited ${code}:\n${out}`);
    for (const e of step.expects) if (!out.includes(e)) fail(`"${first}…" did not print ${e}:\n${out}`);
    report.push({ step: first, seconds: (Date.now() - began) / 1000 });
    say(`ok: ${first}`);
  }

  // Ctrl-C in each terminal, the service's processes first, the chain and Postgres last.
  for (const t of [...terminals].reverse()) {
    const began = Date.now();
    process.kill(-t.child.pid!, "SIGINT");
    const timer = setTimeout(() => process.kill(-t.child.pid!, "SIGKILL"), STOP_MS);
    const code = await t.exited;
    clearTimeout(timer);
    report.push({ step: `Ctrl-C ${t.name}`, seconds: (Date.now() - began) / 1000, exit: code });
    if (code !== 0) fail(`terminal ${t.name} exited ${code} after Ctrl-C`);
    // Not only the terminal's command: whatever it started (`bun run`'s child, Ponder) is gone too.
    for (const by = Date.now() + STOP_MS; groupAlive(t.child.pid!); await Bun.sleep(100)) {
      if (Date.now() > by) fail(`terminal ${t.name}: processes of its group still run ${STOP_MS / 1000} s after Ctrl-C`);
    }
    if (/PostgresError|Unhandled|uncaught/i.test(t.out)) fail(`terminal ${t.name} printed an uncaught error`);
  }
  const postmaster = livePostmaster(join(own.ONE_HOST!, "pg"));
  if (postmaster !== undefined) fail(`Postgres (pid ${postmaster}) still runs after its terminal's Ctrl-C`);
  console.log(JSON.stringify({ suite: "one-host", ok: true, steps: report, seconds: (Date.now() - t0) / 1000 }));
}

try {
  await main();
} catch (e) {
  console.error(describeError(e));
  process.exitCode = 1;
} finally {
  for (const t of terminals) {
    try {
      process.kill(-t.child.pid!, "SIGKILL");
    } catch {} // already gone
  }
  rmSync(dir, { recursive: true, force: true });
}
