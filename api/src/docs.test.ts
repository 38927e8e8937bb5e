/**
 * The docs are part of the contract: the merchant guide names every error code, the operators'
 * guide every setting (and .env.example too), every link between the docs lands on a file and a
 * heading that exist, no link leaves the repository, and the analysts' queries run.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import postgres from "postgres";
import { ERROR_CATALOGUE } from "./errors.ts";
import { EVENT_DETAILS } from "./sessions/event-detail.ts";
import { migrate } from "./db/migrate.ts";
import { createTestDatabase } from "../../testing/database.ts";

const root = resolve(import.meta.dir, "../..");
const read = (path: string) => readFileSync(resolve(root, path), "utf8");
/** Where the error catalogue's table lives. */
const merchantGuide = read("docs/merchant-guide.md");
/** Where the configuration tables live. */
const operatorsGuide = read("docs/operators.md");
const envExample = read(".env.example");
const configSource = readFileSync(resolve(import.meta.dir, "config.ts"), "utf8");

/** Every file under `dir`, skipping what is not the repository's own (dependencies, data, build output). */
const NOT_OURS = new Set(["node_modules", ".git", ".data", "artifacts", "dist", ".ponder", "generated", "out"]);
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    NOT_OURS.has(e.name) ? [] : e.isDirectory() ? filesUnder(join(dir, e.name)) : e.isFile() ? [join(dir, e.name)] : [],
  );
}
const markdownFiles = filesUnder(root).filter((f) => f.endsWith(".md"));

test("the merchant guide lists every error code with its HTTP status", () => {
  for (const [code, e] of Object.entries(ERROR_CATALOGUE)) {
    expect(merchantGuide).toContain(`| ${e.status} | \`${code}\` | ${e.type} |`);
  }
});

test("the webhooks guide's Event detail table has a row for every reason, naming every field of its detail", () => {
  const rows = read("docs/webhooks.md")
    .split("## Event detail")[1]!
    .split("\n## ")[0]!
    .split("\n")
    .filter((l) => l.startsWith("| `"));
  for (const [reason, schema] of Object.entries(EVENT_DETAILS)) {
    const row = rows.find((l) => l.split(" | ")[0]!.includes(`\`${reason}\``));
    expect(row, reason).toBeDefined();
    for (const field of Object.keys(schema.properties)) expect(row, `${reason}.${field}`).toContain(`\`${field}\``);
  }
});

test("every setting read by config.ts is in the operators' guide and .env.example", () => {
  const names = [...configSource.matchAll(/"((?:SERVICE|DATABASE)_[A-Z_]+)"/g)].map((m) => m[1]!);
  expect(names.length).toBeGreaterThan(10);
  for (const name of new Set(names)) {
    expect(operatorsGuide).toContain(`\`${name}\``);
    expect(envExample).toContain(name);
  }
});

test("every variable the service or the example shop reads from the environment has a row in a configuration table", () => {
  const sources = [resolve(root, "api/src"), resolve(root, "examples")]
    .flatMap(filesUnder)
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"));
  const names = new Set(
    sources.flatMap((file) =>
      [...readFileSync(file, "utf8").matchAll(/process\.env(?:\.([A-Z][A-Z0-9_]+)|\[\s*"([A-Z][A-Z0-9_]+)"\s*\])/g)].map((m) => m[1] ?? m[2]!),
    ),
  );
  expect(names).toContain("MERCHANT_EXAMPLE_PORT");
  const missing = [...names].filter((name) => !operatorsGuide.includes(`\n| \`${name}\` |`));
  expect(missing).toEqual([]);
});

