/**
 * The create statement: one SQL statement writes a batch of creates (group commit: group.ts) —
 * each session with its deposit addresses, its EIP-3009 nonce, its first event, that event's webhook deliveries and,
 * for a create sent with an Idempotency-Key, the key's record — so one round trip and one commit
 * for all of them. The statement has one shape whatever the batch holds (the rows travel as
 * arrays, so its text is the same for any count and it is prepared once); a create without a
 * key or without a key check has nulls in those columns.
 *
 * Each create is written only if, in this statement's snapshot:
 * 1. **its API key still holds** — the lookup it was prepared from (credentials/store.ts KeyCheck,
 *    possibly this process's last one: credentials/key-memo.ts) names a key still there,
 *    unrevoked, its merchant's in its environment, and the merchant's settlement addresses in that
 *    environment are still the ones that lookup read (its deposit addresses commit to them);
 * 2. **its Idempotency-Key is free** — no record of it (or of its v1 form) lives; the record is
 *    inserted by this statement (`on conflict do nothing`: a concurrent holder is waited for).
 * Otherwise nothing of it is written and its answer says which: `key_changed` (look the key up
 * again and prepare anew) or `idempotency_key_taken` (credentials/idempotency-keys.ts readRecord says
 * what the first request got). Each distinct key check is made once per batch: one probe of the
 * keys' unique index and one of the settlements' primary key.
 *
 * The database clock is the one clock: created_at, expires_at and the token's expiry come from
 * the same now(). Only what the database decides comes back (the id, created_at, metadata as
 * jsonb stores it); the rest of each row is what was written (createdRow). Returning whole rows
 * cost the batch ≈ 20 µs a create in this process while the next batch waits (bench/api-create.ts).
 */
import { Type } from "@sinclair/typebox";
import type { Sql, TransactionSql } from "postgres";
import type { Environment } from "../../../../shared/environment.ts";
import { newId } from "../../../../shared/ids.ts";
import { arrayParam } from "../../db/client.ts";
import type { ClaimColumns } from "../../credentials/idempotency-keys.ts";
import { col, decodeRows, rowShape } from "../../db/rows.ts";
import { hashSecret, mintCredential } from "../../credentials/format.ts";
import { settlementsOfKey, type KeyCheck } from "../../credentials/store.ts";
import { newSessionDeliveries } from "../../effects/webhook-outbox.ts";
import type { PlannedDeposit } from "../deposits.ts";
import type { AcceptedToken } from "../../db/schema.ts";
import type { SessionRow } from "../views.ts";
import type { CreateSessionInput } from "./input.ts";
import { authorizationNonce } from "../../../../shared/contracts/eip3009.ts";

export interface NewSession {
  id: string;
  merchantId: string;
  environment: Environment;
  input: CreateSessionInput;
  tokenGraceSeconds: number;
  deposits: PlannedDeposit[];
  /** The session token in clear (minted by the caller: a keyed create seals it into its key's record) and its hash. */
  token: { clear: string; hash: string };
  /** The key lookup the create was prepared from: written only if it still holds. Absent: no check (tests, benches). */
  keyCheck?: KeyCheck;
  /** The Idempotency-Key's record (credentials/idempotency-keys.ts createClaim): written only if the key is free. */
  claim?: ClaimColumns;
  /** The payment link whose page starts it (payment-links/start.ts); absent for the API's creates. */
  paymentLinkId?: string;
}

/** Written: the session as stored. Not written: why. */
export type CreateOutcome = { written: true; row: SessionRow } | { written: false; why: "key_changed" | "idempotency_key_taken" };

const Written = rowShape("create statement", {
  id: col.text,
  key_ok: col.bool,
  claimed: col.bool,
  // null when the create was not written
  created_at: col.nullable(col.time),
  metadata: col.nullable(col.json(Type.Record(Type.String(), Type.String()))),
});

