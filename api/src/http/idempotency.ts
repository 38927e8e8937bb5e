/**
 * Idempotency-Key on creating POSTs (docs/decisions.md, "Idempotency"), kept 24 hours.
 *
 * The key's row is inserted in the same transaction as the work it guards. A concurrent
 * duplicate therefore blocks on the unique key until the first commits, then finds the
 * stored response and replays it; if the first fails, its row vanishes with its rollback
 * and the duplicate does the work itself. Same key + different body → 422.
 *
 * A creation response holds a session token, so the stored response is sealed
 * (AES-256-GCM) with a key derived from the Idempotency-Key, which we store only hashed.
 * Both derivations are HMAC-SHA256 keyed with the service's secret (SERVICE_ENCRYPTION_KEY,
 * the key that seals webhook secrets), bound to the merchant, environment and purpose: an
 * Idempotency-Key is often an order id, easy to guess, and a plain hash of it would let a
 * database reader find the row and open the response (token included). Without the
 * service's secret neither is possible; with it, only a caller holding the key can have the
 * response replayed. The request hash is keyed the same way.
 *
 * Rows written before this (v1: plain SHA-256 derivations, response without a version
 * prefix) are still honoured for replay until they expire (24 h); see LEGACY below.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from "node:crypto";
import type { Sql, TransactionSql } from "postgres";
import { ApiError } from "../errors.ts";
import { arrayParam } from "../db/client.ts";
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

/** What a key's derivations are bound to: the service's secret, the merchant and environment. */
export interface IdempotencyContext extends IdempotencyScope {
  /** The service's secret (SERVICE_ENCRYPTION_KEY). */
  secret: Buffer;
}

type Purpose = "lookup" | "seal" | "request";
const derive = (ctx: Pick<IdempotencyContext, "secret" | "merchantId" | "environment">, purpose: Purpose, value: string) =>
  createHmac("sha256", ctx.secret).update(`paysession:idempotency:v2:${purpose}\0${ctx.merchantId}\0${ctx.environment}\0`).update(value).digest();

const SEALED_VERSION = "v2";

/** AES-256-GCM under a 32-byte key: `v2.<iv>.<tag>.<ciphertext>`, base64 parts. */
export function seal(key: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const ct = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return [SEALED_VERSION, ...[iv, cipher.getAuthTag(), ct].map((b) => b.toString("base64"))].join(".");
}

export function unseal(key: Buffer, sealed: string): string {
  const parts = sealed.split(".");
  if (parts[0] !== SEALED_VERSION || parts.length !== 4) throw new Error("unsupported sealed value");
  return open(key, parts.slice(1));
}

function open(key: Buffer, parts: string[]): string {
  const [iv, tag, ct] = parts.map((p) => Buffer.from(p, "base64")) as [Buffer, Buffer, Buffer];
  const decipher = createDecipheriv("aes-256-gcm", key, iv);
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(ct), decipher.final()]).toString("utf8");
}

/**
 * v1 rows (before the derivations were keyed): lookup hash and sealing key were SHA-256 of
 * the Idempotency-Key alone, the request hash unkeyed. They are read, never written, so a
 * retry that straddles the upgrade still replays instead of creating twice. They all expire
 * within IDEMPOTENCY_WINDOW_HOURS of the upgrade (and are purged); this can go after that.
 */
const LEGACY = {
  lookup: (key: string) => createHash("sha256").update("paysession:idempotency:lookup:").update(key).digest("hex"),
  open: (key: string, sealed: string) =>
    open(createHash("sha256").update("paysession:idempotency:seal:").update(key).digest(), sealed.split(".")),
};

