/**
 * What can be done to a merchant's webhook endpoints, whichever door it comes through: the
 * API's routes (http/webhook-endpoints.ts) and the dashboard (dashboard/routes/webhooks.ts) call these
 * same functions. Each takes typed input (its shape already checked by the door against the
 * route's schema), applies the rules — the URL checked for the environment with DNS, at most
 * MAX_ENDPOINTS, only the owner's endpoints — and throws the catalogue's ApiError otherwise.
 * Each change writes its security-history line, naming `by`, in its own transaction.
 */
import type { TransactionSql } from "postgres";
import { ApiError } from "../errors.ts";
import { isId, newId } from "../../../shared/ids.ts";
import type { Environment } from "../../../shared/environment.ts";
import type { Config } from "../config.ts";
import type { Database } from "../db/client.ts";
import { changeStatement, type ChangedBy } from "../credentials/security-history.ts";
import { decodeFirst, rowShape, col } from "../db/rows.ts";
import { attemptView, insertAttempts, type AttemptView, type NewAttempt } from "./attempts.ts";
import {
  createEndpoint,
  DEFAULT_ROTATION_OVERLAP_SECONDS,
  deleteEndpoint,
  endpointView,
  findEndpoint,
  MAX_ENDPOINTS,
  revealSecret,
  rotateSecret,
  signingSecrets,
  updateEndpoint,
  type EndpointRow,
  type EndpointView,
  type Owner,
} from "./endpoints.ts";
import { buildTestEvent, type TestEvent } from "./payload.ts";
import { sendWebhook } from "./sender.ts";
import { secretKey, webhookHeaders } from "./signing.ts";
import { checkUrl, resolveTarget, TargetError, type Resolver } from "./target.ts";
import { findInChain } from "../../../shared/error-chain.ts";

/** The parts of the process these functions use (the HTTP layer's Services has them). */
export interface EndpointServices {
  database: Pick<Database, "db" | "sql">;
  /** The service's encryption key: seals webhook secrets at rest (secrets.ts). */
  encryptionKey: Buffer;
  /** DNS for webhook URLs (tests replace it). */
  resolver?: Resolver;
  config: Pick<Config, "webhooks">;
}

export interface CreateEndpointInput {
  url: string;
  description?: string;
  enabled?: boolean;
}

export interface UpdateEndpointInput {
  url?: string;
  /** An empty string clears it. */
  description?: string;
  enabled?: boolean;
}

export interface EndpointSecret {
  secret: string;
  previousSecretExpiresAt: string | null;
}

/** Checks a URL for this environment, DNS included; a bad one is a 400 naming `url`. */
export async function checkWebhookUrl(services: EndpointServices, raw: string, environment: Environment): Promise<string> {
  try {
    const target = checkUrl(raw, environment);
    await resolveTarget(target, environment, services.resolver, undefined, services.config.webhooks.allowPrivateTargets);
    return target.url.toString();
  } catch (e) {
    const refused = findInChain(e, (x) => x instanceof TargetError);
    if (refused) throw new ApiError(refused.code, refused.message, "url", undefined, { cause: e });
    throw e;
  }
}

/** The owner's endpoint (not deleted), or the 404 naming `id`. */
export async function ownEndpoint(services: EndpointServices, owner: Owner, id: string): Promise<EndpointRow> {
  const row = isId("webhookEndpoint", id) ? await findEndpoint(services.database.db, owner, id) : undefined;
  if (!row) throw new ApiError("resource_not_found", `No webhook endpoint ${JSON.stringify(id.slice(0, 64))} in this account and environment.`, "id");
  return row;
}

const EndpointCount = rowShape("webhook endpoints of an owner", { n: col.int });

/**
 * Adds an endpoint whose URL checkWebhookUrl passed, in the caller's transaction (the
 * idempotency key's, or its own): the endpoint and its security-history line commit together.
 */
export async function addEndpointIn(tx: TransactionSql, services: EndpointServices, owner: Owner, by: ChangedBy, input: CreateEndpointInput & { url: string }) {
  // Counted here, inside the transaction, so an idempotent replay is never refused by the limit.
  const count = decodeFirst(
    EndpointCount,
    await tx`
      select count(*)::int as n from app.webhook_endpoints
       where merchant_id = ${owner.merchantId} and environment = ${owner.environment} and deleted_at is null`,
  );
  if (count!.n >= MAX_ENDPOINTS) throw new ApiError("webhook_endpoint_limit_reached");
  const { row, secret } = await createEndpoint(tx, services.encryptionKey, {
    ...owner,
    url: input.url,
    description: input.description || null,
    enabled: input.enabled ?? true,
  });
  await changeStatement(tx, by, "webhook_endpoint_created", { endpointId: row.id, url: row.url });
  return { endpoint: endpointView(row), secret };
}