export async function insertSessions(q: Sql | TransactionSql, asked: NewSession[]): Promise<CreateOutcome[]> {
  // Two creates of one batch with the same Idempotency-Key: the first is sent, the second is
  // answered as one that found the key taken (it then waits for, and replays, the first).
  const keys = new Set<string>();
  const list = asked.filter((a) => {
    if (!a.claim) return true;
    const k = `${a.merchantId} ${a.environment} ${a.claim.keyHash}`;
    return !keys.has(k) && keys.add(k);
  });
  if (list.length === 0) return asked.map(() => ({ written: false, why: "idempotency_key_taken" }));
  // The batch's distinct key checks (a merchant's server sends most creates with one key), each
  // with the merchant and environment its key must belong to; each create's number in that list.
  const checks: (KeyCheck & { merchantId: string; environment: string })[] = [];
  const checkNumbers = new Map<string, number>();
  const checkNo = list.map((a) => {
    const c = a.keyCheck;
    if (!c) return null;
    const k = `${c.keyHash} ${c.keyId} ${a.merchantId} ${a.environment} ${c.settlements}`;
    let n = checkNumbers.get(k);
    if (n === undefined) checkNumbers.set(k, (n = checks.push({ ...c, merchantId: a.merchantId, environment: a.environment })));
    return n;
  });
  const arr = (type: Parameters<typeof arrayParam>[2], values: (string | number | null)[]) => arrayParam(q, values, type);
  const each = <T extends string | number | null>(f: (a: NewSession) => T) => list.map(f);
  const check = <T extends string | null>(f: (c: (typeof checks)[number]) => T) => checks.map(f);
  const claim = (f: (c: ClaimColumns) => string) => list.map((a) => (a.claim ? f(a.claim) : null));
  const deposits = list.flatMap((a) => a.deposits.map((d) => ({ sessionId: a.id, d })));
  const dep = <T extends string | number>(f: (d: PlannedDeposit) => T) => deposits.map((x) => f(x.d));
  const deliveries = newSessionDeliveries(q, "e");
  const rows = await q`
    with c as (
      -- 1. Each distinct key check: the key still there, unrevoked, its merchant's in its environment, the settlements unchanged.
      select c.n, coalesce(k.id = c.key_id and k.revoked_at is null and k.merchant_id = c.merchant_id and k.environment = c.environment, false)
                  and st.settlements is not distinct from c.settlements as ok
        from unnest(${arr("text", check((c) => c.keyHash))}, ${arr("text", check((c) => c.keyId))}, ${arr("text", check((c) => c.merchantId))},
                    ${arr("text", check((c) => c.environment))}, ${arr("text", check((c) => c.settlements))})
             with ordinality as c(key_hash, key_id, merchant_id, environment, settlements, n)
        left join lateral (select k.id, k.merchant_id, k.environment, k.revoked_at from app.api_keys k where k.key_hash = c.key_hash offset 0) k on true
        left join lateral ${settlementsOfKey(q, "k")} st on true
    ), asked as (
      select a.*, a.check_no is null or exists (select from c where c.n = a.check_no and c.ok) as key_ok
        from unnest(
          ${arr("text", each((a) => a.id))}, ${arr("text", each((a) => a.merchantId))}, ${arr("text", each((a) => a.environment))},
          ${arr("bigint", each((a) => a.input.amountMinor.toString()))}, ${arr("text", each((a) => a.input.currency))},
          ${arr("text", each((a) => a.input.referenceId))}, ${arr("jsonb", each((a) => JSON.stringify(a.input.metadata)))},
          ${arr("int", each((a) => a.input.expiresInSeconds))}, ${arr("int", each((a) => a.input.expiresInSeconds + a.tokenGraceSeconds))},
          ${arr("text", each((a) => a.token.hash))}, ${arr("text", each(() => newId("event")))}, ${arr("int", checkNo)},
          ${arr("text", claim((c) => c.keyHash))}, ${arr("text", claim((c) => c.legacyHash))}, ${arr("text", claim((c) => c.endpoint))},
          ${arr("text", claim((c) => c.requestMac))}, ${arr("text", claim((c) => c.sealed))}, ${arr("text", each((a) => authorizationNonce(a.id)))},
          ${arr("text", each((a) => a.paymentLinkId ?? null))}
        ) as a(id, merchant_id, environment, amount_minor, currency, reference_id, metadata, expires_in, token_expires_in, token_hash, event_id, check_no,
               key_hash, legacy_hash, endpoint, request_mac, sealed, nonce, payment_link_id)
    ), k as (
      -- 2. Each Idempotency-Key of a create whose check held, unless a record of it (or of its v1 form) lives.
      insert into app.idempotency_keys (merchant_id, environment, key_hash, endpoint, request_hash, response_status, response_sealed)
      select a.merchant_id, a.environment, a.key_hash, a.endpoint, a.request_mac, 201, a.sealed
        from asked a
        left join lateral (
          select true as found from app.idempotency_keys l
           where l.merchant_id = a.merchant_id and l.environment = a.environment and l.key_hash = a.legacy_hash
          offset 0) legacy on true
       where a.key_ok and a.key_hash is not null and legacy.found is null
       order by a.merchant_id, a.environment, a.key_hash
      on conflict do nothing
      returning merchant_id, environment, key_hash
    ), x as (
      -- What is written: the creates whose check held and whose key (if any) was claimed.
      select a.* from asked a
       where a.key_ok and (a.key_hash is null or exists (
               select from k where k.merchant_id = a.merchant_id and k.environment = a.environment and k.key_hash = a.key_hash))
    ), s as (
      insert into app.payment_sessions
        (id, merchant_id, environment, status, status_reason, amount_minor, currency, reference_id, metadata,
         expires_at, token_hash, token_expires_at, sequence, wake_at, payment_link_id)
      select id, merchant_id, environment, 'PENDING', 'created', amount_minor, currency, reference_id, metadata,
             now() + make_interval(secs => expires_in), token_hash, now() + make_interval(secs => token_expires_in), 1,
             now() + make_interval(secs => expires_in), payment_link_id
        from x
      returning *
    ), d as (
      insert into app.session_deposits
        (session_id, chain_id, address, settlement_address, token_address, decimals, required_base_units, confirmations, tokens)
      select dd.* from unnest(
        ${arr("text", deposits.map((x) => x.sessionId))}, ${arr("int", dep((d) => d.chainId))}, ${arr("text", dep((d) => d.address))},
        ${arr("text", dep((d) => d.settlementAddress))}, ${arr("text", dep((d) => d.tokenAddress))}, ${arr("int", dep((d) => d.decimals))},
        ${arr("numeric", dep((d) => d.requiredBaseUnits.toString()))}, ${arr("int", dep((d) => d.confirmations))}, ${arr("jsonb", dep((d) => tokensJson(d.tokens)))})
        as dd(session_id, chain_id, address, settlement_address, token_address, decimals, required_base_units, confirmations, tokens)
       where exists (select from x where x.id = dd.session_id)
      returning *
    ), dj as (
      -- Each session's deposits as the event's snapshot holds them (app.session_event_snapshot's shape).
      select d.session_id, jsonb_agg(to_jsonb(d) || jsonb_build_object('required_base_units', d.required_base_units::text) order by d.chain_id) as deposits
        from d group by d.session_id
    ), n as (
      -- The session's EIP-3009 nonce, so that a payment by it finds the session whoever submits it (schema.ts sessionNonces).
      insert into app.session_nonces (nonce, session_id) select nonce, id from x
    ), e as (
      -- The snapshot from the rows this statement wrote (it cannot read them back from the tables), in the
      -- shape of app.session_event_snapshot (drizzle/0023_event_snapshots.sql): what the webhook body is built from.
      insert into app.session_events (id, session_id, merchant_id, environment, sequence, status, previous_status, reason, detail, created_at, snapshot)
      select x.event_id, x.id, x.merchant_id, x.environment, 1, 'PENDING', null, 'created', '{}'::jsonb, s.created_at,
             jsonb_build_object('session', (to_jsonb(s) - 'token_hash') || jsonb_build_object('amount_minor', s.amount_minor::text, 'funding_amount', s.funding_amount::text),
                                'deposits', coalesce(dj.deposits, '[]'::jsonb))
        from s join x on x.id = s.id left join dj on dj.session_id = s.id
      returning id, session_id, merchant_id, environment, sequence
    ), ${deliveries.ctes}
    select a.id, s.created_at, s.metadata, a.key_ok, s.id is not null as claimed, ${deliveries.notified} as webhook_notified
      from asked a left join s on s.id = a.id`;
  const byId = new Map(decodeRows(Written, rows).map((r) => [r.id, r]));
  return asked.map((a): CreateOutcome => {
    const r = byId.get(a.id);
    if (!r) return { written: false, why: "idempotency_key_taken" };
    if (!r.key_ok) return { written: false, why: "key_changed" };
    if (!r.claimed || !r.created_at || !r.metadata) return { written: false, why: "idempotency_key_taken" };
    return { written: true, row: createdRow(a, r.created_at, r.metadata) };
  });
}

