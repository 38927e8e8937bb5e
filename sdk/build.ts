/**
 * Builds the two client packages into their dist/ (gitignored), for `npm pack`:
 *
 *   @paysession/server (sdk/server/)  index.mjs (ESM), index.cjs (CommonJS), .d.mts and .d.cts
 *   @paysession/sdk    (sdk/)         index.js (ESM, for bundlers), .d.ts
 *
 *   bun run build:clients              both, listing the files written
 *   bun sdk/build.ts server|browser    one (each package's `prepack` runs this with --quiet: what
 *                                      a prepack prints lands in `npm pack --json`'s output)
 *
 * The JavaScript is one file per format, bundled by Bun.build (no dependencies to install). The
 * declarations are tsc's, one per source file; their relative imports name the sources (`./x.ts`),
 * so they are rewritten to the emitted files' extension. Each module system gets its own tree
 * (.d.mts beside the ESM, .d.cts beside the CommonJS) so that TypeScript, under node16 or
 * nodenext resolution, types an ESM import and a require() each as what Node loads.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import ts from "typescript";

const SDK = import.meta.dir;
/** Where tsc believes it writes the declarations; they are caught on the way (nothing is written there). */
const OUT = "/dts";

interface Target {
  dir: string;
  entry: string;
  /** Bun.build target. */
  platform: "node" | "browser";
  js: { format: "esm" | "cjs"; file: string }[];
  /** Declaration trees: file extension and the extension their relative imports point to. */
  dts: { ext: ".d.mts" | ".d.cts" | ".d.ts"; importExt: ".mjs" | ".cjs" | ".js" }[];
}

const TARGETS: Record<"server" | "browser", Target> = {
  server: {
    dir: join(SDK, "server"),
    entry: join(SDK, "server", "index.ts"),
    platform: "node",
    js: [
      { format: "esm", file: "index.mjs" },
      { format: "cjs", file: "index.cjs" },
    ],
    dts: [
      { ext: ".d.mts", importExt: ".mjs" },
      { ext: ".d.cts", importExt: ".cjs" },
    ],
  },
  browser: {
    dir: SDK,
    entry: join(SDK, "src", "index.ts"),
    platform: "browser",
    js: [{ format: "esm", file: "index.js" }],
    dts: [{ ext: ".d.ts", importExt: ".js" }],
  },
};

/** `from "./client.ts"` / `import("./types.ts")` → the same path ending in `ext`; package imports untouched. */
export function rewriteRelativeImports(dts: string, ext: string): string {
  return dts.replace(/((?:\bfrom|\bimport\()\s*["'])(\.{1,2}\/[^"']+)\.ts(["'])/g, `$1$2${ext}$3`);
}

/** tsc's declarations for `entry` and every source it imports, by path under dist/ (`client.d.ts`, …). */
function declarations(entry: string, platform: Target["platform"]): Map<string, string> {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    // The server client sees Node's globals (fetch, Headers, WebCrypto: @types/node), not the DOM.
    lib: platform === "node" ? ["lib.es2022.d.ts"] : ["lib.es2022.d.ts", "lib.dom.d.ts"],
    // The server client reads process.env when it exists; the browser SDK knows only the DOM.
    types: platform === "node" ? ["node"] : [],
    strict: true,
    noUncheckedIndexedAccess: true,
    skipLibCheck: true,
    allowImportingTsExtensions: true,
    verbatimModuleSyntax: true,
    declaration: true,
    emitDeclarationOnly: true,
    rootDir: join(entry, ".."),
    outDir: OUT,
  };
  const program = ts.createProgram([entry], options);
  const problems = ts.getPreEmitDiagnostics(program);
  if (problems.length > 0) {
    throw new Error(ts.formatDiagnosticsWithColorAndContext(problems, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => SDK, getNewLine: () => "\n" }));
  }
  const files = new Map<string, string>();
  const emitted = program.emit(undefined, (fileName, text) => files.set(relative(OUT, fileName), text));
  if (emitted.emitSkipped) throw new Error(`declarations for ${entry} were not emitted`);
  return files;
}

async function buildTarget(name: keyof typeof TARGETS): Promise<string[]> {
  const t = TARGETS[name];
  const dist = join(t.dir, "dist");
  rmSync(dist, { recursive: true, force: true });
  mkdirSync(dist, { recursive: true });
  const written: string[] = [];
  for (const { format, file } of t.js) {
    const out = await Bun.build({ entrypoints: [t.entry], target: t.platform, format, sourcemap: "none", minify: false });
    if (!out.success || out.outputs.length !== 1) throw new Error(`building ${name} (${format}) failed: ${out.logs.map(String).join("; ")}`);
    writeFileSync(join(dist, file), await out.outputs[0]!.text());
    written.push(join(dist, file));
  }
  for (const [file, text] of declarations(t.entry, t.platform)) {
    for (const { ext, importExt } of t.dts) {
      const target = join(dist, file.replace(/\.d\.ts$/, ext));
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, rewriteRelativeImports(text, importExt));
      written.push(target);
    }
  }
  return written;
}

/** The browser SDK reports its version (`SDK_VERSION`, window.Paysession.version): it must be the package's. */
function checkBrowserVersion(): void {
  const pkg = JSON.parse(readFileSync(join(SDK, "package.json"), "utf8")) as { version: string };
  const src = readFileSync(join(SDK, "src", "index.ts"), "utf8");
  const inCode = /export const SDK_VERSION = "([^"]+)"/.exec(src)?.[1];
  if (inCode !== pkg.version) throw new Error(`sdk/package.json is version ${pkg.version} but SDK_VERSION in sdk/src/index.ts is ${inCode}`);
}

export async function buildClients(which: (keyof typeof TARGETS)[] = ["server", "browser"]): Promise<string[]> {
  if (which.includes("browser")) checkBrowserVersion();
  const written: string[] = [];
  for (const name of which) written.push(...(await buildTarget(name)));
  return written;
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const quiet = args.includes("--quiet");
  const arg = args.find((a) => a !== "--quiet");
  if ((arg !== undefined && arg !== "server" && arg !== "browser") || args.length > (quiet ? 2 : 1)) {
    console.error("usage: bun sdk/build.ts [server|browser] [--quiet]");
    process.exit(2);
  }
  // From the repository's root wherever it is run (npm runs `prepack` in the package's folder),
  // so that the bundles' comments naming their sources read the same from every build.
  process.chdir(join(SDK, ".."));
  const files = await buildClients(arg ? [arg] : undefined);
  if (!quiet) for (const f of files) console.log(relative(".", f));
}
