/**
 * Webhook secrets at rest. A merchant may ask to see an endpoint's secret again, so it
 * cannot be stored as a hash; it is sealed with AES-256-GCM under the service's
 * encryption key (SERVICE_ENCRYPTION_KEY), with the endpoint id as associated data, so a
 * sealed value copied onto another endpoint's row does not open. Format:
 * `v1.<iv>.<tag>.<ciphertext>`, base64 parts.
 *
 * Without SERVICE_ENCRYPTION_KEY (development), a key is made once and kept in
 * `<data dir>/encryption.key` (mode 0600). Production must set the variable: a key that
 * lives next to the database it protects protects little, and losing it loses every
 * endpoint's secret (they would have to be rotated).
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { parseEncryptionKey } from "../config.ts";

const VERSION = "v1";

export function seal(key: Buffer, plaintext: string, aad: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(aad, "utf8"));
  const ct = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return [VERSION, iv.toString("base64"), cipher.getAuthTag().toString("base64"), ct.toString("base64")].join(".");
}

/** Throws when the value was not sealed under this key for this `aad`, or was altered. */
export function unseal(key: Buffer, sealed: string, aad: string): string {
  const [version, iv, tag, ct] = sealed.split(".");
  if (version !== VERSION || !iv || !tag || ct === undefined) throw new Error("unsupported sealed value");
  const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64"));
  decipher.setAAD(Buffer.from(aad, "utf8"));
  decipher.setAuthTag(Buffer.from(tag, "base64"));
  return Buffer.concat([decipher.update(Buffer.from(ct, "base64")), decipher.final()]).toString("utf8");
}

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