export async function withIdempotency(
  sql: Sql,
  ctx: IdempotencyContext,
  key: string,
  hash: string,
  work: (tx: TransactionSql) => Promise<StoredResponse>,
): Promise<StoredResponse & { replayed: boolean }> {
  const scope = ctx;
  const keyHash = derive(ctx, "lookup", key).toString("hex");
  const legacyHash = LEGACY.lookup(key);
  const requestMac = derive(ctx, "request", hash).toString("hex");
  return sql.begin(async (tx) => {
    await tx`
      delete from app.idempotency_keys
       where merchant_id = ${scope.merchantId} and environment = ${scope.environment} and key_hash in (${keyHash}, ${legacyHash})
         and created_at < now() - make_interval(hours => ${IDEMPOTENCY_WINDOW_HOURS})`;
    // Not claimed while a v1 row of the same key lives: that row is the first request's.
    const claimed = await tx`
      insert into app.idempotency_keys (merchant_id, environment, key_hash, endpoint, request_hash, response_status, response_sealed)
      select ${scope.merchantId}, ${scope.environment}, ${keyHash}, ${scope.endpoint}, ${requestMac}, 0, ''
       where not exists (
         select 1 from app.idempotency_keys
          where merchant_id = ${scope.merchantId} and environment = ${scope.environment} and key_hash = ${legacyHash})
      on conflict do nothing
      returning 1`;
    if (claimed.length === 1) {
      const response = await work(tx);
      const sealed = seal(derive(ctx, "seal", key), JSON.stringify(response.body));
      await tx`
        update app.idempotency_keys
           set response_status = ${response.status}, response_sealed = ${sealed}
         where merchant_id = ${scope.merchantId} and environment = ${scope.environment} and key_hash = ${keyHash}`;
      return { ...response, replayed: false };
    }
    const [prior] = await tx`
      select key_hash, endpoint, request_hash, response_status, response_sealed from app.idempotency_keys
       where merchant_id = ${scope.merchantId} and environment = ${scope.environment} and key_hash in (${keyHash}, ${legacyHash})
       order by key_hash = ${keyHash} desc limit 1`;
    const legacy = prior?.key_hash === legacyHash;
    if (!prior || prior.endpoint !== scope.endpoint || prior.request_hash !== (legacy ? hash : requestMac)) {
      throw new ApiError("idempotency_key_reused", undefined, "Idempotency-Key");
    }
    const sealed = prior.response_sealed as string;
    const body = legacy ? LEGACY.open(key, sealed) : unseal(derive(ctx, "seal", key), sealed);
    return { status: prior.response_status as number, body: JSON.parse(body), replayed: true };
  });
}

/** One create's key in a group (idempotent-creates.ts): the same derivations as withIdempotency. */
export interface KeyClaim {
  ctx: IdempotencyContext;
  key: string;
  /** requestHash of the body. */
  hash: string;
}

/** The key's row. */
const keyRow = (c: KeyClaim) => ({ merchantId: c.ctx.merchantId, environment: c.ctx.environment, keyHash: derive(c.ctx, "lookup", c.key).toString("hex") });

/** What claiming it also needs: the endpoint, the v1 form of the key, the request's MAC. */
const claimRow = (c: KeyClaim) => ({
  ...keyRow(c),
  endpoint: c.ctx.endpoint,
  legacyHash: LEGACY.lookup(c.key),
  requestMac: derive(c.ctx, "request", c.hash).toString("hex"),
});

/**
 * withIdempotency's claim for many keys at once, in the caller's transaction: expired rows of
 * these keys go, then each key is claimed unless a row of it (or of its v1 form) lives. Returns,
 * in the order given, whether each was claimed. Claims are made in key-hash order, so two groups
 * claiming overlapping keys wait for each other instead of deadlocking. A key not claimed is
 * another request's (stored, or still being written): its request goes through withIdempotency,
 * which replays it or refuses it.
 */
