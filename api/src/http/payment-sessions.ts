/** Merchant-side payment-session endpoints (API key). */
import { Elysia } from "elysia";
import type { Static } from "@sinclair/typebox";
import { ApiError } from "../errors.ts";
import { isSessionStatus } from "../../../shared/status.ts";
import { isId } from "../../../shared/ids.ts";
import { publicMerchantId } from "../credentials/store.ts";
import { createPaymentSession } from "../sessions/create/create.ts";
import { depositsOf, findSession, listSessions, loadMerchantView, readMerchantView } from "../sessions/repository.ts";
import { cancelSession } from "../sessions/cancel.ts";
import { merchantView, type SessionRow } from "../sessions/views.ts";
import { refundedOf } from "../refunds/store.ts";
import { readJsonBody } from "./body.ts";
import { readIdempotencyKey, requestHash } from "./idempotency.ts";
import { apiKeyInHand, requireApiKey, type ApiKeyAuth } from "./auth.ts";
import { CreatedSession, CreateSessionBody, ListQuery, MerchantSession, SessionList } from "./payment-sessions.schemas.ts";
import { AUTH_ERRORS, BODY_ERRORS, doc, EmptyBody } from "./schemas.ts";
import type { Services } from "./services.ts";
import { validateBody } from "./validate.ts";

const TAG = "Payment sessions (server, API key)";

