/**
 * Merchants and API keys in the database. A key's secret is returned once, by
 * createApiKey, and never again: only its hash and display prefix are stored.
 */
import { and, desc, eq, isNull } from "drizzle-orm";
import type { PendingQuery, Row, Sql, TransactionSql } from "postgres";
import { arrayParam, type Db } from "../db/client.ts";
import { Group } from "../db/group.ts";
import { apiKeys, merchants } from "../db/schema.ts";
import { ENVIRONMENTS, type Environment } from "../../../shared/environment.ts";
import { Type } from "@sinclair/typebox";
import { col, decodeFirst, decodeRow, decodeRows, rowShape, type RowOf } from "../db/rows.ts";
import { newId } from "../../../shared/ids.ts";
import { displayPrefix, hashSecret, mintCredential, newMerchantPublicId, sameHash } from "./format.ts";
import { recordSecurityEvent, type ChangedBy } from "./security-history.ts";
import { isScope, type KeyScopes, type Scope } from "./scopes.ts";

/** A merchant as the API and the dashboard carry it (its security settings are read where they apply: dashboard/logins.ts). */
export type Merchant = Omit<typeof merchants.$inferSelect, "requireTwoFactor">;

export interface ApiKeySummary {
  id: string;
  merchantId: string;
  environment: Environment;
  name: string;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  /** What the key may do (credentials/scopes.ts); null: full access. */
  scopes: KeyScopes;
  /** When the key stops working; null: never. */
  expiresAt: Date | null;
}

/** A new key's limits: scopes (null or left out: full access) and an expiry (null or left out: never). */
export interface KeyLimits {
  scopes?: KeyScopes;
  expiresAt?: Date | null;
}

/** On `db` or a transaction (a dashboard sign-up writes the merchant with its first user). */
export async function createMerchant(db: Pick<Db, "insert">, name: string): Promise<Merchant> {
  const [row] = await db
    .insert(merchants)
    .values({
      id: newId("merchant"),
      name,
      sandboxPublicId: newMerchantPublicId("sandbox"),
      livePublicId: newMerchantPublicId("production"),
    })
    .returning();
  return row!;
}

export async function findMerchant(db: Db, id: string): Promise<Merchant | undefined> {
  const [row] = await db.select().from(merchants).where(eq(merchants.id, id));
  return row;
}

export function publicMerchantId(m: Merchant, environment: Environment): string {
  return environment === "sandbox" ? m.sandboxPublicId : m.livePublicId;
}

/** Creates a key and returns its secret: the only time the secret exists outside the caller's hands. */
export async function createApiKey(
  db: Db,
  merchantId: string,
  environment: Environment,
  name: string,
  by?: ChangedBy,
  limits: KeyLimits = {},
): Promise<{ secret: string; key: ApiKeySummary }> {
  const secret = mintCredential("api_key", environment);
  // `by` (a person, from the dashboard): the key and its security-history line commit together.
  return db.transaction(async (tx) => {
    const [row] = await tx
      .insert(apiKeys)
      .values({
        id: newId("apiKey"),
        merchantId,
        environment,
        name,
        prefix: displayPrefix(secret),
        keyHash: hashSecret(secret),
        scopes: limits.scopes ? [...limits.scopes] : null,
        expiresAt: limits.expiresAt ?? null,
      })
      .returning();
    const key = summarize(row!);
    // The history says what the key may do, so a reader of it sees a full-access key being made.
    const restrictions = { scopes: key.scopes ?? "full access", expiresAt: key.expiresAt?.toISOString() ?? null };
    if (by) await recordSecurityEvent(tx, by.actor, "api_key_created", { keyId: key.id, name, prefix: key.prefix, ...restrictions, ...by.detail }, by.environment);
    return { secret, key };
  });
}

export async function listApiKeys(db: Db, merchantId: string): Promise<ApiKeySummary[]> {
  const rows = await db.select().from(apiKeys).where(eq(apiKeys.merchantId, merchantId)).orderBy(desc(apiKeys.createdAt));
  return rows.map(summarize);
}