/** Checks the URL and adds the endpoint in a transaction of its own; the secret is returned this once. */
export async function createWebhookEndpoint(services: EndpointServices, owner: Owner, by: ChangedBy, input: CreateEndpointInput): Promise<{ endpoint: EndpointView; secret: string }> {
  const url = await checkWebhookUrl(services, input.url, owner.environment);
  return services.database.sql.begin((tx) => addEndpointIn(tx, services, owner, by, { ...input, url }));
}

export async function updateWebhookEndpoint(services: EndpointServices, owner: Owner, by: ChangedBy, id: string, input: UpdateEndpointInput): Promise<EndpointView> {
  await ownEndpoint(services, owner, id);
  const url = input.url === undefined ? undefined : await checkWebhookUrl(services, input.url, owner.environment);
  const row = await updateEndpoint(
    services.database.sql,
    owner,
    id,
    { url, description: input.description === undefined ? undefined : input.description || null, enabled: input.enabled },
    (tx, row) => changeStatement(tx, by, "webhook_endpoint_updated", { endpointId: row.id, url: row.url, enabled: row.enabled }),
  );
  if (!row) throw new ApiError("resource_not_found", undefined, "id");
  return endpointView(row);
}

export async function deleteWebhookEndpoint(services: EndpointServices, owner: Owner, by: ChangedBy, id: string): Promise<{ id: string }> {
  await ownEndpoint(services, owner, id);
  const row = await deleteEndpoint(services.database.sql, owner, id, (tx, row) => changeStatement(tx, by, "webhook_endpoint_deleted", { endpointId: row.id }));
  if (!row) throw new ApiError("resource_not_found", undefined, "id");
  return { id: row.id };
}

/** Nothing changes, but a secret leaves: recorded before it is returned, so it never leaves unrecorded. */
export async function revealWebhookSecret(services: EndpointServices, owner: Owner, by: ChangedBy, id: string): Promise<EndpointSecret> {
  const row = await ownEndpoint(services, owner, id);
  await services.database.sql.begin((tx) => changeStatement(tx, by, "webhook_secret_revealed", { endpointId: row.id }));
  return { secret: revealSecret(services.encryptionKey, row), previousSecretExpiresAt: endpointView(row).previousSecretExpiresAt };
}

/** A new current secret; the old one stays valid for `overlapSeconds` (default 24 h). */
export async function rotateWebhookSecret(services: EndpointServices, owner: Owner, by: ChangedBy, id: string, overlapSeconds = DEFAULT_ROTATION_OVERLAP_SECONDS): Promise<EndpointSecret> {
  await ownEndpoint(services, owner, id);
  const r = await rotateSecret(services.database.sql, services.encryptionKey, owner, id, overlapSeconds, (tx, row) =>
    changeStatement(tx, by, "webhook_secret_rotated", { endpointId: row.id }),
  );
  if (!r) throw new ApiError("resource_not_found", undefined, "id");
  return { secret: r.secret, previousSecretExpiresAt: endpointView(r.row).previousSecretExpiresAt };
}

/** POSTs a signed `webhook.test` event to the endpoint now (also when disabled), logs the attempt, and returns it. Not retried. */
export async function sendTestEvent(services: EndpointServices, owner: Owner, id: string): Promise<{ event: TestEvent; attempt: AttemptView }> {
  const row = await ownEndpoint(services, owner, id);
  const now = new Date();
  const event = buildTestEvent(newId("event"), row.id, row.environment, now);
  const body = JSON.stringify(event);
  const keys = signingSecrets(services.encryptionKey, {
    id: row.id,
    secretSealed: row.secretSealed,
    previousSecretSealed: row.previousSecretSealed,
    previousValid: !!row.previousSecretExpiresAt && row.previousSecretExpiresAt > now,
  }).map(secretKey);
  const result = await sendWebhook(row.url, owner.environment, webhookHeaders(keys, event.id, Math.floor(now.getTime() / 1000), body), body, {
    timeoutMs: services.config.webhooks.timeoutMs,
    resolver: services.resolver,
    allowPrivateTargets: services.config.webhooks.allowPrivateTargets,
  });
  const attempt: NewAttempt = {
    id: newId("webhookAttempt"),
    endpointId: row.id,
    merchantId: row.merchantId,
    environment: row.environment,
    eventId: event.id,
    kind: "test",
    attemptNumber: 1,
    url: row.url,
    succeeded: result.succeeded,
    statusCode: result.statusCode,
    latencyMs: result.latencyMs,
    responseExcerpt: result.responseExcerpt,
    error: result.error,
    atMs: now.getTime(),
  };
  await insertAttempts(services.database.sql, [attempt]);
  const { atMs: _, ...fields } = attempt;
  return { event, attempt: attemptView({ ...fields, createdAt: now }) };
}
