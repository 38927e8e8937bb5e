/**
 * The two ways in (docs/decisions.md, "Environments and credentials"): a secret API key for merchant servers, a session token for
 * the payer's browser; both as `Authorization: Bearer …`. Each failure has its own code
 * (docs/merchant-guide.md, "Errors"). Keys and tokens are looked up on every request (a key's lookup may share a
 * statement with other requests' lookups: credentials/store.ts apiKeyLookups), so a revocation
 * holds from the next request on. The exceptions, a plain create and a retrieve, may reuse their
 * key's last lookup because their own statement checks the key again (credentials/key-memo.ts).
 */
import { ApiError } from "../errors.ts";
import type { Environment } from "../../../shared/environment.ts";
import { bearer, hashSecret, parseCredential, type ParsedCredential } from "../credentials/format.ts";
import { touchApiKey, type ApiKeySummary, type KeyCheck, type Merchant } from "../credentials/store.ts";
import { findSessionByToken } from "../sessions/repository.ts";
import type { DepositLike, SessionRow } from "../sessions/views.ts";
import type { Services } from "./services.ts";
import type { ChangedBy } from "../credentials/security-history.ts";
import { clientAddresses } from "./client-address.ts";

export interface ApiKeyAuth {
  environment: Environment;
  merchant: Merchant;
  key: ApiKeySummary;
  /** The merchant's settlement addresses in this environment, by chain id. */
  settlements: ReadonlyMap<number, string>;
  /** A presented key's check, for a create's statement to hold it to. */
  check?: KeyCheck;
  /** Read from the process's last lookup of the key, not now (requireApiKey's `reuse`). */
  reused?: boolean;
}

export interface SessionTokenAuth {
  environment: Environment;
  session: SessionRow;
  merchantName: string;
  /** The merchant's public id in the session's environment (what the SDK was initialised with). */
  merchantPublicId: string;
  /** The session's deposits as read with it (chain ids ascending). */
  deposits: DepositLike[];
}

/** Which environment a request's base address belongs to, when the two differ (docs/decisions.md, "Environments and credentials"). */
export function environmentOfHost(services: Pick<Services, "config">, request: Request): Environment | undefined {
  const { publicUrl, sandboxPublicUrl } = services.config;
  if (publicUrl.host === sandboxPublicUrl.host) return undefined;
  const host = request.headers.get("host") ?? new URL(request.url).host;
  if (host === sandboxPublicUrl.host) return "sandbox";
  if (host === publicUrl.host) return "production";
  return undefined;
}

function presented(services: Services, request: Request): ParsedCredential {
  const header = request.headers.get("authorization");
  if (header === null || header.trim() === "") throw new ApiError("credentials_missing");
  const raw = bearer(header);
  const parsed = raw === undefined ? undefined : parseCredential(raw);
  if (!parsed) throw new ApiError("credentials_malformed");
  checkHost(services, request, parsed.environment);
  return parsed;
}

function checkHost(services: Services, request: Request, environment: Environment): void {
  const hostEnvironment = environmentOfHost(services, request);
  if (hostEnvironment && hostEnvironment !== environment) {
    throw new ApiError(
      "environment_mismatch",
      `This is the ${hostEnvironment} base address; the credential is for ${environment}. Point SERVICE_API_HOST at the ${environment} base address.`,
    );
  }
}

function limit(services: Services, bucket: string): void {
  const verdict = services.limiter.take(bucket, Date.now());
  if (!verdict.ok) {
    throw new ApiError("rate_limited", undefined, undefined, { "retry-after": String(verdict.retryAfterSeconds) });
  }
}

/** How often last_used_at is written per key: once a minute is precise enough to spot a dead key. */
const TOUCH_EVERY_MS = 60_000;

/**
 * The request's API key, looked up — or, with `reuse` (plain creates and retrieves only, whose
 * statement checks the key again: credentials/key-memo.ts), this process's last lookup of it when there is one.
 * `again`: the same request's key looked up once more (its create's key check failed); the
 * request was counted against the rate limit the first time.
 */
export async function requireApiKey(services: Services, request: Request, opts: { reuse?: boolean; again?: boolean } = {}): Promise<ApiKeyAuth> {
  const cred = presented(services, request);
  if (cred.kind !== "api_key") throw new ApiError("api_key_required");
  const keyHash = hashSecret(cred.raw);
  const lookUp = async () => {
    const f = await services.apiKeys.submit(keyHash);
    services.keyMemo.remember(keyHash, f);
    if (!f) throw new ApiError("api_key_invalid");
    if (f.key.revokedAt) throw new ApiError("api_key_revoked");
    return f;
  };
  const remembered = opts.reuse ? services.keyMemo.get(keyHash) : undefined;
  const reused = remembered !== undefined;
  const found = remembered ?? (await lookUp());
  // The stored row decides the environment, not the prefix the caller presented: the prefix
  // is only a hint for an early "wrong base address" answer.
  const environment = found.key.environment;
  if (environment !== cred.environment) checkHost(services, request, environment);
  if (!opts.again) {
    try {
      limit(services, found.key.id);
    } catch (e) {
      // Refused with a reused lookup: a key revoked since is answered 401, not 429.
      if (reused) await lookUp();
      throw e;
    }
  }
  const now = Date.now();
  if ((services.keyTouchedAt.get(found.key.id) ?? 0) + TOUCH_EVERY_MS <= now) {
    services.keyTouchedAt.set(found.key.id, now);
    // Not awaited: bookkeeping must not slow or fail the request.
    touchApiKey(services.database.db, found.key.id, new Date(now)).catch(() => services.keyTouchedAt.delete(found.key.id));
  }
  return { environment, merchant: found.merchant, key: found.key, settlements: found.settlements, check: found.check, reused };
}

export async function requireSessionToken(services: Services, request: Request): Promise<SessionTokenAuth> {
  const cred = presented(services, request);
  if (cred.kind !== "session_token") throw new ApiError("session_token_required");
  const found = await findSessionByToken(services.database.sql, cred.raw);
  if (!found || found.session.environment !== cred.environment) throw new ApiError("session_token_invalid");
  if (found.session.tokenExpiresAt.getTime() <= Date.now()) throw new ApiError("session_token_expired");
  limit(services, found.session.id);
  return { environment: cred.environment, session: found.session, merchantName: found.merchantName, merchantPublicId: found.merchantPublicIds[cred.environment], deposits: found.deposits };
}

/**
 * Who a request's change is by, for its security-history line: the key, named by its id and
 * prefix, from the caller's address. (The dashboard's changes name the signed-in person:
 * credentials/security-history.ts byPerson.)
 */
export function changedBy(auth: ApiKeyAuth, request: Request): ChangedBy {
  return {
    actor: { merchantId: auth.merchant.id, userId: null, email: null, ip: clientAddresses.get(request) ?? null },
    environment: auth.environment,
    detail: { via: "api", keyId: auth.key.id, keyPrefix: auth.key.prefix },
  };
}
