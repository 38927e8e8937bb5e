/**
 * The one seal: AES-256-GCM for what the service must read back but never keep or hand out in
 * clear — webhook signing secrets (webhooks/secrets.ts), Idempotency-Key records
 * (credentials/idempotency-keys.ts) and the dashboard's flash cookie (dashboard/flash.ts). Each
 * caller brings its key (the service's encryption key, or one derived from it) and its format.
 *
 * A sealed value is text, `<label>.<iv>.<tag>.<ciphertext>`, each part standard padded base64: a
 * 12-byte IV drawn fresh for every seal, the 16-byte GCM tag, then the ciphertext of the UTF-8
 * plaintext. The label names what a reader must expect (`v1` for webhook secrets and flash cookies,
 * `v2` for idempotency records). It is not sealed itself (the first values were written so): what
 * keeps one use's values from opening as another's is its key and its associated data. Values in
 * this form are already stored and already in browsers, so the form stays exactly as it is; a
 * change would be a new label, read beside the old one.
 *
 * Pure: no I/O, nothing kept; the only thing it draws is the IV.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/** How a value is sealed, and therefore how it must be opened. */
export interface SealFormat {
  /**
   * Written before the parts and required on opening. `null` opens only the idempotency records
   * written before labels (`<iv>.<tag>.<ciphertext>`); nothing is sealed without one.
   */
  label: string | null;
  /**
   * What the value belongs to (GCM associated data, not stored): it opens only with the same, so
   * a sealed value copied to another row or another signed-in session does not open.
   */
  aad?: string;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;
const CIPHER = "aes-256-gcm";

/** Seals `plaintext` under a 32-byte key; a fresh IV each time, so the same text never seals alike. */
export function seal(key: Buffer, plaintext: string, format: SealFormat & { label: string }): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(CIPHER, key, iv, { authTagLength: TAG_BYTES });
  if (format.aad !== undefined) cipher.setAAD(Buffer.from(format.aad, "utf8"));
  const ct = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return [format.label, ...[iv, cipher.getAuthTag(), ct].map((b) => b.toString("base64"))].join(".");
}

/**
 * The plaintext of a value sealed under `key` in `format`. Throws when it was sealed under another
 * key, label or associated data, was altered in any bit, or is not in the form at all.
 */
export function unseal(key: Buffer, sealed: string, format: SealFormat): string {
  const parts = sealed.split(".");
  const labelled = format.label !== null;
  if (parts.length !== (labelled ? 4 : 3) || (labelled && parts[0] !== format.label)) throw new Error("unsupported sealed value");
  const [iv, tag, ct] = parts.slice(labelled ? 1 : 0).map((p) => Buffer.from(p, "base64")) as [Buffer, Buffer, Buffer];
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new Error("unsupported sealed value");
  const decipher = createDecipheriv(CIPHER, key, iv, { authTagLength: TAG_BYTES });
  if (format.aad !== undefined) decipher.setAAD(Buffer.from(format.aad, "utf8"));
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(ct), decipher.final()]).toString("utf8");
}