/** The text outside fenced code blocks (whose lines are never headings or links). */
function outsideFences(markdown: string): string {
  return markdown.replace(/^[ \t]*(```|~~~)[^\n]*\n[\s\S]*?^[ \t]*\1[ \t]*$/gm, "");
}

/** The text outside code, fenced or inline: what a reader sees as prose, links included. */
function prose(markdown: string): string {
  return outsideFences(markdown).replace(/`+[^`\n]*`+/g, "");
}

/** GitHub's anchor for a heading: lowercased, formatting and punctuation dropped, spaces to hyphens, repeats numbered. */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const m of outsideFences(markdown).matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const text = m[1]!.replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1");
    const base = text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Every link target in the prose: inline links and images, and autolinks. */
function linkTargets(markdown: string): string[] {
  const text = prose(markdown);
  return [
    ...[...text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!),
    ...[...text.matchAll(/<((?:https?|mailto|ftp):[^>\s]+)>/g)].map((m) => m[1]!),
  ];
}

/** Addresses a reader may follow without leaving the machine: the service's own examples. */
const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1"]);

test("the anchors of headings are GitHub's", () => {
  const anchors = headingAnchors("# Going live on Ethereum and Base\n## Key rotation, as it stands today\n### From a TypeScript server: the client\n## `SERVICE_RUNNER_THREAD` and **bold**\n## A (b)\n## A (b)\n```sh\n# not a heading\n```\n");
  expect([...anchors]).toEqual(["going-live-on-ethereum-and-base", "key-rotation-as-it-stands-today", "from-a-typescript-server-the-client", "service_runner_thread-and-bold", "a-b", "a-b-1"]);
  expect(linkTargets("[a](docs/x.md#y) ![i](p.png) <http://localhost:4000> `[no](z.md)`\n```\n[no](w.md)\n```\n")).toEqual(["docs/x.md#y", "p.png", "http://localhost:4000"]);
});

test("every link in the docs lands on a file and a heading of the repository", () => {
  expect(markdownFiles.map((f) => relative(root, f))).toContain("docs/session-lifecycle.md");
  const broken: string[] = [];
  for (const file of markdownFiles) {
    const where = relative(root, file);
    for (const target of linkTargets(readFileSync(file, "utf8"))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
        const url = URL.canParse(target) ? new URL(target) : undefined;
        if (!url || !/^https?:$/.test(url.protocol) || !LOCAL_HOSTS.has(url.hostname)) broken.push(`${where}: ${target} leaves the repository`);
        continue;
      }
      const [path, anchor] = target.split("#") as [string, string | undefined];
      const dest = path === "" ? file : resolve(dirname(file), decodeURIComponent(path));
      if (!dest.startsWith(root + "/") && dest !== root) {
        broken.push(`${where}: ${target} leaves the repository`);
        continue;
      }
      if (!existsSync(dest)) {
        broken.push(`${where}: ${target}: no such file`);
        continue;
      }
      if (anchor !== undefined) {
        if (!dest.endsWith(".md") || statSync(dest).isDirectory()) broken.push(`${where}: ${target}: an anchor into a file that has no headings`);
        else if (!headingAnchors(readFileSync(dest, "utf8")).has(anchor)) broken.push(`${where}: ${target}: no such heading`);
      }
    }
  }
  expect(broken).toEqual([]);
});

test("no prose URL outside code points off the machine", () => {
  const leaving: string[] = [];
  for (const file of markdownFiles) {
    for (const m of prose(readFileSync(file, "utf8")).matchAll(/\bhttps?:\/\/[^\s<>()\]`'"]+/g)) {
      if (!URL.canParse(m[0]) || !LOCAL_HOSTS.has(new URL(m[0]).hostname)) leaving.push(`${relative(root, file)}: ${m[0]}`);
    }
  }
  expect(leaving).toEqual([]);
});

test("no file of the repository names a design document that is not in it", () => {
  const name = ["DESIGN", "md"].join(".");
  const offenders = filesUnder(root).filter((f) => {
    const bytes = readFileSync(f);
    return !bytes.includes(0) && bytes.toString("utf8").includes(name);
  });
  expect(offenders.map((f) => relative(root, f))).toEqual([]);
});

describe("the analysts' guide", () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let sql: postgres.Sql;
  beforeAll(async () => {
    db = await createTestDatabase("docs");
    sql = postgres(db.url, { max: 1, onnotice: () => {} });
    await migrate(sql);
  });
  afterAll(async () => {
    await sql.end();
    await db.drop();
  });

  test("every SQL block of the analysts' guide runs against the service's schema", async () => {
    const blocks = [...read("docs/analysts.md").matchAll(/^```sql\n([\s\S]*?)^```/gm)].map((m) => m[1]!);
    expect(blocks.length).toBeGreaterThanOrEqual(6);
    for (const block of blocks) {
      // Each in a transaction rolled back: the role and grants are tried, and leave nothing behind.
      const outcome = await sql
        .begin(async (tx) => {
          await tx.unsafe(block);
          throw new Error("rollback");
        })
        .catch((e: Error) => (e.message === "rollback" ? "ran" : `${e.message}\n${block}`));
      expect(outcome).toBe("ran");
    }
  });
});
