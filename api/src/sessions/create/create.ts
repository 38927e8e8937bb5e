/**
 * Creating a payment session: the one path every create takes (POST /payment-sessions, with or
 * without an Idempotency-Key; the typed server client sends a key with every create). Read top to
 * bottom, it is the security path too: whether a revoked key is refused is decided here.
 *
 *  1. The caller brings its API key's lookup — possibly this process's last one rather than a new
 *     one (credentials/key-memo.ts), which saves a round trip to Postgres per create.
 *  2. prepare: the input's meaning checked (input.ts), deposit addresses planned on the ready
 *     networks for the settlement addresses that lookup read.
 *  3. One statement writes it (statement.ts, grouped with other creates: group.ts), only if the
 *     lookup still holds — the key there, unrevoked, the settlement addresses unchanged — and the
 *     Idempotency-Key, if any, is free. Its record is written in the same statement.
 *  4. Written: the answer. Not written because the key changed: the key is looked up again (a
 *     revoked key is refused there, 401) and the create prepared anew. Not written because the
 *     Idempotency-Key is taken: the first request's answer is replayed, or the request refused
 *     (422, another body under that key).
 *
 * A create refused before its write (step 2) with a reused lookup is answered from a fresh one:
 * a key revoked meanwhile gets 401 whatever else is wrong, and a merchant who has just set its
 * first settlement address is not refused with a stale `settlement_address_missing`. A create
 * refused in step 2 with an Idempotency-Key whose create was answered before replays that answer
 * (a refusal is never recorded). docs/decisions.md, "A create checks its key itself".
 */
import type { Sql } from "postgres";
import type { Db } from "../../db/client.ts";
import type { Environment } from "../../../../shared/environment.ts";
import { newId } from "../../../../shared/ids.ts";
import type { NetworkConfig } from "../../../../shared/chains/config.ts";
import { ApiError } from "../../errors.ts";
import { publicMerchantId, type KeyCheck, type Merchant } from "../../credentials/store.ts";
import { createClaim, forgetExpired, readRecord, type KeyClaim } from "../../credentials/idempotency-keys.ts";
import { planDeposits } from "../deposits.ts";
import { depositsOfSession, findSession } from "../repository.ts";
import { asCreated, createdAnswer, type CreateAnswer } from "./answer.ts";
import type { CreateGroup } from "./group.ts";
import { checkCreateInput, type CreateSessionBody } from "./input.ts";
import { newSessionToken, type NewSession } from "./statement.ts";

/** The API key a create is made with, as a lookup read it. */
export interface CreatingKey {
  environment: Environment;
  merchant: Merchant;
  /** The merchant's settlement addresses in this environment, by chain id. */
  settlements: ReadonlyMap<number, string>;
  /** What the create's statement holds the lookup to. */
  check: KeyCheck;
}

export interface KeyInHand {
  key: CreatingKey;
  /** Read from the process's last lookup of the key, not for this request. */
  reused: boolean;
  /** Looks the key up again (a revoked or unknown key throws its 401). */
  lookAgain(): Promise<CreatingKey>;
}

export interface CreateRequest {
  body: CreateSessionBody;
  /** The Idempotency-Key and the hash of the body it came with (http/idempotency.ts). */
  idempotency?: { key: string; hash: string };
}

export interface CreateDeps {
  config: {
    minAmountMinor: bigint;
    maxAmountMinor: bigint;
    sessionDefaultExpirySeconds: number;
    sessionMinExpirySeconds: number;
    sessionMaxExpirySeconds: number;
    sessionTokenGraceSeconds: number;
    sandboxSettlementAddress: string;
  };
  networks: NetworkConfig[];
  /** Which networks are ready for payments (deposit factory deployed): onchain/network-status.ts. */
  readiness: { partition(environment: Environment): Promise<{ ready: NetworkConfig[]; notReady: NetworkConfig[] }> };
  /** Where the create is written: the group (group.ts), or a payment link's transaction (payment-links/start.ts). */
  creates: Pick<CreateGroup, "submit">;
  database: { sql: Sql; db: Db };
  /** The service's secret, which Idempotency-Key records are derived and sealed with. */
  encryptionKey: Buffer;
}

/** A create's key check failed this many times running (changes meanwhile): nothing was created. */
const ATTEMPTS = 3;
const CHANGED_MEANWHILE = "The API key or the account's settlement addresses changed while the session was being created; nothing was created. Retry.";

