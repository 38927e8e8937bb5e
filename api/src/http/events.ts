/**
 * Events (API key): list and retrieve (to poll or reconcile), their delivery attempts, redelivery.
 * The list holds session events only; an account event (`settlement_address.updated`) is
 * retrieved, its attempts listed and redelivered by its id, like a session event.
 */
import { Elysia } from "elysia";
import { ApiError } from "../errors.ts";
import { isId } from "../../../shared/ids.ts";
import { EVENT_TYPES, type EventType } from "../webhooks/payload.ts";
import { attemptExists, attemptView, listAttempts } from "../webhooks/attempts.ts";
import { findEndpoint, listEndpoints } from "../webhooks/endpoints.ts";
import { accountEventObject, deliveriesOf, eventObject, findAccountEvent, findEvent, listEvents, redeliver, redeliverAccountEvent } from "../webhooks/events.ts";
import { readJsonBody } from "./body.ts";
import type { TransactionSql } from "postgres";
import { changedBy, requireApiKey, type ApiKeyAuth } from "./auth.ts";
import { changeStatement } from "../credentials/security-history.ts";
import { AnyEventWithDeliveries, AttemptList, EventList, EventListQuery, RedeliverBody, RedeliverResult } from "./events.schemas.ts";
import { AUTH_ERRORS, BODY_ERRORS, doc, PageQuery } from "./schemas.ts";
import type { Services } from "./services.ts";
import { validateBody } from "./validate.ts";
import { pageLimit } from "./webhook-endpoints.ts";

const TAG = "Events (server, API key)";

