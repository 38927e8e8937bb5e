/**
 * Idempotency-Key records (app.idempotency_keys; docs/decisions.md, "Idempotency"), kept 24 hours.
 * The header itself is read in http/idempotency.ts. The records sit with the credentials: like an
 * API key, an Idempotency-Key is a caller's value kept only as a keyed hash, beside the seal that
 * guards what it replays.
 *
 * Two ways to hold a key:
 * - Creates (sessions/create/): the key's row is one more part of the create's own single
 *   statement (createClaim gives its columns; sessions/create/statement.ts), holding not the
 *   answer but the session's id and token, sealed; a retry rebuilds the first answer from the
 *   session as it was created (readRecord, then sessions/create/answer.ts).
 * - Other creating POSTs (webhook endpoints): withIdempotency, below.
 *
 * In withIdempotency the key's row is inserted in the same transaction as the work it guards. A concurrent
 * duplicate therefore blocks on the unique key until the first commits, then finds the
 * stored response and replays it; if the first fails, its row vanishes with its rollback
 * and the duplicate does the work itself. Same key + different body → 422.
 *
 * A creation response holds a session token, so the stored response is sealed (AES-256-GCM,
 * credentials/seal.ts) with a key derived from the Idempotency-Key, which we store only hashed.
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
import { createHash, createHmac } from "node:crypto";
import type { Sql, TransactionSql } from "postgres";
import { ApiError } from "../errors.ts";
import type { Environment } from "../../../shared/environment.ts";
import { Type } from "@sinclair/typebox";
import { col, decodeFirst, decodeRow, rowShape } from "../db/rows.ts";
import { seal, unseal, type SealFormat } from "./seal.ts";

export const IDEMPOTENCY_WINDOW_HOURS = 24;

export interface IdempotencyScope {
  merchantId: string;
  environment: Environment;
  endpoint: string;
}

export interface StoredResponse {
  status: number;
  body: unknown;
}

/** What a key's derivations are bound to: the service's secret, the merchant and environment. */
export interface IdempotencyContext extends IdempotencyScope {
  /** The service's secret (SERVICE_ENCRYPTION_KEY). */
  secret: Buffer;
}

type Purpose = "lookup" | "seal" | "request";
const derive = (ctx: Pick<IdempotencyContext, "secret" | "merchantId" | "environment">, purpose: Purpose, value: string) =>
  createHmac("sha256", ctx.secret).update(`paysession:idempotency:v2:${purpose}\0${ctx.merchantId}\0${ctx.environment}\0`).update(value).digest();

/** How a record's response is sealed (credentials/seal.ts): `v2.<iv>.<tag>.<ciphertext>`, under its key's derived sealing key. */
export const RECORD_SEAL = { label: "v2" } as const satisfies SealFormat;

/**
 * v1 rows (before the derivations were keyed): lookup hash and sealing key were SHA-256 of
 * the Idempotency-Key alone, the request hash unkeyed. They are read, never written, so a
 * retry that straddles the upgrade still replays instead of creating twice. They all expire
 * within IDEMPOTENCY_WINDOW_HOURS of the upgrade (and are purged); this can go after that.
 */
const LEGACY = {
  lookup: (key: string) => createHash("sha256").update("paysession:idempotency:lookup:").update(key).digest("hex"),
  /** Its response sealed without a label: `<iv>.<tag>.<ciphertext>`. */
  open: (key: string, sealed: string) => unseal(createHash("sha256").update("paysession:idempotency:seal:").update(key).digest(), sealed, { label: null }),
};

/** The response a record holds, opened with the key's sealing key (v1: its unkeyed one). Throws when it does not open. */
export function openSealedResponse({ ctx, key }: Pick<KeyClaim, "ctx" | "key">, sealed: string, legacy = false): string {
  return legacy ? LEGACY.open(key, sealed) : unseal(derive(ctx, "seal", key), sealed, RECORD_SEAL);
}

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
      const sealed = seal(derive(ctx, "seal", key), JSON.stringify(response.body), RECORD_SEAL);
      await tx`
        update app.idempotency_keys
           set response_status = ${response.status}, response_sealed = ${sealed}
         where merchant_id = ${scope.merchantId} and environment = ${scope.environment} and key_hash = ${keyHash}`;
      return { ...response, replayed: false };
    }
    const prior = await readPrior(tx, ctx, key, keyHash, legacyHash);
    if (!prior || prior.endpoint !== scope.endpoint || prior.requestMac !== (prior.legacy ? hash : requestMac)) {
      throw new ApiError("idempotency_key_reused", undefined, "Idempotency-Key");
    }
    return { status: prior.status, body: JSON.parse(prior.opened), replayed: true };
  });
}

const PriorRow = rowShape("idempotency key's record", {
  key_hash: col.text,
  endpoint: col.text,
  request_hash: col.text,
  response_status: col.int,
  response_sealed: col.text,
  expired: col.bool,
});

