/**
 * docs/topology.md's "One host" walk-through reads as steps (testing/one-host-doc.ts), and what
 * its steps lean on exists: the admin commands it names, the settings it sets, the lines each
 * terminal waits for. `bun run test:one-host` runs it for real (a minute); this checks in
 * milliseconds that a change of a log line or a command cannot leave the doc behind unseen.
 */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { walkThrough, type Step } from "./one-host-doc.ts";

const ROOT = resolve(import.meta.dir, "..");
const doc = readFileSync(join(ROOT, "docs/topology.md"), "utf8");
const steps = walkThrough(doc);
const terminals = steps.filter((s): s is Extract<Step, { kind: "terminal" }> => s.kind === "terminal");
const shells = steps.filter((s): s is Extract<Step, { kind: "shell" }> => s.kind === "shell");
const scripts = [...terminals, ...shells].map((s) => s.script).join("\n");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") ? [join(dir, e.name)] : [],
  );
}
const source = sourceFiles(join(ROOT, "api/src")).map((f) => readFileSync(f, "utf8")).join("\n");

test("the walk-through opens with its settings, then Postgres, the chain, every role, two indexers, and checks what it did", () => {
  expect(steps[0]).toEqual({ kind: "settings", names: expect.arrayContaining(["ONE_HOST", "PG_PORT", "CHAIN_PORT"]) });
  expect(terminals.map((t) => t.name)).toEqual(["pg", "chain", "api-1", "api-2", "actors", "sweeper", "webhooks", "indexer-1", "indexer-2"]);
  // The two indexers on one host: a port each.
  const indexerPorts = terminals.filter((t) => t.name.startsWith("indexer")).map((t) => t.script.match(/SERVICE_INDEXER_PORT=(\S+)/)?.[1]);
  expect(new Set(indexerPorts).size).toBe(2);
  expect(indexerPorts.every(Boolean)).toBe(true);
  expect(shells.flatMap((s) => s.expects)).toEqual(expect.arrayContaining(["(indexer active)", "(indexer standby)", '["PENDING","FUNDED","SUCCEEDED"]']));
});

test("every variable the walk-through uses is one of its settings or set by it", () => {
  const settings = steps[0]!.kind === "settings" ? steps[0]!.names : [];
  const used = new Set([...scripts.matchAll(/\$([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!));
  const assigned = new Set([...scripts.matchAll(/\b([A-Z][A-Z0-9_]*)=/g)].map((m) => m[1]!));
  expect([...used].filter((v) => !settings.includes(v) && !assigned.has(v))).toEqual([]);
});

test("every admin command it runs exists, and every SERVICE_ setting it sets is one the service reads", () => {
  const admin = readFileSync(join(ROOT, "api/src/cli/admin.ts"), "utf8");
  const usage = admin.match(/const USAGE = `usage: bun run admin <([^>]+)>/)![1]!.split("|");
  const commands = [...scripts.matchAll(/run (?:--silent )?admin ([\w:]+)/g)].map((m) => m[1]!);
  expect(commands.length).toBeGreaterThan(3);
  expect(commands.filter((c) => !usage.includes(c))).toEqual([]);
  const config = readFileSync(join(ROOT, "api/src/config.ts"), "utf8") + readFileSync(join(ROOT, ".env.example"), "utf8");
  const settings = [...scripts.matchAll(/\b(SERVICE_[A-Z0-9_]+)=/g)].map((m) => m[1]!).filter((s) => s !== "SERVICE_RPC_URL_LOCAL");
  expect(settings.filter((s) => !config.includes(s))).toEqual([]);
});

test("each terminal waits for a line the service's code prints", () => {
  for (const t of terminals) expect({ terminal: t.name, found: source.includes(t.readyAt.trimEnd()) }).toEqual({ terminal: t.name, found: true });
});