/**
 * A new session's row as insertSessions wrote it, from what it sent and what came back: the
 * times from the database's created_at (the same now() that set them), metadata as stored.
 * group.test.ts checks it against the row read back, and the API's answer against a retrieve.
 */
function createdRow(a: NewSession, createdAt: Date, metadata: Record<string, string>): SessionRow {
  const after = (seconds: number) => new Date(createdAt.getTime() + seconds * 1000);
  const expiresAt = after(a.input.expiresInSeconds);
  return {
    id: a.id,
    merchantId: a.merchantId,
    environment: a.environment,
    status: "PENDING",
    statusReason: "created",
    amountMinor: a.input.amountMinor,
    currency: a.input.currency,
    referenceId: a.input.referenceId,
    metadata,
    expiresAt,
    tokenHash: a.token.hash,
    tokenExpiresAt: after(a.input.expiresInSeconds + a.tokenGraceSeconds),
    sequence: 1,
    wakeAt: expiresAt,
    fundingChainId: null,
    fundingAmount: null,
    forceSweepFailure: false,
    createdAt,
    updatedAt: createdAt,
    paymentLinkId: a.paymentLinkId ?? null,
  };
}

/** A session token minted for a create: in clear (answered once) and hashed (stored). */
export function newSessionToken(environment: Environment): NewSession["token"] {
  const clear = mintCredential("session_token", environment);
  return { clear, hash: hashSecret(clear) };
}

/** One create written alone, with no key check and no Idempotency-Key (seeding, tests, benches): the row and its token. */
export async function insertSession(q: Sql | TransactionSql, args: Omit<NewSession, "keyCheck" | "claim" | "token">): Promise<{ row: SessionRow; token: string }> {
  const token = newSessionToken(args.environment);
  const [outcome] = await insertSessions(q, [{ ...args, token }]);
  if (!outcome?.written) throw new Error(`the session ${args.id} was not written`);
  return { row: outcome.row, token: token.clear };
}

/** A network's accepted tokens as JSON, written once per list (deposits of one network share it: deposits.ts acceptedTokens). */
const tokenJson = new WeakMap<readonly AcceptedToken[], string>();
function tokensJson(tokens: readonly AcceptedToken[]): string {
  let json = tokenJson.get(tokens);
  if (json === undefined) {
    json = JSON.stringify(tokens);
    tokenJson.set(tokens, json);
  }
  return json;
}