/** The live or expired record of a key (or of its v1 form), opened. */
async function readPrior(q: Sql | TransactionSql, ctx: IdempotencyContext, key: string, keyHash: string, legacyHash: string) {
  const row = decodeFirst(
    PriorRow,
    await q`
      select key_hash, endpoint, request_hash, response_status, response_sealed,
             created_at < now() - make_interval(hours => ${IDEMPOTENCY_WINDOW_HOURS}) as expired
        from app.idempotency_keys
       where merchant_id = ${ctx.merchantId} and environment = ${ctx.environment} and key_hash in (${keyHash}, ${legacyHash})
       order by key_hash = ${keyHash} desc limit 1`,
  );
  if (!row) return undefined;
  const legacy = row.key_hash === legacyHash;
  return {
    legacy,
    expired: row.expired,
    endpoint: row.endpoint,
    requestMac: row.request_hash,
    status: row.response_status,
    opened: openSealedResponse({ ctx, key }, row.response_sealed, legacy),
  };
}

/** A create's Idempotency-Key: whose, for which route, and the hash of its body (http/idempotency.ts requestHash). */
export interface KeyClaim {
  ctx: IdempotencyContext;
  key: string;
  hash: string;
}

/** What a create's statement writes to hold its key: the row's columns, derived and sealed here. */
export interface ClaimColumns {
  keyHash: string;
  /** The v1 form of the key: a live row of it is the first request's, so the key is not claimed. */
  legacyHash: string;
  endpoint: string;
  requestMac: string;
  /** The session's id and token, sealed: what a retry rebuilds the first answer from. */
  sealed: string;
}

/** Marks a record that holds a created session rather than a whole answer. */
const CREATED = "paysession:created-session";
const CreatedRecord = rowShape("idempotency record of a create", { [CREATED]: Type.Object({ sessionId: Type.String(), token: Type.String() }) });

export function createClaim(claim: KeyClaim, created: { sessionId: string; token: string }): ClaimColumns {
  const { ctx, key, hash } = claim;
  return {
    keyHash: derive(ctx, "lookup", key).toString("hex"),
    legacyHash: LEGACY.lookup(key),
    endpoint: ctx.endpoint,
    requestMac: derive(ctx, "request", hash).toString("hex"),
    sealed: seal(derive(ctx, "seal", key), JSON.stringify({ [CREATED]: created }), RECORD_SEAL),
  };
}

/**
 * What is recorded for a create's key, read when its create could not claim it: `none` (gone
 * meanwhile: claim it again), `expired` (older than the window: forget it with forgetExpired, then
 * claim it), `reused` (another route's, or another body's: 422), or the first request's outcome —
 * a created session (its id and token) or, for records written by builds that stored whole
 * answers, that answer.
 */
export type KeyRecord =
  | { kind: "none" | "expired" | "reused" }
  | { kind: "created"; sessionId: string; token: string }
  | { kind: "answer"; response: StoredResponse };

export async function readRecord(sql: Sql, claim: KeyClaim): Promise<KeyRecord> {
  const { ctx, key, hash } = claim;
  const prior = await readPrior(sql, ctx, key, derive(ctx, "lookup", key).toString("hex"), LEGACY.lookup(key));
  if (!prior) return { kind: "none" };
  if (prior.expired) return { kind: "expired" };
  if (prior.endpoint !== ctx.endpoint || prior.requestMac !== (prior.legacy ? hash : derive(ctx, "request", hash).toString("hex"))) return { kind: "reused" };
  const body: unknown = JSON.parse(prior.opened);
  const created = CreatedRecord.check.Check(body) ? decodeRow(CreatedRecord, body)[CREATED] : undefined;
  if (created) return { kind: "created", ...created };
  return { kind: "answer", response: { status: prior.status, body } };
}

/** Forgets the key's record if it is older than the window (readRecord said `expired`). */
export async function forgetExpired(sql: Sql, claim: KeyClaim): Promise<void> {
  const { ctx, key } = claim;
  await sql`
    delete from app.idempotency_keys
     where merchant_id = ${ctx.merchantId} and environment = ${ctx.environment}
       and key_hash in (${derive(ctx, "lookup", key).toString("hex")}, ${LEGACY.lookup(key)})
       and created_at < now() - make_interval(hours => ${IDEMPOTENCY_WINDOW_HOURS})`;
}

/** Housekeeping: forget keys older than the window. Safe to run anywhere, any time. */
export async function purgeExpiredIdempotencyKeys(sql: Sql): Promise<number> {
  const rows = await sql`
    delete from app.idempotency_keys where created_at < now() - make_interval(hours => ${IDEMPOTENCY_WINDOW_HOURS}) returning 1`;
  return rows.length;
}
