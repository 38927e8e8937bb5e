/**
 * Standard Webhooks signing (https://www.standardwebhooks.com/), pure.
 *
 * A secret is `whsec_` + base64 of 24 random bytes (the form every Standard Webhooks
 * library accepts). The signed content is `${webhook-id}.${webhook-timestamp}.${body}`,
 * the key is the base64-decoded part after `whsec_`, and the header carries
 * `v1,<base64 HMAC-SHA256>`; during a secret rotation it carries one such signature per
 * valid secret, separated by spaces, and a receiver accepts the message if any matches.
 */
import { createHmac, randomBytes } from "node:crypto";

export const SECRET_PREFIX = "whsec_";
export const SECRET_BYTES = 24;

export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString("base64");
}

/** The HMAC key of a `whsec_…` secret; throws on anything else. */
export function secretKey(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error("not a whsec_ secret");
  const b64 = secret.slice(SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) throw new Error("not a whsec_ secret");
  const key = Buffer.from(b64, "base64");
  if (key.length < 16 || key.length > 64) throw new Error("not a whsec_ secret");
  return key;
}

/** `v1,<base64>` for one secret. */
export function signature(key: Buffer, id: string, timestampSeconds: number, body: string): string {
  return "v1," + createHmac("sha256", key).update(`${id}.${timestampSeconds}.${body}`).digest("base64");
}

/** The three Standard Webhooks headers for one attempt, signed with every key given (current first). */
export function webhookHeaders(keys: Buffer[], id: string, timestampSeconds: number, body: string): Record<string, string> {
  if (keys.length === 0) throw new Error("no signing key");
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": keys.map((k) => signature(k, id, timestampSeconds, body)).join(" "),
  };
}
