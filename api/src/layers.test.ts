/**
 * The floors of docs/architecture.md ("The floors, from the ground up"), held to the code. The
 * table there is the one list: this test reads it, then every import of every file of ours —
 * `import` and `export … from` (type-only ones too), `import()`, `require()` — and fails, naming
 * the file and the import, on an arrow running back up a floor, on an arrow leaving a ground-floor
 * folder, on a file that no floor holds, on a path the table names that is gone, and on an import
 * circle between files or between folders. Folders are read, not listed, so a file added to a
 * folder is checked with no change here; a new folder must be put on a floor in the table.
 *
 * The first tests run the checks on a few made-up files, so that each is seen to fail.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

const root = resolve(import.meta.dir, "../..");

/** A floor of the table: its number and the paths (folders, files, `*.x` name patterns) it lists. */
interface Floor {
  floor: number;
  paths: string[];
}

/** The floors table of docs/architecture.md: rows `| n | \`path\`, … | what lives there |`. */
function readFloors(doc: string): Floor[] {
  const section = doc.split("\n## The floors, from the ground up\n")[1]?.split("\n## ")[0];
  if (!section) throw new Error('docs/architecture.md has no "The floors, from the ground up" section');
  const floors = section
    .split("\n")
    .map((line) => /^\| (\d+) \| ([^|]+) \|/.exec(line))
    .filter((m) => m !== null)
    .map((m) => ({ floor: Number(m[1]), paths: [...m[2]!.matchAll(/`([^`]+)`/g)].map((p) => p[1]!) }));
  if (floors.length < 2) throw new Error("docs/architecture.md: the floors table has fewer than two rows");
  return floors;
}

/** Where a file stands: its floor and its unit (the listed path that holds it). */
interface Place {
  floor: number;
  unit: string;
}

/**
 * The place of a repository path: a `*.x` pattern matching its name first (tests stand where the
 * table puts `*.test.ts`, whatever folder they sit in), else the longest listed path that holds it.
 * A listed folder holds its subfolders; a file `x.ts` beside a folder `x/` is one unit with it.
 */
function placeOf(floors: Floor[], path: string): Place | undefined {
  let best: (Place & { length: number }) | undefined;
  for (const { floor, paths } of floors) {
    for (const listed of paths) {
      if (listed.startsWith("*")) {
        if (path.endsWith(listed.slice(1))) return { floor, unit: listed };
        continue;
      }
      const unit = listed.replace(/\/$/, "").replace(/\.(ts|js)$/, "");
      const holds = path === unit || path.startsWith(`${unit}/`) || path.startsWith(`${unit}.`);
      if (holds && (!best || unit.length > best.length)) best = { floor, unit, length: unit.length };
    }
  }
  return best && { floor: best.floor, unit: best.unit };
}

/** One relative import of a file: as written, and the repository path it resolves to. */
interface Import {
  spec: string;
  target: string;
}

const CODE = /\.(ts|tsx|mts|cts|js|mjs|cjs)$/;
/** Code is checked; data read through an import (JSON, SQL, styles) has no floor. */
const isCode = (path: string) => CODE.test(path) || !/\.[a-z0-9]+$/i.test(path.split("/").pop()!);

/** Every problem the floors find in `files` (path → its relative imports), each naming file and import. */
function layerProblems(floors: Floor[], files: Map<string, Import[]>, exists: (path: string) => boolean): string[] {
  const problems: string[] = [];
  const ground = Math.min(...floors.map((f) => f.floor));
  for (const { floor, paths } of floors) {
    for (const p of paths) if (!p.startsWith("*") && !exists(p)) problems.push(`the floors table names \`${p}\` on floor ${floor}, which does not exist`);
  }
  const places = new Map<string, Place>();
  for (const file of files.keys()) {
    const place = placeOf(floors, file);
    if (place) places.set(file, place);
    else problems.push(`${file} is on no floor: put its folder on a floor of the table in docs/architecture.md`);
  }
  const unitEdges = new Map<string, Map<string, string>>();
  for (const [file, imports] of files) {
    const from = places.get(file);
    if (!from) continue;
    for (const { spec, target } of imports) {
      if (!isCode(target)) continue;
      if (!files.has(target)) {
        problems.push(`${file} imports "${spec}", which is no file of ours (${target})`);
        continue;
      }
      const to = places.get(target);
      if (!to || to.unit === from.unit) continue;
      const arrow = `${file} imports "${spec}": ${from.unit} (floor ${from.floor}) → ${to.unit} (floor ${to.floor})`;
      if (to.floor > from.floor) problems.push(`${arrow}, an arrow running back up`);
      else if (from.floor === ground) problems.push(`${arrow}, but a ground-floor folder stands alone`);
      const edges = unitEdges.get(from.unit) ?? unitEdges.set(from.unit, new Map()).get(from.unit)!;
      if (!edges.has(to.unit)) edges.set(to.unit, `${file} → ${target}`);
    }
  }
  const fileEdges = new Map([...files].map(([f, imports]) => [f, new Map(imports.filter((i) => files.has(i.target) && i.target !== f).map((i) => [i.target, ""]))]));
  for (const circle of circles(fileEdges)) problems.push(`an import circle between files: ${circle.join(" → ")} → ${circle[0]}`);
  for (const circle of circles(unitEdges)) {
    const arrows = circle.map((u, i) => unitEdges.get(u)!.get(circle[(i + 1) % circle.length]!)).filter(Boolean);
    problems.push(`an import circle between folders ${circle.join(", ")}: ${arrows.join("; ")}`);
  }
  return problems;
}

/** The circles of a directed graph (its strongly connected parts of more than one node), each in an order its arrows run. */
function circles(graph: Map<string, Map<string, string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const part: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      part.push(w);
    } while (w !== v);
    if (part.length > 1) found.push(orderAlong(graph, part));
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** A circle through the nodes of a strongly connected part, followed along its arrows from its first node. */
function orderAlong(graph: Map<string, Map<string, string>>, part: string[]): string[] {
  const inPart = new Set(part);
  const start = part.sort()[0]!;
  // Breadth-first from start back to start: the shortest circle through it.
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length) {
    const v = queue.shift()!;
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!inPart.has(w)) continue;
      if (w === start) {
        const path = [v];
        while (path[0] !== start) path.unshift(cameFrom.get(path[0]!)!);
        return path;
      }
      if (!cameFrom.has(w)) {
        cameFrom.set(w, v);
        queue.push(w);
      }
    }
  }
  return part;
}

