/** The README and .env.example are part of the contract: they must name every error code and setting. */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
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
