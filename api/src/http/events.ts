/**
 * Events (API key): list and retrieve (to poll or reconcile), their delivery attempts, redelivery.
 * The list holds session events and refund events (in their sessions' sequence); an account event (`settlement_address.updated`) is
 * retrieved, its attempts listed and redelivered by its id, like a session event.
 */
import { Elysia } from "elysia";
import { ApiError } from "../errors.ts";
import { isId } from "../../../shared/ids.ts";
import { EVENT_TYPES } from "../webhooks/payload.ts";
import { REFUND_EVENT_TYPES } from "../db/column-values.ts";
import { findRefundEvent, listEventsWithRefunds, refundEventObject } from "../webhooks/refund-events.ts";
import { attemptExists, attemptView, listAttempts } from "../webhooks/attempts.ts";
import { accountEventObject, deliveriesOf, eventObject, findEvent } from "../webhooks/events.ts";
import { ownEvent, redeliverEvent } from "../webhooks/redelivery.ts";
import { readJsonBody } from "./body.ts";
import { changedBy, requireApiKey, type ApiKeyAuth } from "./auth.ts";
import { AnyEventWithDeliveries, AttemptList, EventList, EventListQuery, RedeliverBody, RedeliverResult } from "./events.schemas.ts";
import { AUTH_ERRORS, BODY_ERRORS, doc, PageQuery } from "./schemas.ts";
import type { Services } from "./services.ts";
import { validateBody } from "./validate.ts";
import { pageLimit } from "./webhook-endpoints.ts";

const TAG = "Events (server, API key)";

/** What GET /events lists and filters by: the sessions' events and their refunds'. */
const LISTED_TYPES = [...EVENT_TYPES, ...REFUND_EVENT_TYPES] as const;

export function eventRoutes(services: Services) {
  const { database } = services;
  const owner = (auth: ApiKeyAuth) => ({ merchantId: auth.merchant.id, environment: auth.environment });

  const loadOwn = (auth: ApiKeyAuth, id: string) => ownEvent(database.db, owner(auth), id);

  return new Elysia()
    .get(
      "/events",
      async ({ request, query }) => {
        const auth = await requireApiKey(services, request);
        const limit = pageLimit(query.limit);
        if (query.paymentSessionId !== undefined && !isId("paymentSession", query.paymentSessionId)) {
          throw new ApiError("parameter_invalid", "paymentSessionId is not a payment session id (ps_…).", "paymentSessionId");
        }
        if (query.type !== undefined && !(LISTED_TYPES as readonly string[]).includes(query.type)) {
          throw new ApiError("parameter_invalid", `type must be one of ${LISTED_TYPES.join(", ")}.`, "type");
        }
        if (
          query.startingAfter !== undefined &&
          !(isId("event", query.startingAfter) && ((await findEvent(database.db, owner(auth), query.startingAfter)) || (await findRefundEvent(database.db, owner(auth), query.startingAfter))))
        ) {
          throw new ApiError("parameter_invalid", "startingAfter is not an event of this account and environment.", "startingAfter");
        }
        const page = await listEventsWithRefunds(database.sql, database.db, {
          ...owner(auth),
          limit,
          sessionId: query.paymentSessionId,
          type: query.type as (typeof LISTED_TYPES)[number] | undefined,
          startingAfter: query.startingAfter,
        });
        return {
          data: page.rows.map((r) => (r.kind === "session" ? eventObject(r.session) : refundEventObject(r.refund))),
          hasMore: page.hasMore,
          nextCursor: page.hasMore ? page.rows[page.rows.length - 1]!.id : null,
        };
      },
      {
        query: EventListQuery,
        detail: doc({
          tag: TAG,
          summary: "List events",
          description:
            "Every status change of this environment's sessions and of their refunds, newest first, as the same objects the webhooks carry. Filter by `paymentSessionId` or `type`; page with `startingAfter` = the previous page's `nextCursor`. Use it to reconcile after downtime: each event has a per-session `sequence`, which a session's refund events share. Account events (`settlement_address.updated`) are not listed here: they are delivered to your endpoints with the same retries, and `GET /events/{id}` retrieves one by the id its webhook carried (the security history in the dashboard lists every settlement change).",
          auth: "apiKey",
          scope: "events:read",
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
        const event = found.kind === "session" ? eventObject(found.session) : found.kind === "account" ? accountEventObject(found.account) : refundEventObject(found.refund);
        return { ...event, deliveries: await deliveriesOf(database.db, found.id) };
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Retrieve an event",
          description: "The event (exactly the webhook body) with the state of its deliveries to each endpoint: a session event, a refund event (`refund.*`), or an account event (`settlement_address.updated`).",
          auth: "apiKey",
          scope: "events:read",
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
          scope: "events:read",
          ok: { status: 200, schema: AttemptList, description: "A page of attempts." },
          errors: [...AUTH_ERRORS, "parameter_invalid", "resource_not_found"],
        }),
      },
    )
    .post(
      "/events/:id/redeliver",
      async ({ request, params, set }) => {
        const auth = await requireApiKey(services, request);
        const body = validateBody(RedeliverBody, await readJsonBody(request));
        const result = await redeliverEvent(database, owner(auth), changedBy(auth, request), params.id, body.webhookEndpointId);
        set.status = 202;
        return result;
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Redeliver an event",
          description:
            "Sends the event again now, to one endpoint (`webhookEndpointId`) or to every enabled one, retried on the usual schedule. A redelivery stands outside the per-session order: it is sent at once even while earlier events are still being retried. Follow it with GET /events/{id}/attempts.",
          auth: "apiKey",
          scope: "webhooks:write",
          body: RedeliverBody,
          ok: { status: 202, schema: RedeliverResult, description: "Queued; the worker sends it within moments." },
          errors: [...AUTH_ERRORS, ...BODY_ERRORS, "resource_not_found", "webhook_endpoint_disabled", "no_webhook_endpoint"],
        }),
      },
    );
}


