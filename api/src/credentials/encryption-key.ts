/**
 * The service's encryption key (SERVICE_ENCRYPTION_KEY): what the one seal (seal.ts) closes
 * webhook secrets, Idempotency-Key records and the dashboard's flash cookie under, directly or
 * through a key derived from it.
 *
 * Without SERVICE_ENCRYPTION_KEY (development), a key is made once and kept in
 * `<data dir>/encryption.key` (mode 0600). Production must set the variable: a key that
 * lives next to the database it protects protects little, and losing it loses every
 * endpoint's secret (they would have to be rotated).
 */
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { parseEncryptionKey } from "../config.ts";

export const ENCRYPTION_KEY_FILE = "encryption.key";

/**
 * The configured key, or (development) the one in `<dataDir>/encryption.key`, made on
 * first use. `created` tells the caller to say so in the log.
 */
export function resolveEncryptionKey(configured: Buffer | undefined, dataDir: string): { key: Buffer; source: "env" | "file"; created: boolean; file?: string } {
  if (configured) return { key: configured, source: "env", created: false };
  const file = join(dataDir, ENCRYPTION_KEY_FILE);
  if (existsSync(file)) {
    const key = parseEncryptionKey(readFileSync(file, "utf8").trim());
    if (!key) throw new Error(`${file} does not hold a 32-byte key (base64); remove it only if no webhook endpoint exists yet`);
    return { key, source: "file", created: false, file };
  }
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, randomBytes(32).toString("base64") + "\n", { mode: 0o600, flag: "wx" });
  chmodSync(file, 0o600);
  return { key: parseEncryptionKey(readFileSync(file, "utf8").trim())!, source: "file", created: true, file };
}
