/** The README and .env.example are part of the contract: they must name every error code and setting. */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { ERROR_CATALOGUE } from "./errors.ts";

const root = resolve(import.meta.dir, "../..");
const readme = readFileSync(resolve(root, "README.md"), "utf8");
const envExample = readFileSync(resolve(root, ".env.example"), "utf8");
const configSource = readFileSync(resolve(import.meta.dir, "config.ts"), "utf8");

test("the README lists every error code with its HTTP status", () => {
  for (const [code, e] of Object.entries(ERROR_CATALOGUE)) {
    expect(readme).toContain(`| ${e.status} | \`${code}\` | ${e.type} |`);
  }
});

test("every setting read by config.ts is in the README and .env.example", () => {
  const names = [...configSource.matchAll(/"((?:SERVICE|DATABASE)_[A-Z_]+)"/g)].map((m) => m[1]!);
  expect(names.length).toBeGreaterThan(10);
  for (const name of new Set(names)) {
    expect(readme).toContain(`\`${name}\``);
    expect(envExample).toContain(name);
  }
});

test("every variable the service or the example shop reads from the environment has a row in a README configuration table", () => {
  const sources = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") ? [join(dir, e.name)] : [],
    );
  const names = new Set(
    [resolve(root, "api/src"), resolve(root, "examples")]
      .flatMap(sources)
      .flatMap((file) => [...readFileSync(file, "utf8").matchAll(/process\.env(?:\.([A-Z][A-Z0-9_]+)|\[\s*"([A-Z][A-Z0-9_]+)"\s*\])/g)].map((m) => m[1] ?? m[2]!)),
  );
  expect(names).toContain("MERCHANT_EXAMPLE_PORT");
  const missing = [...names].filter((name) => !readme.includes(`\n| \`${name}\` |`));
  expect(missing).toEqual([]);
});