export function paymentSessionRoutes(services: Services) {
  const { database } = services;

  /** The merchant's view with networks and history, as retrieve and cancel answer. */
  async function fullView(auth: ApiKeyAuth, row: SessionRow) {
    return loadMerchantView(database.db, row, publicMerchantId(auth.merchant, auth.environment));
  }

  async function loadOwn(auth: ApiKeyAuth, id: string) {
    const row = isId("paymentSession", id) ? await findSession(database.db, auth.merchant.id, auth.environment, id) : undefined;
    if (!row) throw notFound(id);
    return row;
  }

  function notFound(id: string) {
    return new ApiError("resource_not_found", `No payment session ${JSON.stringify(id.slice(0, 64))} in this account and environment.`, "id");
  }

  return new Elysia()
    .post(
      "/payment-sessions",
      async ({ request, set }) => {
        // The key as last looked up: the create's own statement checks it (sessions/create/create.ts).
        const caller = await apiKeyInHand(services, request);
        let body: Static<typeof CreateSessionBody>, idempotency: { key: string; hash: string } | undefined;
        try {
          const key = readIdempotencyKey(request.headers);
          const raw = await readJsonBody(request);
          body = validateBody(CreateSessionBody, raw);
          idempotency = key === undefined ? undefined : { key, hash: requestHash(raw) };
        } catch (e) {
          // The request is at fault whatever its key, but a key revoked since a reused lookup gets 401.
          if (caller.reused) await caller.lookAgain();
          throw e;
        }
        const created = await createPaymentSession(services, { key: caller.auth, reused: caller.reused, lookAgain: caller.lookAgain }, { body, ...(idempotency ? { idempotency } : {}) });
        set.status = created.status;
        if (created.replayed) set.headers["idempotent-replayed"] = "true";
        return created.body;
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Create a payment session",
          description:
            "Returns the session with a fresh `paymentSessionToken` for `sdk.open`. Send `Idempotency-Key: <unique>` to make retries safe: for 24 h the same key and body replay the first response (header `Idempotent-Replayed: true`); the same key with another body is refused.",
          auth: "apiKey",
          scope: "sessions:write",
          body: CreateSessionBody,
          ok: { status: 201, schema: CreatedSession, description: "Created." },
          errors: [
            ...AUTH_ERRORS,
            ...BODY_ERRORS,
            "amount_invalid",
            "amount_too_small",
            "amount_too_large",
            "currency_unsupported",
            "idempotency_key_invalid",
            "idempotency_key_reused",
            "settlement_address_missing",
            "network_unavailable",
            "service_unavailable",
          ],
        }),
      },
    )
    .get(
      "/payment-sessions",
      async ({ request, query }) => {
        const auth = await requireApiKey(services, request);
        const limit = query.limit === undefined ? 20 : Number(query.limit);
        if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
          throw new ApiError("parameter_invalid", "limit must be a whole number from 1 to 100.", "limit");
        }
        if (query.status !== undefined && !isSessionStatus(query.status)) {
          throw new ApiError("parameter_invalid", "status must be one of PENDING, FUNDED, SUCCEEDED, CANCELED, ERROR.", "status");
        }
        if (query.paymentLinkId !== undefined && !isId("paymentLink", query.paymentLinkId)) {
          throw new ApiError("parameter_invalid", "paymentLinkId is not a payment link id (plink_…).", "paymentLinkId");
        }
        let startingAfter;
        if (query.startingAfter !== undefined) {
          startingAfter = isId("paymentSession", query.startingAfter)
            ? await findSession(database.db, auth.merchant.id, auth.environment, query.startingAfter)
            : undefined;
          if (!startingAfter) throw new ApiError("parameter_invalid", "startingAfter is not a payment session of this account and environment.", "startingAfter");
        }
        const page = await listSessions(database.db, {
          merchantId: auth.merchant.id,
          environment: auth.environment,
          limit,
          status: query.status,
          ...(query.paymentLinkId !== undefined ? { paymentLinkId: query.paymentLinkId } : {}),
          startingAfter,
        });
        const mid = publicMerchantId(auth.merchant, auth.environment);
        const deposits = await depositsOf(database.db, page.rows.map((r) => r.id));
        const refunded = await refundedOf(database.sql, page.rows.map((r) => r.id));
        return {
          data: page.rows.map((r) => merchantView(r, mid, deposits.get(r.id) ?? [], undefined, refunded.get(r.id))),
          hasMore: page.hasMore,
          nextCursor: page.hasMore ? page.rows[page.rows.length - 1]!.id : null,
        };
      },
      {
        query: ListQuery,
        detail: doc({
          tag: TAG,
          summary: "List payment sessions",
          description: "Newest first, in pages of `limit` (1–100, default 20). Pass the previous page's `nextCursor` as `startingAfter`. `status` and `paymentLinkId` narrow the list.",
          auth: "apiKey",
          scope: "sessions:read",
          ok: { status: 200, schema: SessionList, description: "A page of sessions." },
          errors: [...AUTH_ERRORS, "parameter_invalid"],
        }),
      },
    )
    .get(
      "/payment-sessions/:id",
      async ({ request, params }) => {
        // One round trip (repository.ts readMerchantView): the key's last lookup is reused, and
        // the read's own statement checks that key still holds; if it does not, the key is looked
        // up again — a revoked key is refused there — and the session read with the fresh lookup.
        const caller = await apiKeyInHand(services, request);
        let auth = caller.auth;
        if (!isId("paymentSession", params.id)) throw notFound(params.id);
        const read = (keyCheck: ApiKeyAuth["check"] | undefined) =>
          readMerchantView(database.sql, {
            id: params.id,
            merchantId: auth.merchant.id,
            environment: auth.environment,
            publicMerchantId: publicMerchantId(auth.merchant, auth.environment),
            keyCheck,
          });
        let found = await read(caller.reused ? auth.check : undefined);
        if (!found.keyOk) {
          auth = await caller.lookAgain();
          found = await read(undefined);
        }
        if (!found.view) throw notFound(params.id);
        return found.view;
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Retrieve a payment session",
          description: "The session with its `history`: every status change with its time and reason.",
          auth: "apiKey",
          scope: "sessions:read",
          ok: { status: 200, schema: MerchantSession, description: "The session." },
          errors: [...AUTH_ERRORS, "resource_not_found"],
        }),
      },
    )
    .post(
      "/payment-sessions/:id/cancel",
      async ({ request, params }) => {
        const auth = await requireApiKey(services, request);
        validateBody(EmptyBody, await readJsonBody(request));
        await cancelSession(database, { merchantId: auth.merchant.id, environment: auth.environment }, params.id);
        return fullView(auth, await loadOwn(auth, params.id));
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Cancel a payment session",
          description: "Only while PENDING. The session becomes CANCELED with reason `canceled_by_merchant`; a webhook follows.",
          auth: "apiKey",
          scope: "sessions:write",
          body: EmptyBody,
          ok: { status: 200, schema: MerchantSession, description: "The canceled session." },
          errors: [...AUTH_ERRORS, ...BODY_ERRORS, "resource_not_found", "session_not_cancelable", "service_unavailable"],
        }),
      },
    );
}