/**
 * Revocation takes effect on the next request: every request looks its key up, but a plain
 * create, which may reuse an earlier lookup, checks the key in the statement that writes it.
 */
export async function revokeApiKey(db: Db, merchantId: string, keyId: string, by?: ChangedBy): Promise<ApiKeySummary | undefined> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .update(apiKeys)
      .set({ revokedAt: new Date() })
      .where(and(eq(apiKeys.id, keyId), eq(apiKeys.merchantId, merchantId), isNull(apiKeys.revokedAt)))
      .returning();
    if (!row) return undefined;
    const key = summarize(row);
    if (by) await recordSecurityEvent(tx, by.actor, "api_key_revoked", { keyId: key.id, name: key.name, prefix: key.prefix, ...by.detail }, by.environment);
    return key;
  });
}

/** Shared by the requests of a lookup batch that presented the same key (apiKeyLookups): read-only, and frozen. */
export interface KeyLookup {
  readonly key: Readonly<ApiKeySummary>;
  readonly merchant: Readonly<Merchant>;
  /** The merchant's settlement addresses in the key's environment, by chain id (read here to save a query per create). */
  readonly settlements: ReadonlyMap<number, string>;
  /** What a create checks again in its own statement (sessions/create/statement.ts): this key and these settlements. */
  readonly check: KeyCheck;
}

/**
 * A key as one lookup read it: its hash and id, and the merchant's settlement addresses in its
 * environment as settlementsOfKey wrote them. A create carries it to its statement, which writes
 * the session only if the key is still there unrevoked and the settlements are still these —
 * so a create can be prepared from an earlier lookup (credentials/key-memo.ts) and still never
 * be written with a revoked key or for a settlement address replaced meanwhile.
 */
export interface KeyCheck {
  readonly keyHash: string;
  readonly keyId: string;
  /** null: no settlement address set in that environment. */
  readonly settlements: string | null;
}

/**
 * The settlement addresses of the key `key` names in the statement (a row of app.api_keys, or
 * one with its merchant_id and environment) as one text, in chain order, in a subquery of one
 * row and one column, `settlements`, for a LATERAL join. The lookup and the create's check
 * (sessions/create/statement.ts) both take it from here, so equal texts mean the same
 * addresses (sessions/key-check.test.ts: a create is written while they are as read, and only then).
 */
export function settlementsOfKey(q: Sql | TransactionSql, key: string): PendingQuery<Row[]> {
  return q`(select json_object_agg(ms.chain_id, ms.address order by ms.chain_id)::text as settlements from app.merchant_settlements ms
             where ms.merchant_id = ${q(key)}.merchant_id and ms.environment = ${q(key)}.environment)`;
}

/**
 * The key and its merchant for a presented secret, or undefined when no key has that hash.
 * Runs on every authenticated request but creates and retrieves that reuse an earlier one: see lookupApiKeys.
 */
export async function lookupApiKey(db: Db, secret: string): Promise<KeyLookup | undefined> {
  return (await lookupApiKeys(db.$client, [hashSecret(secret)]))[0];
}

/**
 * The keys with these hashes (hashSecret), in the order asked; undefined where none. One
 * prepared raw statement for any count, not a drizzle query built anew each time: it runs on
 * nearly every authenticated request, grouped with the others waiting (apiKeyLookups), on connections
 * that keep one plan per statement (shared/postgres-settings.ts, KEPT_PLANS). So it is written
 * to have one plan only, right at any table size: for each hash asked, one probe of each
 * table's unique index (a LATERAL subquery per table, `offset 0` keeping it a probe per row
 * rather than a join the planner could turn into reading a table or an index whole).
 */
