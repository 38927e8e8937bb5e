/** Webhook endpoints (API key): register, change, delete, reveal and rotate the secret, send a test event, read attempts. */
import { Elysia } from "elysia";
import { ApiError } from "../errors.ts";
import { isId, newId } from "../../../shared/ids.ts";
import type { Environment } from "../../../shared/environment.ts";
import type { TransactionSql } from "postgres";
import { buildTestEvent } from "../webhooks/payload.ts";
import { sendWebhook } from "../webhooks/sender.ts";
import { secretKey, webhookHeaders } from "../webhooks/signing.ts";
import { attemptExists, attemptView, insertAttempts, listAttempts, type NewAttempt } from "../webhooks/attempts.ts";
import { createEndpoint, DEFAULT_ROTATION_OVERLAP_SECONDS, deleteEndpoint, endpointView, findEndpoint, listEndpoints, MAX_ENDPOINTS, revealSecret, rotateSecret, signingSecrets, updateEndpoint, type EndpointRow } from "../webhooks/endpoints.ts";
import { checkUrl, resolveTarget, TargetError } from "../webhooks/target.ts";
import { readJsonBody } from "./body.ts";
import { readIdempotencyKey, requestHash } from "./idempotency.ts";
import { withIdempotency } from "../db/idempotency-keys.ts";
import { changedBy, requireApiKey, type ApiKeyAuth } from "./auth.ts";
import { changeStatement, type ChangedBy } from "../credentials/security-history.ts";
import { AttemptList } from "./events.schemas.ts";
import { AUTH_ERRORS, BODY_ERRORS, doc, EmptyBody, PageQuery } from "./schemas.ts";
import { CreatedWebhookEndpoint, CreateWebhookEndpointBody, DeletedWebhookEndpoint, RotateSecretBody, TestEventResult, UpdateWebhookEndpointBody, WebhookEndpoint, WebhookEndpointList, WebhookSecret } from "./webhook-endpoints.schemas.ts";
import type { Services } from "./services.ts";
import { validateBody } from "./validate.ts";
import { col, decodeRow, rowShape } from "../db/rows.ts";

const TAG = "Webhook endpoints (server, API key)";
const EndpointCount = rowShape("live endpoints of an account", { n: col.int });

const URL_ERRORS = ["url_invalid", "url_https_required", "url_address_forbidden", "url_unresolvable"] as const;

interface CreateBody {
  url: string;
  description?: string;
  enabled?: boolean;
}
interface UpdateBody {
  url?: string;
  description?: string;
  enabled?: boolean;
}

/** Checks a URL for this environment, DNS included; a bad one is a 400 naming `url`. */
export async function checkWebhookUrl(services: Services, raw: string, environment: Environment): Promise<string> {
  try {
    const target = checkUrl(raw, environment);
    await resolveTarget(target, environment, services.resolver, undefined, services.config.webhooks.allowPrivateTargets);
    return target.url.toString();
  } catch (e) {
    if (e instanceof TargetError) throw new ApiError(e.code, e.message, "url");
    throw e;
  }
}

/** limit (1–100, default 20) from a query string. */
export function pageLimit(raw: string | undefined): number {
  const limit = raw === undefined ? 20 : Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new ApiError("parameter_invalid", "limit must be a whole number from 1 to 100.", "limit");
  return limit;
}

