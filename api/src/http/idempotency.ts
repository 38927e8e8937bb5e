/**
 * Idempotency-Key on creating POSTs (DESIGN.md §8), kept 24 hours.
 *
 * The key's row is inserted in the same transaction as the work it guards. A concurrent
 * duplicate therefore blocks on the unique key until the first commits, then finds the
 * stored response and replays it; if the first fails, its row vanishes with its rollback
 * and the duplicate does the work itself. Same key + different body → 422.
 *
 * A creation response holds a session token, so the stored response is sealed
 * (AES-256-GCM) with a key derived from the Idempotency-Key, which we store only hashed:
 * only a caller holding the key can have the response replayed or read.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import type { Sql, TransactionSql } from "postgres";
import { ApiError } from "../errors.ts";
import type { Environment } from "../../../shared/environment.ts";

export const IDEMPOTENCY_WINDOW_HOURS = 24;
const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;

export interface IdempotencyScope {
  merchantId: string;
  environment: Environment;
  endpoint: string;
}

export interface StoredResponse {
  status: number;
  body: unknown;
}

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

const derive = (purpose: string, key: string) => createHash("sha256").update(`paysession:idempotency:${purpose}:`).update(key).digest();

export function seal(key: string, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", derive("seal", key), iv);
  const ct = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return [iv, cipher.getAuthTag(), ct].map((b) => b.toString("base64")).join(".");
}

export function unseal(key: string, sealed: string): string {
  const [iv, tag, ct] = sealed.split(".").map((p) => Buffer.from(p, "base64")) as [Buffer, Buffer, Buffer];
  const decipher = createDecipheriv("aes-256-gcm", derive("seal", key), iv);
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(ct), decipher.final()]).toString("utf8");
}

export async function withIdempotency(
  sql: Sql,
  scope: IdempotencyScope,
  key: string,
  hash: string,
  work: (tx: TransactionSql) => Promise<StoredResponse>,
): Promise<StoredResponse & { replayed: boolean }> {
  const keyHash = derive("lookup", key).toString("hex");
  return sql.begin(async (tx) => {
    await tx`
      delete from app.idempotency_keys
       where merchant_id = ${scope.merchantId} and environment = ${scope.environment} and key_hash = ${keyHash}
         and created_at < now() - make_interval(hours => ${IDEMPOTENCY_WINDOW_HOURS})`;
    const claimed = await tx`
      insert into app.idempotency_keys (merchant_id, environment, key_hash, endpoint, request_hash, response_status, response_sealed)
      values (${scope.merchantId}, ${scope.environment}, ${keyHash}, ${scope.endpoint}, ${hash}, 0, '')
      on conflict do nothing
      returning 1`;
    if (claimed.length === 1) {
      const response = await work(tx);
      await tx`
        update app.idempotency_keys
           set response_status = ${response.status}, response_sealed = ${seal(key, JSON.stringify(response.body))}
         where merchant_id = ${scope.merchantId} and environment = ${scope.environment} and key_hash = ${keyHash}`;
      return { ...response, replayed: false };
    }
    const [prior] = await tx`
      select endpoint, request_hash, response_status, response_sealed from app.idempotency_keys
       where merchant_id = ${scope.merchantId} and environment = ${scope.environment} and key_hash = ${keyHash}`;
    if (!prior || prior.endpoint !== scope.endpoint || prior.request_hash !== hash) {
      throw new ApiError("idempotency_key_reused", undefined, "Idempotency-Key");
    }
    return { status: prior.response_status as number, body: JSON.parse(unseal(key, prior.response_sealed as string)), replayed: true };
  });
}

/** Housekeeping: forget keys older than the window. Safe to run anywhere, any time. */
export async function purgeExpiredIdempotencyKeys(sql: Sql): Promise<number> {
  const rows = await sql`
    delete from app.idempotency_keys where created_at < now() - make_interval(hours => ${IDEMPOTENCY_WINDOW_HOURS}) returning 1`;
  return rows.length;
}