export async function lookupApiKeys(sql: Sql, hashes: string[]): Promise<(KeyLookup | undefined)[]> {
  const rows = await sql`
    select k.id, k.merchant_id, k.environment, k.name, k.prefix, k.key_hash, k.created_at, k.last_used_at, k.revoked_at, k.scopes, k.expires_at,
           m.name as merchant_name, m.sandbox_public_id, m.live_public_id, m.created_at as merchant_created_at, st.settlements
      from unnest(${arrayParam(sql, hashes)}) as h(key_hash)
      cross join lateral (select * from app.api_keys k where k.key_hash = h.key_hash offset 0) k
      cross join lateral (select * from app.merchants m where m.id = k.merchant_id offset 0) m
      cross join lateral ${settlementsOfKey(sql, "k")} st`;
  const byHash = new Map(decodeRows(LookupRow, rows).map((r) => [r.key_hash, r]));
  return hashes.map((hash) => {
    const row = byHash.get(hash);
    // The index probe already matched the hash; the constant-time check keeps it that way
    // should the lookup ever change to a prefix search.
    return row && sameHash(row.key_hash, hash) ? keyLookupFromRow(row) : undefined;
  });
}

/**
 * API-key lookups with group commit's read side (db/group.ts): the lookups of requests that
 * arrive while others are out go as one statement. Each request still reads the key after it
 * arrived — a batch leaves after its members joined it — so a revocation holds from the next
 * request on, as with a lookup of its own. (Plain creates may skip the lookup: their own
 * statement checks the key, see KeyCheck.)
 */
export function apiKeyLookups(sql: Sql): Group<string, KeyLookup | undefined> {
  return new Group<string, KeyLookup | undefined>(
    async (batch) => {
      // A merchant's server sends most of its requests with one key: each distinct key is asked
      // for once, and its members share the answer (read-only). Members are key hashes
      // (hashSecret), which the request computed already for its key memo (http/auth.ts).
      const hashes = [...new Set(batch.map((m) => m.item))];
      const found = await lookupApiKeys(sql, hashes);
      const byHash = new Map(hashes.map((hash, i) => [hash, found[i]]));
      for (const m of batch) m.resolve(byHash.get(m.item));
    },
    // Two out: with one (≈ 11 lookups a statement instead of ≈ 7.5) Postgres's CPU per create was
    // lower in one series of alternating runs and not in the next, and p99 was higher in both —
    // a lookup arriving while one is out waits for it (docs/decisions.md, "Tried and not kept").
    { maxBatch: 64, maxInFlight: 2, writes: false },
  );
}

/** A row of lookupApiKeys's statement: the key, its merchant, and the settlements as settlementsOfKey wrote them. */
const LookupRow = rowShape("API key lookup", {
  id: col.text,
  merchant_id: col.text,
  environment: col.oneOf(ENVIRONMENTS),
  name: col.text,
  prefix: col.text,
  key_hash: col.text,
  created_at: col.time,
  last_used_at: col.nullable(col.time),
  revoked_at: col.nullable(col.time),
  scopes: col.nullable(Type.Array(Type.String())),
  expires_at: col.nullable(col.time),
  merchant_name: col.text,
  sandbox_public_id: col.text,
  live_public_id: col.text,
  merchant_created_at: col.time,
  settlements: col.nullable(col.text),
});

/** settlementsOfKey's json object: chain id → address. */
const SettlementsText = rowShape("settlements text", { settlements: col.json(Type.Record(Type.String(), Type.String())) });

function keyLookupFromRow(row: RowOf<typeof LookupRow>): KeyLookup {
  // Kept as text too (check.settlements): a create compares it, text to text, in its statement.
  const settlements = row.settlements === null ? {} : decodeRow(SettlementsText, { settlements: row.settlements }).settlements;
  return Object.freeze({
    key: Object.freeze({
      id: row.id,
      merchantId: row.merchant_id,
      environment: row.environment,
      name: row.name,
      prefix: row.prefix,
      createdAt: row.created_at,
      lastUsedAt: row.last_used_at,
      revokedAt: row.revoked_at,
      scopes: scopesOf(row.scopes),
      expiresAt: row.expires_at,
    }),
    merchant: Object.freeze({
      id: row.merchant_id,
      name: row.merchant_name,
      sandboxPublicId: row.sandbox_public_id,
      livePublicId: row.live_public_id,
      createdAt: row.merchant_created_at,
    }),
    settlements: new Map(Object.entries(settlements).map(([k, v]) => [Number(k), v])),
    check: Object.freeze({ keyHash: row.key_hash, keyId: row.id, settlements: row.settlements }),
  });
}