/** What is not ours, or not source: dependencies, data, build output. */
const NOT_OURS = new Set(["node_modules", ".git", ".data", "dist", ".ponder", "generated", "artifacts", "out"]);
/** Where the repository's code lives: these folders and the code files at the top. */
const CODE_FOLDERS = ["api", "shared", "indexer", "sdk", "testing", "bench", "examples"];

function codeFilesUnder(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`;
    if (NOT_OURS.has(e.name)) return [];
    if (e.isDirectory()) return codeFilesUnder(path);
    return e.isFile() && CODE.test(e.name) ? [path] : [];
  });
}

/** Every code file of the repository with its relative imports, read from disk now. */
function repositoryImports(): Map<string, Import[]> {
  const tops = readdirSync(root, { withFileTypes: true }).filter((e) => e.isFile() && CODE.test(e.name)).map((e) => e.name);
  const files = [...tops, ...CODE_FOLDERS.filter((d) => existsSync(join(root, d))).flatMap(codeFilesUnder)];
  return new Map(
    files.map((file) => {
      const { importedFiles } = ts.preProcessFile(readFileSync(join(root, file), "utf8"), true, true);
      const imports = importedFiles
        .map((i) => i.fileName)
        .filter((spec) => spec.startsWith("./") || spec.startsWith("../"))
        .map((spec) => ({ spec, target: withExtension(relative(root, resolve(root, dirname(file), spec))) }));
      return [file, imports];
    }),
  );
}

/** An import written without its extension, as the resolver would find it. */
function withExtension(path: string): string {
  if (/\.[a-z0-9]+$/i.test(path.split("/").pop()!) || !isCode(path)) return path;
  for (const candidate of [`${path}.ts`, `${path}/index.ts`]) if (existsSync(join(root, candidate)) && statSync(join(root, candidate)).isFile()) return candidate;
  return path;
}

const floors = readFloors(readFileSync(join(root, "docs/architecture.md"), "utf8"));
const existsInRepo = (p: string) => existsSync(join(root, p));

describe("the checks fail where they should (made-up files)", () => {
  const made: Floor[] = [
    { floor: 1, paths: ["lib/", "kit/"] },
    { floor: 2, paths: ["core/", "core.ts"] },
    { floor: 3, paths: ["face/"] },
    { floor: 4, paths: ["*.test.ts"] },
  ];
  const check = (files: Record<string, string[]>) =>
    layerProblems(made, new Map(Object.entries(files).map(([f, targets]) => [f, targets.map((t) => ({ spec: relative(dirname(f), t), target: t }))])), () => true);

  test("down and sideways within a floor pass; a test may import anything", () => {
    expect(check({ "lib/a.ts": ["lib/b.ts"], "lib/b.ts": [], "core/x.ts": ["lib/a.ts", "core.ts"], "core.ts": [], "face/f.ts": ["core/x.ts", "lib/b.ts"], "face/f.test.ts": ["face/f.ts"], "lib/a.test.ts": ["face/f.ts"] })).toEqual([]);
  });
  test("an arrow running back up is named with its file and import", () => {
    expect(check({ "core/x.ts": ["face/f.ts"], "face/f.ts": [] })).toEqual(['core/x.ts imports "../face/f.ts": core (floor 2) → face (floor 3), an arrow running back up']);
    expect(check({ "core/x.ts": ["lib/a.test.ts"], "lib/a.test.ts": [] })).toEqual(['core/x.ts imports "../lib/a.test.ts": core (floor 2) → *.test.ts (floor 4), an arrow running back up']);
  });
  test("a ground-floor folder importing another is named", () => {
    expect(check({ "lib/a.ts": ["kit/k.ts"], "kit/k.ts": [] })).toEqual(['lib/a.ts imports "../kit/k.ts": lib (floor 1) → kit (floor 1), but a ground-floor folder stands alone']);
  });
  test("a file on no floor, a missing import and a listed path that is gone are named", () => {
    expect(check({ "other/o.ts": [] })).toEqual(["other/o.ts is on no floor: put its folder on a floor of the table in docs/architecture.md"]);
    expect(check({ "core/x.ts": ["core/gone.ts"] })).toEqual(['core/x.ts imports "gone.ts", which is no file of ours (core/gone.ts)']);
    expect(layerProblems(made, new Map(), (p) => p !== "kit/")).toEqual(["the floors table names `kit/` on floor 1, which does not exist"]);
  });
  test("circles between files and between folders of one floor are named", () => {
    expect(check({ "core/x.ts": ["core/y.ts"], "core/y.ts": ["core/x.ts"] })).toEqual(["an import circle between files: core/x.ts → core/y.ts → core/x.ts"]);
    const twoFolders = check({ "lib/a.ts": [], "core/x.ts": ["face/f.ts"], "face/f.ts": ["core/y.ts"], "core/y.ts": [] });
    expect(twoFolders).toEqual(['core/x.ts imports "../face/f.ts": core (floor 2) → face (floor 3), an arrow running back up', "an import circle between folders core, face: core/x.ts → face/f.ts; face/f.ts → core/y.ts"]);
  });
});

describe("the repository", () => {
  const files = repositoryImports();

  test("the table and the files were read (the test checks something)", () => {
    expect(floors.length).toBeGreaterThan(5);
    expect(files.size).toBeGreaterThan(300);
    expect([...files.values()].flat().length).toBeGreaterThan(1000);
    for (const f of ["api/src/db/client.ts", "shared/money.ts", "sdk/src/index.ts", "indexer/process.ts", "api/src/server.ts", "api/src/layers.test.ts"]) expect(files.has(f)).toBe(true);
  });

  test("every import runs down the floors of docs/architecture.md, and none runs in a circle", () => {
    expect(layerProblems(floors, files, existsInRepo)).toEqual([]);
  });
});