export function eventRoutes(services: Services) {
  const { database } = services;
  const owner = (auth: ApiKeyAuth) => ({ merchantId: auth.merchant.id, environment: auth.environment });

  /** A session event, or else an account event, of this merchant and environment. */
  async function loadOwn(auth: ApiKeyAuth, id: string) {
    if (isId("event", id)) {
      const session = await findEvent(database.db, owner(auth), id);
      if (session) return { kind: "session" as const, id, session };
      const account = await findAccountEvent(database.db, owner(auth), id);
      if (account) return { kind: "account" as const, id, account };
    }
    throw new ApiError("resource_not_found", `No event ${JSON.stringify(id.slice(0, 64))} in this account and environment.`, "id");
  }

  return new Elysia()
    .get(
      "/events",
      async ({ request, query }) => {
        const auth = await requireApiKey(services, request);
        const limit = pageLimit(query.limit);
        if (query.paymentSessionId !== undefined && !isId("paymentSession", query.paymentSessionId)) {
          throw new ApiError("parameter_invalid", "paymentSessionId is not a payment session id (ps_…).", "paymentSessionId");
        }
        if (query.type !== undefined && !(EVENT_TYPES as readonly string[]).includes(query.type)) {
          throw new ApiError("parameter_invalid", `type must be one of ${EVENT_TYPES.join(", ")}.`, "type");
        }
        if (query.startingAfter !== undefined && !(isId("event", query.startingAfter) && (await findEvent(database.db, owner(auth), query.startingAfter)))) {
          throw new ApiError("parameter_invalid", "startingAfter is not an event of this account and environment.", "startingAfter");
        }
        const page = await listEvents(database.db, {
          ...owner(auth),
          limit,
          sessionId: query.paymentSessionId,
          type: query.type as EventType | undefined,
          startingAfter: query.startingAfter,
        });
        return {
          data: page.rows.map(eventObject),
          hasMore: page.hasMore,
          nextCursor: page.hasMore ? page.rows[page.rows.length - 1]!.event.id : null,
        };
      },
      {
        query: EventListQuery,
        detail: doc({
          tag: TAG,
          summary: "List events",
          description:
            "Every status change of this environment's sessions, newest first, as the same objects the webhooks carry. Filter by `paymentSessionId` or `type`; page with `startingAfter` = the previous page's `nextCursor`. Use it to reconcile after downtime: each event has a per-session `sequence`. Account events (`settlement_address.updated`) are not listed here: they are delivered to your endpoints with the same retries, and `GET /events/{id}` retrieves one by the id its webhook carried (the security history in the dashboard lists every settlement change).",
          auth: "apiKey",
          ok: { status: 200, schema: EventList, description: "A page of events." },
          errors: [...AUTH_ERRORS, "parameter_invalid"],
        }),
      },
    )
    .get(
      "/events/:id",
      async ({ request, params }) => {
        const auth = await requireApiKey(services, request);
        const found = await loadOwn(auth, params.id);
        const event = found.kind === "session" ? eventObject(found.session) : accountEventObject(found.account);
        return { ...event, deliveries: await deliveriesOf(database.db, found.id) };
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Retrieve an event",
          description: "The event (exactly the webhook body) with the state of its deliveries to each endpoint: a session event, or an account event (`settlement_address.updated`).",
          auth: "apiKey",
          ok: { status: 200, schema: AnyEventWithDeliveries, description: "The event." },
          errors: [...AUTH_ERRORS, "resource_not_found"],
        }),
      },
    )
    .get(
      "/events/:id/attempts",
      async ({ request, params, query }) => {
        const auth = await requireApiKey(services, request);
        const limit = pageLimit(query.limit);
        const found = await loadOwn(auth, params.id);
        if (query.startingAfter !== undefined && !(isId("webhookAttempt", query.startingAfter) && (await attemptExists(database.db, owner(auth), query.startingAfter)))) {
          throw new ApiError("parameter_invalid", "startingAfter is not an attempt of this account and environment.", "startingAfter");
        }
        const page = await listAttempts(database.db, { ...owner(auth), eventId: found.id, limit, startingAfter: query.startingAfter });
        return { data: page.rows.map(attemptView), hasMore: page.hasMore, nextCursor: page.hasMore ? page.rows[page.rows.length - 1]!.id : null };
      },
      {
        query: PageQuery,
        detail: doc({
          tag: TAG,
          summary: "List an event's delivery attempts",
          description: "Newest first, to every endpoint: time, status code, latency, the first 1 KB of the answer, the error.",
          auth: "apiKey",
          ok: { status: 200, schema: AttemptList, description: "A page of attempts." },
          errors: [...AUTH_ERRORS, "parameter_invalid", "resource_not_found"],
        }),
      },
    )
    .post(
      "/events/:id/redeliver",
      async ({ request, params, set }) => {
        const auth = await requireApiKey(services, request);
        const body = validateBody<{ webhookEndpointId?: string }>(RedeliverBody, await readJsonBody(request));
        const found = await loadOwn(auth, params.id);
        let endpointIds: string[];
        if (body.webhookEndpointId !== undefined) {
          const ep = isId("webhookEndpoint", body.webhookEndpointId) ? await findEndpoint(database.db, owner(auth), body.webhookEndpointId) : undefined;
          if (!ep) throw new ApiError("resource_not_found", "No such webhook endpoint in this account and environment.", "webhookEndpointId");
          if (!ep.enabled) throw new ApiError("webhook_endpoint_disabled", undefined, "webhookEndpointId");
          endpointIds = [ep.id];
        } else {
          endpointIds = (await listEndpoints(database.db, owner(auth))).filter((e) => e.enabled).map((e) => e.id);
          if (endpointIds.length === 0) throw new ApiError("no_webhook_endpoint");
        }
        // Recorded in the security history, by the person or the key, with the deliveries it queues.
        const by = changedBy(auth, request);
        const line = (tx: TransactionSql) => changeStatement(tx, by, "webhook_event_redelivered", { eventId: found.id, endpointId: body.webhookEndpointId ?? "every enabled endpoint" });
        if (found.kind === "session") await redeliver(database.sql, found.session.event, endpointIds, line);
        else await redeliverAccountEvent(database.sql, found.account, endpointIds, line);
        set.status = 202;
        const deliveries = (await deliveriesOf(database.db, found.id)).filter((d) => !d.ordered && endpointIds.includes(d.webhookEndpointId));
        return { eventId: found.id, deliveries };
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Redeliver an event",
          description:
            "Sends the event again now, to one endpoint (`webhookEndpointId`) or to every enabled one, retried on the usual schedule. A redelivery stands outside the per-session order: it is sent at once even while earlier events are still being retried. Follow it with GET /events/{id}/attempts.",
          auth: "apiKey",
          body: RedeliverBody,
          ok: { status: 202, schema: RedeliverResult, description: "Queued; the worker sends it within moments." },
          errors: [...AUTH_ERRORS, ...BODY_ERRORS, "resource_not_found", "webhook_endpoint_disabled", "no_webhook_endpoint"],
        }),
      },
    );
}


