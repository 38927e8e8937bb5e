import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveEncryptionKey, seal, unseal } from "./secrets.ts";

test("sealed secrets open only with the same key and the same endpoint id", () => {
  const key = randomBytes(32);
  const sealed = seal(key, "whsec_abc", "whe_1");
  expect(sealed).toMatch(/^v1\./);
  expect(sealed).not.toContain("whsec_abc");
  expect(unseal(key, sealed, "whe_1")).toBe("whsec_abc");
  expect(seal(key, "whsec_abc", "whe_1")).not.toBe(sealed); // fresh IV each time
  expect(() => unseal(key, sealed, "whe_2")).toThrow();
  expect(() => unseal(randomBytes(32), sealed, "whe_1")).toThrow();
  const parts = sealed.split(".");
  const flipped = Buffer.from(parts[3]!, "base64");
  flipped[0]! ^= 1;
  expect(() => unseal(key, [parts[0], parts[1], parts[2], flipped.toString("base64")].join("."), "whe_1")).toThrow();
  expect(() => unseal(key, "v0.a.b.c", "whe_1")).toThrow();
});

test("without SERVICE_ENCRYPTION_KEY a key is made once in the data dir (0600) and reused", () => {
  const dir = mkdtempSync(join(tmpdir(), "paysession-key-"));
  try {
    const first = resolveEncryptionKey(undefined, join(dir, "data"));
    expect(first.created).toBe(true);
    expect(first.key.length).toBe(32);
    expect(statSync(first.file!).mode & 0o777).toBe(0o600);
    const again = resolveEncryptionKey(undefined, join(dir, "data"));
    expect(again.created).toBe(false);
    expect(again.key.equals(first.key)).toBe(true);
    expect(readFileSync(first.file!, "utf8").trim()).toBe(first.key.toString("base64"));
    const configured = randomBytes(32);
    expect(resolveEncryptionKey(configured, join(dir, "data")).key.equals(configured)).toBe(true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
