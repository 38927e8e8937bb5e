/**
 * The Idempotency-Key header of creating POSTs (docs/decisions.md, "Idempotency"): its shape, and
 * the hash of the body it must be sent with again. What is stored for a key: credentials/idempotency-keys.ts.
 */
import { createHash } from "node:crypto";
import { ApiError } from "../errors.ts";

const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;

/** undefined when the header is absent; a 400 when present but unusable. */
export function readIdempotencyKey(headers: Headers): string | undefined {
  const raw = headers.get("idempotency-key");
  if (raw === null) return undefined;
  if (!KEY_SHAPE.test(raw)) throw new ApiError("idempotency_key_invalid", undefined, "Idempotency-Key");
  return raw;
}

/** Canonical JSON (keys sorted at every depth), so `{"a":1,"b":2}` and `{"b":2,"a":1}` match. */
export function requestHash(body: unknown): string {
  return createHash("sha256").update(canonical(body)).digest("hex");
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v && typeof v === "object") {
    const entries = Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonical(x)}`).join(",")}}`;
  }
  return JSON.stringify(v);
}