export async function createPaymentSession(deps: CreateDeps, caller: KeyInHand, request: CreateRequest): Promise<CreateAnswer & { replayed: boolean }> {
  let key = caller.key;
  let fresh = !caller.reused;
  const lookAgain = async () => {
    key = await caller.lookAgain();
    fresh = true;
  };
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const claim = request.idempotency && { ctx: idempotencyScope(deps, key), ...request.idempotency };
    let session: NewSession;
    try {
      session = await prepare(deps, key, request.body);
    } catch (e) {
      if (!fresh) {
        await lookAgain();
        attempt--;
        continue;
      }
      const earlier = claim && (await recordedAnswer(deps, claim, key));
      if (earlier && earlier !== "free") return earlier;
      throw e;
    }
    const outcome = await deps.creates.submit({ ...session, keyCheck: key.check, ...(claim ? { claim: createClaim(claim, { sessionId: session.id, token: session.token.clear }) } : {}) });
    if (outcome.written) return { ...createdAnswer(outcome.row, publicMerchantId(key.merchant, key.environment), session.deposits, session.token.clear), replayed: false };
    if (outcome.why === "key_changed") {
      await lookAgain();
      continue;
    }
    // The Idempotency-Key is taken: by a create answered before (replay it), or by another body (422).
    const earlier = await recordedAnswer(deps, claim!, key);
    if (earlier !== "free") return earlier;
  }
  throw new ApiError("service_unavailable", CHANGED_MEANWHILE);
}

/** The session to write: the input checked, deposit addresses planned on the ready networks. */
async function prepare(deps: CreateDeps, key: CreatingKey, body: CreateSessionBody): Promise<NewSession> {
  const { config } = deps;
  const input = checkCreateInput(body, {
    minAmountMinor: config.minAmountMinor,
    maxAmountMinor: config.maxAmountMinor,
    defaultExpirySeconds: config.sessionDefaultExpirySeconds,
    minExpirySeconds: config.sessionMinExpirySeconds,
    maxExpirySeconds: config.sessionMaxExpirySeconds,
  });
  const id = newId("paymentSession");
  const planOn = (networks: NetworkConfig[]) =>
    planDeposits({
      sessionId: id,
      environment: key.environment,
      amountMinor: input.amountMinor,
      networks,
      settlements: key.settlements,
      defaultSettlement: config.sandboxSettlementAddress,
    });
  const everywhere = planOn(deps.networks);
  if (!everywhere.ok) {
    throw everywhere.problem === "no_network"
      ? new ApiError("network_unavailable", `No network is enabled for ${key.environment} on this server.`)
      : new ApiError("settlement_address_missing");
  }
  // Only networks whose deposit factory is deployed: elsewhere a deposit address could not be swept.
  const { ready, notReady } = await deps.readiness.partition(key.environment);
  const plan = notReady.length === 0 ? everywhere : planOn(ready);
  if (!plan.ok) {
    const waiting = notReady.filter((n) => everywhere.deposits.some((d) => d.chainId === n.chainId));
    throw new ApiError(
      "network_unavailable",
      `No network of this session is ready for payments: ${waiting.map((n) => `${n.name} (chain ${n.chainId})`).join(", ")} ` +
        `${waiting.length === 1 ? "is" : "are"} not ready on this server (the operator has not deployed the deposit factory there yet). Retry later.`,
    );
  }
  return {
    id,
    merchantId: key.merchant.id,
    environment: key.environment,
    input,
    tokenGraceSeconds: config.sessionTokenGraceSeconds,
    deposits: plan.deposits,
    token: newSessionToken(key.environment),
  };
}

function idempotencyScope(deps: CreateDeps, key: CreatingKey) {
  return { secret: deps.encryptionKey, merchantId: key.merchant.id, environment: key.environment, endpoint: "POST /payment-sessions" };
}

/**
 * What the Idempotency-Key's record says: the first create's answer (replayed), a 422 for another
 * body, or "free" — no live record (gone or expired, now forgotten): the key may be claimed again.
 */
async function recordedAnswer(deps: CreateDeps, claim: KeyClaim, key: CreatingKey): Promise<(CreateAnswer & { replayed: true }) | "free"> {
  const { sql, db } = deps.database;
  const record = await readRecord(sql, claim);
  switch (record.kind) {
    case "none":
      return "free";
    case "expired":
      await forgetExpired(sql, claim);
      return "free";
    case "reused":
      throw new ApiError("idempotency_key_reused", undefined, "Idempotency-Key");
    case "answer":
      // Written by a build that stored whole answers (within the last 24 hours of an upgrade).
      return { status: 201, body: record.response.body, replayed: true };
    case "created": {
      const { merchantId, environment } = claim.ctx;
      const row = await findSession(db, merchantId, environment, record.sessionId);
      if (!row) throw new Error(`the session of an Idempotency-Key record is missing: ${record.sessionId}`);
      const deposits = await depositsOfSession(db, row.id);
      return { ...createdAnswer(asCreated(row), publicMerchantId(key.merchant, key.environment), deposits, record.token), replayed: true };
    }
  }
}
