import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveEncryptionKey } from "./encryption-key.ts";

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
