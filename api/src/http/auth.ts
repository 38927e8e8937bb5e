/**
 * The two ways in (docs/decisions.md, "Environments and credentials"): a secret API key for merchant servers, a session token for
 * the payer's browser; both as `Authorization: Bearer …`. Each failure has its own code
 * (docs/merchant-guide.md, "Errors"). Keys and tokens are looked up on every request (a key's lookup may share a
 * statement with other requests' lookups: credentials/store.ts apiKeyLookups), so a revocation
 * holds from the next request on. The exceptions, a create and a retrieve, may reuse their
 * key's last lookup because their own statement checks the key again (credentials/key-memo.ts).
 *
 * A restricted key (credentials/scopes.ts) is held here, and only here, to the scope its route
 * declares in its docs (schemas.ts doc()); app.ts notes each request's route scope before the
 * handler runs (noteRouteScope). An expired key is refused as an unknown one is, 401.
 */
import { ApiError } from "../errors.ts";
import type { Environment } from "../../../shared/environment.ts";
import { bearer, hashSecret, parseCredential, type ParsedCredential } from "../credentials/format.ts";
import { touchApiKey, type ApiKeySummary, type KeyCheck, type KeyLookup, type Merchant } from "../credentials/store.ts";
import { findSessionByToken } from "../sessions/repository.ts";
import type { DepositLike, SessionRow } from "../sessions/views.ts";
import type { Services } from "./services.ts";
import type { ChangedBy } from "../credentials/security-history.ts";
import { clientAddress } from "./client-address.ts";
import { allows, isExpired, type Scope } from "../credentials/scopes.ts";

/** The scope each request's route takes, noted by app.ts from the route's docs (null: the route declares none). */
const routeScopes = new WeakMap<Request, Scope | null>();
export function noteRouteScope(request: Request, scope: Scope | null): void {
  routeScopes.set(request, scope);
}

export interface ApiKeyAuth {
  environment: Environment;
  merchant: Merchant;
  key: ApiKeySummary;
  /** The merchant's settlement addresses in this environment, by chain id. */
  settlements: ReadonlyMap<number, string>;
  /** The presented key's check, for a create's or a retrieve's statement to hold it to. */
  check: KeyCheck;
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

/** The request's API key, looked up now (every route but a create's and a retrieve's: apiKeyInHand). */
export async function requireApiKey(services: Services, request: Request): Promise<ApiKeyAuth> {
  const { cred, keyHash } = presentedKey(services, request);
  const found = await lookUp(services, keyHash);
  return admitted(services, request, cred, found, async () => {});
}

/** A request's key as a create or a retrieve holds it: see apiKeyInHand. */
export interface KeyInHand {
  auth: ApiKeyAuth;
  /** Read from the process's last lookup of the key, not for this request. */
  reused: boolean;
  /** The key looked up again, now (not counted against the rate limit a second time). */
  lookAgain(): Promise<ApiKeyAuth>;
}

/**
 * The request's API key as this process last looked it up, when it did (credentials/key-memo.ts),
 * else looked up now — for the two requests whose own statement checks the key again: a create
 * (sessions/create/create.ts) and a retrieve (sessions/repository.ts readMerchantView). When that
 * check fails, they call lookAgain, which refuses a key revoked meanwhile.
 */
export async function apiKeyInHand(services: Services, request: Request): Promise<KeyInHand> {
  const { cred, keyHash } = presentedKey(services, request);
  const remembered = services.keyMemo.get(keyHash);
  const lookAgain = async () => admitted(services, request, cred, await lookUp(services, keyHash), undefined);
  // Refused with a reused lookup (over the rate limit): a key revoked since is answered 401, not 429.
  const auth = await admitted(services, request, cred, remembered ?? (await lookUp(services, keyHash)), remembered ? () => lookUp(services, keyHash) : async () => {});
  return { auth, reused: remembered !== undefined, lookAgain };
}

function presentedKey(services: Services, request: Request) {
  const cred = presented(services, request);
  if (cred.kind !== "api_key") throw new ApiError("api_key_required");
  return { cred, keyHash: hashSecret(cred.raw) };
}

/** The key's lookup (grouped with other requests': credentials/store.ts apiKeyLookups), remembered for creates and retrieves. */
async function lookUp(services: Services, keyHash: string): Promise<KeyLookup> {
  const found = await services.apiKeys.submit(keyHash);
  services.keyMemo.remember(keyHash, found);
  if (!found) throw new ApiError("api_key_invalid");
  if (found.key.revokedAt) throw new ApiError("api_key_revoked");
  return found;
}

/**
 * A found key admitted for this request: the stored row decides the environment (the prefix
 * presented is only a hint for an early "wrong base address"), the request counted against the
 * key's rate limit (`beforeRefusal` runs first when it is over; undefined: not counted, a second
 * lookup for the same request), and last_used_at written now and then.
 */
async function admitted(services: Services, request: Request, cred: ParsedCredential, found: KeyLookup, beforeRefusal: (() => Promise<unknown>) | undefined): Promise<ApiKeyAuth> {
  const environment = found.key.environment;
  if (environment !== cred.environment) checkHost(services, request, environment);
  // Expiry and scopes never change on a stored key, so a reused lookup judges them as well as a
  // fresh one; a refusal still looks again first (beforeRefusal), so that a key revoked since is
  // answered 401 api_key_revoked, not 403.
  try {
    if (isExpired(found.key.expiresAt, Date.now())) throw new ApiError("api_key_expired");
    const needed = routeScopes.get(request) ?? undefined;
    if (!allows(found.key.scopes, needed)) {
      throw new ApiError(
        "api_key_scope_missing",
        needed
          ? `This API key lacks the scope ${needed}, which this endpoint takes. Create a key with it in the dashboard (Settings, API keys).`
          : "This endpoint takes a key with full access.",
      );
    }
    if (beforeRefusal) limit(services, found.key.id);
  } catch (e) {
    await beforeRefusal?.();
    throw e;
  }
  const now = Date.now();
  if ((services.keyTouchedAt.get(found.key.id) ?? 0) + TOUCH_EVERY_MS <= now) {
    services.keyTouchedAt.set(found.key.id, now);
    // Not awaited: bookkeeping must not slow or fail the request.
    touchApiKey(services.database.db, found.key.id, new Date(now)).catch(() => services.keyTouchedAt.delete(found.key.id));
  }
  return { environment, merchant: found.merchant, key: found.key, settlements: found.settlements, check: found.check };
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

/** Who a request's change is by, for its security-history line: the key, named by its id and prefix, from the caller's address. */
export function changedBy(auth: ApiKeyAuth, request: Request): ChangedBy {
  return {
    actor: { merchantId: auth.merchant.id, userId: null, email: null, ip: clientAddress(request) },
    environment: auth.environment,
    detail: { via: "api", keyId: auth.key.id, keyPrefix: auth.key.prefix },
  };
}
