/** Webhook endpoints (API key): register, change, delete, reveal and rotate the secret, send a test event, read attempts. */
import { Elysia } from "elysia";
import type { TransactionSql } from "postgres";
import { ApiError } from "../errors.ts";
import { isId } from "../../../shared/ids.ts";
import { attemptExists, attemptView, listAttempts } from "../webhooks/attempts.ts";
import { endpointView, listEndpoints } from "../webhooks/endpoints.ts";
import {
  addEndpointIn,
  checkWebhookUrl,
  deleteWebhookEndpoint,
  ownEndpoint,
  revealWebhookSecret,
  rotateWebhookSecret,
  sendTestEvent,
  updateWebhookEndpoint,
} from "../webhooks/endpoint-actions.ts";
import { readJsonBody } from "./body.ts";
import { readIdempotencyKey, requestHash } from "./idempotency.ts";
import { withIdempotency } from "../credentials/idempotency-keys.ts";
import { changedBy, requireApiKey, type ApiKeyAuth } from "./auth.ts";
import { AttemptList } from "./events.schemas.ts";
import { AUTH_ERRORS, BODY_ERRORS, doc, EmptyBody, PageQuery } from "./schemas.ts";
import { CreatedWebhookEndpoint, CreateWebhookEndpointBody, DeletedWebhookEndpoint, RotateSecretBody, TestEventResult, UpdateWebhookEndpointBody, WebhookEndpoint, WebhookEndpointList, WebhookSecret } from "./webhook-endpoints.schemas.ts";
import type { Services } from "./services.ts";
import { validateBody } from "./validate.ts";

const TAG = "Webhook endpoints (server, API key)";
const URL_ERRORS = ["url_invalid", "url_https_required", "url_address_forbidden", "url_unresolvable"] as const;

/** limit (1–100, default 20) from a query string. */
export function pageLimit(raw: string | undefined): number {
  const limit = raw === undefined ? 20 : Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new ApiError("parameter_invalid", "limit must be a whole number from 1 to 100.", "limit");
  return limit;
}

/** The routes adapt HTTP to the functions the dashboard calls too (webhooks/endpoint-actions.ts), which hold the rules. */
export function webhookEndpointRoutes(services: Services) {
  const { database } = services;
  const owner = (auth: ApiKeyAuth) => ({ merchantId: auth.merchant.id, environment: auth.environment });

  return new Elysia()
    .post(
      "/webhook-endpoints",
      async ({ request, set }) => {
        const auth = await requireApiKey(services, request);
        const key = readIdempotencyKey(request.headers);
        const raw = await readJsonBody(request);
        const body = validateBody(CreateWebhookEndpointBody, raw);
        const url = await checkWebhookUrl(services, body.url, auth.environment);
        const by = changedBy(auth, request);
        const create = async (tx: TransactionSql) => {
          const { endpoint, secret } = await addEndpointIn(tx, services, owner(auth), by, { ...body, url });
          return { status: 201, body: { ...endpoint, secret } };
        };
        const result = key
          ? await withIdempotency(
              database.sql,
              { secret: services.encryptionKey, merchantId: auth.merchant.id, environment: auth.environment, endpoint: "POST /webhook-endpoints" },
              key,
              requestHash(raw),
              create,
            )
          : { ...(await database.sql.begin(create)), replayed: false };
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
          scope: "webhooks:write",
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
          scope: "webhooks:read",
          ok: { status: 200, schema: WebhookEndpointList, description: "The endpoints." },
          errors: [...AUTH_ERRORS],
        }),
      },
    )
    .get(
      "/webhook-endpoints/:id",
      async ({ request, params }) => {
        const auth = await requireApiKey(services, request);
        return endpointView(await ownEndpoint(services, owner(auth), params.id));
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Retrieve a webhook endpoint",
          auth: "apiKey",
          scope: "webhooks:read",
          ok: { status: 200, schema: WebhookEndpoint, description: "The endpoint." },
          errors: [...AUTH_ERRORS, "resource_not_found"],
        }),
      },
    )
    .post(
      "/webhook-endpoints/:id",
      async ({ request, params }) => {
        const auth = await requireApiKey(services, request);
        const body = validateBody(UpdateWebhookEndpointBody, await readJsonBody(request));
        return updateWebhookEndpoint(services, owner(auth), changedBy(auth, request), params.id, body);
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Update a webhook endpoint",
          description: "Change `url`, `description` or `enabled`. Disabling cancels the deliveries queued for it; re-enabling delivers the events that happen from then on (redeliver older ones with POST /events/{id}/redeliver).",
          auth: "apiKey",
          scope: "webhooks:write",
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
        const { id } = await deleteWebhookEndpoint(services, owner(auth), changedBy(auth, request), params.id);
        return { id, deleted: true as const };
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Delete a webhook endpoint",
          description: "Stops its deliveries at once (queued ones are canceled). Its attempt log stays readable through GET /events/{id}/attempts.",
          auth: "apiKey",
          scope: "webhooks:write",
          ok: { status: 200, schema: DeletedWebhookEndpoint, description: "Deleted." },
          errors: [...AUTH_ERRORS, "resource_not_found"],
        }),
      },
    )
    .get(
      "/webhook-endpoints/:id/secret",
      async ({ request, params }) => {
        const auth = await requireApiKey(services, request);
        return revealWebhookSecret(services, owner(auth), changedBy(auth, request), params.id);
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Reveal the signing secret",
          description: "The current `whsec_…` secret, to configure your verifier.",
          auth: "apiKey",
          scope: "webhooks:write",
          ok: { status: 200, schema: WebhookSecret, description: "The secret." },
          errors: [...AUTH_ERRORS, "resource_not_found"],
        }),
      },
    )
    .post(
      "/webhook-endpoints/:id/rotate-secret",
      async ({ request, params }) => {
        const auth = await requireApiKey(services, request);
        const body = validateBody(RotateSecretBody, await readJsonBody(request));
        return rotateWebhookSecret(services, owner(auth), changedBy(auth, request), params.id, body.overlapSeconds);
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Rotate the signing secret",
          description:
            "Makes a new secret current. The old one stays valid for `overlapSeconds` (default 24 h): meanwhile every delivery carries two signatures (`v1,<new> v1,<old>`), so receivers verifying with either secret keep working while you deploy the new one.",
          auth: "apiKey",
          scope: "webhooks:write",
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
        return sendTestEvent(services, owner(auth), params.id);
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Send a test event",
          description:
            "POSTs a `webhook.test` event, signed like any other, to the endpoint now (also when disabled) and answers with the attempt: status code, latency, the first 1 KB of the answer, the error. Not retried.",
          auth: "apiKey",
          scope: "webhooks:write",
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
        const row = await ownEndpoint(services, owner(auth), params.id);
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
          scope: "webhooks:read",
          ok: { status: 200, schema: AttemptList, description: "A page of attempts." },
          errors: [...AUTH_ERRORS, "parameter_invalid", "resource_not_found"],
        }),
      },
    );
}