export async function claimKeys(tx: TransactionSql, claims: KeyClaim[]): Promise<boolean[]> {
  const rows = claims.map(claimRow);
  const arr = (values: string[]) => arrayParam(tx, values);
  const col = (f: (r: (typeof rows)[number]) => string) => arr(rows.map(f));
  // Both forms of each key as rows of their own: an `in (a, b)` here would probe the primary key
  // by merchant and environment only and filter all their keys (≈ 20 ms per key at 20,000).
  const both = rows.flatMap((r) => [r, { ...r, keyHash: r.legacyHash }]);
  // Each key reached by one probe of the primary key (LATERAL, `offset 0`), and rows deleted by
  // their tuple ids: statements of the grouped creates keep one plan, which must be right at any
  // table size (shared/postgres-settings.ts, KEPT_PLANS; db/plans.test.ts).
  await tx`
    delete from app.idempotency_keys
     where ctid = any(array(
       select l.ctid
         from unnest(${arr(both.map((r) => r.merchantId))}, ${arr(both.map((r) => r.environment))}, ${arr(both.map((r) => r.keyHash))})
              as x(merchant_id, environment, key_hash)
        cross join lateral (
          select l.ctid from app.idempotency_keys l
           where l.merchant_id = x.merchant_id and l.environment = x.environment and l.key_hash = x.key_hash
             and l.created_at < now() - make_interval(hours => ${IDEMPOTENCY_WINDOW_HOURS})
          offset 0) l))`;
  const claimed = await tx`
    insert into app.idempotency_keys (merchant_id, environment, key_hash, endpoint, request_hash, response_status, response_sealed)
    select x.merchant_id, x.environment, x.key_hash, x.endpoint, x.request_hash, 0, ''
      from unnest(${col((r) => r.merchantId)}, ${col((r) => r.environment)}, ${col((r) => r.keyHash)}, ${col((r) => r.legacyHash)},
                  ${col((r) => r.endpoint)}, ${col((r) => r.requestMac)})
           as x(merchant_id, environment, key_hash, legacy_hash, endpoint, request_hash)
      left join lateral (
        select true as found from app.idempotency_keys l
         where l.merchant_id = x.merchant_id and l.environment = x.environment and l.key_hash = x.legacy_hash
        offset 0) legacy on true
     where legacy.found is null
     order by x.merchant_id, x.environment, x.key_hash
    on conflict do nothing
    returning merchant_id, environment, key_hash`;
  const won = new Set(claimed.map((r) => `${r.merchant_id}\0${r.environment}\0${r.key_hash}`));
  // Two requests of one group with the same key: the first claims it, the second goes the long way.
  const seen = new Set<string>();
  return rows.map((r) => {
    const id = `${r.merchantId}\0${r.environment}\0${r.keyHash}`;
    const mine = won.has(id) && !seen.has(id);
    seen.add(id);
    return mine;
  });
}

/** withIdempotency's last step for claimed keys, in the claiming transaction: the answers, sealed. */
export async function storeResponses(tx: TransactionSql, answered: { claim: KeyClaim; response: StoredResponse }[]): Promise<void> {
  if (answered.length === 0) return;
  const rows = answered.map(({ claim, response }) => ({
    ...keyRow(claim),
    status: String(response.status),
    sealed: seal(derive(claim.ctx, "seal", claim.key), JSON.stringify(response.body)),
  }));
  const col = (f: (r: (typeof rows)[number]) => string) => arrayParam(tx, rows.map(f));
  // The rows (claimed by this transaction) reached by one primary-key probe each and updated by
  // tuple id, each taking its values from the batch's arrays: one plan, right at any table size
  // (see claimKeys).
  await tx`
    update app.idempotency_keys k
       set (response_status, response_sealed) = (
             select x.status::int, x.sealed
               from unnest(${col((r) => r.merchantId)}, ${col((r) => r.environment)}, ${col((r) => r.keyHash)}, ${col((r) => r.status)}, ${col((r) => r.sealed)})
                    as x(merchant_id, environment, key_hash, status, sealed)
              where x.merchant_id = k.merchant_id and x.environment = k.environment and x.key_hash = k.key_hash)
     where k.ctid = any(array(
       select l.ctid
         from unnest(${col((r) => r.merchantId)}, ${col((r) => r.environment)}, ${col((r) => r.keyHash)}) as y(merchant_id, environment, key_hash)
        cross join lateral (
          select l.ctid from app.idempotency_keys l
           where l.merchant_id = y.merchant_id and l.environment = y.environment and l.key_hash = y.key_hash
          offset 0) l))`;
}

/** Housekeeping: forget keys older than the window. Safe to run anywhere, any time. */
export async function purgeExpiredIdempotencyKeys(sql: Sql): Promise<number> {
  const rows = await sql`
    delete from app.idempotency_keys where created_at < now() - make_interval(hours => ${IDEMPOTENCY_WINDOW_HOURS}) returning 1`;
  return rows.length;
}