export function webhookEndpointRoutes(services: Services) {
  const { database, encryptionKey } = services;
  const owner = (auth: ApiKeyAuth) => ({ merchantId: auth.merchant.id, environment: auth.environment });

  async function loadOwn(auth: ApiKeyAuth, id: string): Promise<EndpointRow> {
    const row = isId("webhookEndpoint", id) ? await findEndpoint(database.db, owner(auth), id) : undefined;
    if (!row) throw new ApiError("resource_not_found", `No webhook endpoint ${JSON.stringify(id.slice(0, 64))} in this account and environment.`, "id");
    return row;
  }

  /** In a transaction (the idempotency key's, or its own): the endpoint and its security-history line commit together. */
  async function create(q: TransactionSql, auth: ApiKeyAuth, by: ChangedBy, body: CreateBody, url: string) {
    // Counted here, inside the idempotency transaction, so a replay is never refused by the limit.
    const [count] = await q`
      select count(*)::int as n from app.webhook_endpoints
       where merchant_id = ${auth.merchant.id} and environment = ${auth.environment} and deleted_at is null`;
    if (decodeRow(EndpointCount, count).n >= MAX_ENDPOINTS) throw new ApiError("webhook_endpoint_limit_reached");
    const { row, secret } = await createEndpoint(q, encryptionKey, {
      ...owner(auth),
      url,
      description: body.description || null,
      enabled: body.enabled ?? true,
    });
    await changeStatement(q, by, "webhook_endpoint_created", { endpointId: row.id, url: row.url });
    return { status: 201, body: { ...endpointView(row), secret } };
  }

  return new Elysia()
    .post(
      "/webhook-endpoints",
      async ({ request, set }) => {
        const auth = await requireApiKey(services, request);
        const key = readIdempotencyKey(request.headers);
        const raw = await readJsonBody(request);
        const body = validateBody<CreateBody>(CreateWebhookEndpointBody, raw);
        const url = await checkWebhookUrl(services, body.url, auth.environment);
        const by = changedBy(auth, request);
        const result = key
          ? await withIdempotency(
              database.sql,
              { secret: services.encryptionKey, merchantId: auth.merchant.id, environment: auth.environment, endpoint: "POST /webhook-endpoints" },
              key,
              requestHash(raw),
              (tx) => create(tx, auth, by, body, url),
            )
          : { ...(await database.sql.begin((tx) => create(tx, auth, by, body, url))), replayed: false };
        set.status = result.status;
        if (result.replayed) set.headers["idempotent-replayed"] = "true";
        return result.body;
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Create a webhook endpoint",
          description:
            "Events of this environment are POSTed to `url`, signed per Standard Webhooks with the returned `secret` (`whsec_…`). Production URLs must be https and resolve only to public addresses; sandbox may use http and localhost. At most 16 endpoints per environment. `Idempotency-Key` supported.",
          auth: "apiKey",
          body: CreateWebhookEndpointBody,
          ok: { status: 201, schema: CreatedWebhookEndpoint, description: "Created; `secret` is shown here and at GET …/secret." },
          errors: [...AUTH_ERRORS, ...BODY_ERRORS, ...URL_ERRORS, "webhook_endpoint_limit_reached", "idempotency_key_invalid", "idempotency_key_reused"],
        }),
      },
    )
    .get(
      "/webhook-endpoints",
      async ({ request }) => {
        const auth = await requireApiKey(services, request);
        return { data: (await listEndpoints(database.db, owner(auth))).map((r) => endpointView(r)) };
      },
      {
        detail: doc({
          tag: TAG,
          summary: "List webhook endpoints",
          description: "Every endpoint of this environment, oldest first (at most 16).",
          auth: "apiKey",
          ok: { status: 200, schema: WebhookEndpointList, description: "The endpoints." },
          errors: [...AUTH_ERRORS],
        }),
      },
    )
    .get(
      "/webhook-endpoints/:id",
      async ({ request, params }) => {
        const auth = await requireApiKey(services, request);
        return endpointView(await loadOwn(auth, params.id));
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Retrieve a webhook endpoint",
          auth: "apiKey",
          ok: { status: 200, schema: WebhookEndpoint, description: "The endpoint." },
          errors: [...AUTH_ERRORS, "resource_not_found"],
        }),
      },
    )
    .post(
      "/webhook-endpoints/:id",
      async ({ request, params }) => {
        const auth = await requireApiKey(services, request);
        const body = validateBody<UpdateBody>(UpdateWebhookEndpointBody, await readJsonBody(request));
        await loadOwn(auth, params.id);
        const url = body.url === undefined ? undefined : await checkWebhookUrl(services, body.url, auth.environment);
        const row = await updateEndpoint(database.sql, owner(auth), params.id, {
          url,
          description: body.description === undefined ? undefined : body.description || null,
          enabled: body.enabled,
        }, (tx, row) => changeStatement(tx, changedBy(auth, request), "webhook_endpoint_updated", { endpointId: row.id, url: row.url, enabled: row.enabled }));
        if (!row) throw new ApiError("resource_not_found", undefined, "id");
        return endpointView(row);
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Update a webhook endpoint",
          description: "Change `url`, `description` or `enabled`. Disabling cancels the deliveries queued for it; re-enabling delivers the events that happen from then on (redeliver older ones with POST /events/{id}/redeliver).",
          auth: "apiKey",
          body: UpdateWebhookEndpointBody,
          ok: { status: 200, schema: WebhookEndpoint, description: "The updated endpoint." },
          errors: [...AUTH_ERRORS, ...BODY_ERRORS, ...URL_ERRORS, "resource_not_found"],
        }),
      },
    )
    .delete(
      "/webhook-endpoints/:id",
      async ({ request, params }) => {
        const auth = await requireApiKey(services, request);
        await loadOwn(auth, params.id);
        const row = await deleteEndpoint(database.sql, owner(auth), params.id, (tx, row) => changeStatement(tx, changedBy(auth, request), "webhook_endpoint_deleted", { endpointId: row.id }));
        if (!row) throw new ApiError("resource_not_found", undefined, "id");
        return { id: row.id, deleted: true as const };
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Delete a webhook endpoint",
          description: "Stops its deliveries at once (queued ones are canceled). Its attempt log stays readable through GET /events/{id}/attempts.",
          auth: "apiKey",
          ok: { status: 200, schema: DeletedWebhookEndpoint, description: "Deleted." },
          errors: [...AUTH_ERRORS, "resource_not_found"],
        }),
      },
    )
    .get(
      "/webhook-endpoints/:id/secret",
      async ({ request, params }) => {
        const auth = await requireApiKey(services, request);
        const row = await loadOwn(auth, params.id);
        // Nothing changes, but a secret leaves: recorded before it is answered, so it never leaves unrecorded.
        await database.sql.begin((tx) => changeStatement(tx, changedBy(auth, request), "webhook_secret_revealed", { endpointId: row.id }));
        return { secret: revealSecret(encryptionKey, row), previousSecretExpiresAt: endpointView(row).previousSecretExpiresAt };
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Reveal the signing secret",
          description: "The current `whsec_…` secret, to configure your verifier.",
          auth: "apiKey",
          ok: { status: 200, schema: WebhookSecret, description: "The secret." },
          errors: [...AUTH_ERRORS, "resource_not_found"],
        }),
      },
    )
    .post(
      "/webhook-endpoints/:id/rotate-secret",
      async ({ request, params }) => {
        const auth = await requireApiKey(services, request);
        const body = validateBody<{ overlapSeconds?: number }>(RotateSecretBody, await readJsonBody(request));
        await loadOwn(auth, params.id);
        const r = await rotateSecret(database.sql, encryptionKey, owner(auth), params.id, body.overlapSeconds ?? DEFAULT_ROTATION_OVERLAP_SECONDS, (tx, row) =>
          changeStatement(tx, changedBy(auth, request), "webhook_secret_rotated", { endpointId: row.id }),
        );
        if (!r) throw new ApiError("resource_not_found", undefined, "id");
        return { secret: r.secret, previousSecretExpiresAt: endpointView(r.row).previousSecretExpiresAt };
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Rotate the signing secret",
          description:
            "Makes a new secret current. The old one stays valid for `overlapSeconds` (default 24 h): meanwhile every delivery carries two signatures (`v1,<new> v1,<old>`), so receivers verifying with either secret keep working while you deploy the new one.",
          auth: "apiKey",
          body: RotateSecretBody,
          ok: { status: 200, schema: WebhookSecret, description: "The new secret." },
          errors: [...AUTH_ERRORS, ...BODY_ERRORS, "resource_not_found"],
        }),
      },
    )
    .post(
      "/webhook-endpoints/:id/test",
      async ({ request, params }) => {
        const auth = await requireApiKey(services, request);
        validateBody(EmptyBody, await readJsonBody(request));
        const row = await loadOwn(auth, params.id);
        const now = new Date();
        const event = buildTestEvent(newId("event"), row.id, row.environment, now);
        const body = JSON.stringify(event);
        const keys = signingSecrets(encryptionKey, {
          id: row.id,
          secretSealed: row.secretSealed,
          previousSecretSealed: row.previousSecretSealed,
          previousValid: !!row.previousSecretExpiresAt && row.previousSecretExpiresAt > now,
        }).map(secretKey);
        const result = await sendWebhook(row.url, row.environment, webhookHeaders(keys, event.id, Math.floor(now.getTime() / 1000), body), body, {
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
        await insertAttempts(database.sql, [attempt]);
        const { atMs: _, ...fields } = attempt;
        return { event, attempt: attemptView({ ...fields, createdAt: now }) };
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Send a test event",
          description:
            "POSTs a `webhook.test` event, signed like any other, to the endpoint now (also when disabled) and answers with the attempt: status code, latency, the first 1 KB of the answer, the error. Not retried.",
          auth: "apiKey",
          body: EmptyBody,
          ok: { status: 200, schema: TestEventResult, description: "The event sent and how the endpoint answered." },
          errors: [...AUTH_ERRORS, ...BODY_ERRORS, "resource_not_found"],
        }),
      },
    )
    .get(
      "/webhook-endpoints/:id/attempts",
      async ({ request, params, query }) => {
        const auth = await requireApiKey(services, request);
        const limit = pageLimit(query.limit);
        const row = await loadOwn(auth, params.id);
        if (query.startingAfter !== undefined && !(isId("webhookAttempt", query.startingAfter) && (await attemptExists(database.db, owner(auth), query.startingAfter)))) {
          throw new ApiError("parameter_invalid", "startingAfter is not an attempt of this account and environment.", "startingAfter");
        }
        const page = await listAttempts(database.db, { ...owner(auth), endpointId: row.id, limit, startingAfter: query.startingAfter });
        return { data: page.rows.map(attemptView), hasMore: page.hasMore, nextCursor: page.hasMore ? page.rows[page.rows.length - 1]!.id : null };
      },
      {
        query: PageQuery,
        detail: doc({
          tag: TAG,
          summary: "List an endpoint's delivery attempts",
          description: "Newest first, tests included: time, status code, latency, the first 1 KB of the answer, the error.",
          auth: "apiKey",
          ok: { status: 200, schema: AttemptList, description: "A page of attempts." },
          errors: [...AUTH_ERRORS, "parameter_invalid", "resource_not_found"],
        }),
      },
    );
}
