/** `bun run bench`: every figure script in bench/, one after another; each prints one JSON line. */
import { readdirSync } from "node:fs";
import { resolve } from "node:path";

const here = import.meta.dir;
const only = process.argv.slice(2);
const scripts = readdirSync(here)
  .filter((f) => f.endsWith(".ts") && !["lib.ts", "run-all.ts", "detection-driver.ts"].includes(f) && !f.endsWith(".test.ts"))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
let failed = 0;
for (const f of scripts) {
  const p = Bun.spawn(["bun", resolve(here, f)], { stdout: "inherit", stderr: "inherit" });
  if ((await p.exited) !== 0) {
    failed++;
    console.error(`bench/${f} failed`);
  }
}
process.exit(failed ? 1 : 0);