export async function touchApiKey(db: Db, keyId: string, at: Date): Promise<void> {
  await db.update(apiKeys).set({ lastUsedAt: at }).where(eq(apiKeys.id, keyId));
}

/** A stored environment (the table's check constraint allows only these two). */
function environmentOf(text: string): Environment {
  const environment = ENVIRONMENTS.find((e) => e === text);
  if (!environment) throw new RangeError(`not an environment: ${text}`);
  return environment;
}

function summarize(row: typeof apiKeys.$inferSelect): ApiKeySummary {
  return {
    id: row.id,
    merchantId: row.merchantId,
    environment: environmentOf(row.environment),
    name: row.name,
    prefix: row.prefix,
    createdAt: row.createdAt,
    lastUsedAt: row.lastUsedAt,
    revokedAt: row.revokedAt,
    scopes: scopesOf(row.scopes),
    expiresAt: row.expiresAt,
  };
}

/**
 * Stored scopes, frozen. A name the catalogue no longer has is dropped, not kept: the key loses
 * what that scope gave rather than a request failing on it (null stays full access).
 */
function scopesOf(stored: string[] | null): KeyScopes {
  return stored === null ? null : Object.freeze(stored.filter((s): s is Scope => isScope(s)));
}

/**
 * A merchant and its settlement addresses in one environment, read as a key lookup reads them —
 * for a create no API key makes (a payment link's page: payment-links/start.ts), which checks
 * the settlements text again in its own transaction, as a keyed create's statement does.
 */
export async function merchantForCreate(
  sql: Sql | TransactionSql,
  merchantId: string,
  environment: Environment,
): Promise<{ merchant: Merchant; settlements: ReadonlyMap<number, string>; settlementsText: string | null } | undefined> {
  const rows = await sql`
    select m.id, m.name, m.sandbox_public_id, m.live_public_id, m.created_at, st.settlements
      from app.merchants m
      cross join lateral (select m.id as merchant_id, ${environment}::text as environment) k
      cross join lateral ${settlementsOfKey(sql, "k")} st
     where m.id = ${merchantId}`;
  const r = decodeFirst(MerchantForCreate, rows);
  if (!r) return undefined;
  const settlements = r.settlements === null ? {} : decodeRow(SettlementsText, { settlements: r.settlements }).settlements;
  return {
    merchant: { id: r.id, name: r.name, sandboxPublicId: r.sandbox_public_id, livePublicId: r.live_public_id, createdAt: r.created_at },
    settlements: new Map(Object.entries(settlements).map(([k, v]) => [Number(k), v])),
    settlementsText: r.settlements,
  };
}

/** The settlements text settlementsOfKey makes for a merchant and environment, read inside a create's transaction. */
export async function settlementsTextOf(sql: Sql | TransactionSql, merchantId: string, environment: Environment): Promise<string | null> {
  const rows = await sql`
    select st.settlements from (select ${merchantId}::text as merchant_id, ${environment}::text as environment) k
      cross join lateral ${settlementsOfKey(sql, "k")} st`;
  return decodeFirst(SettlementsOnly, rows)?.settlements ?? null;
}

const MerchantForCreate = rowShape("merchant for a create", {
  id: col.text,
  name: col.text,
  sandbox_public_id: col.text,
  live_public_id: col.text,
  created_at: col.time,
  settlements: col.nullable(col.text),
});
const SettlementsOnly = rowShape("settlements", { settlements: col.nullable(col.text) });
