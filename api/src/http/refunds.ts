/**
 * Refund endpoints (API key; docs/refunds.md). The routes adapt HTTP: the rules live in
 * refunds/ (logic.ts pure, store.ts the tables), where the dashboard will reach them too.
 */
import { Elysia } from "elysia";
import type { TransactionSql } from "postgres";
import { ApiError } from "../errors.ts";
import { isId } from "../../../shared/ids.ts";
import { withIdempotency } from "../credentials/idempotency-keys.ts";
import { indexerTablesPresent } from "../sessions/indexed.ts";
import { findSession } from "../sessions/repository.ts";
import { checkRefundInput } from "../refunds/input.ts";
import { approveRefund, cancelRefund, createRefund, findRefund, listRefunds, refundNotFound, sessionNotFound, type RefundRow } from "../refunds/store.ts";
import { refundViews } from "../refunds/read-views.ts";
import type { LinkBases } from "../refunds/link-store.ts";
import { readJsonBody } from "./body.ts";
import { readIdempotencyKey, requestHash } from "./idempotency.ts";
import { requireApiKey, type ApiKeyAuth } from "./auth.ts";
import { CreateRefundBody, Refund, RefundBalanceList, RefundList } from "./refunds.schemas.ts";
import { refundBalances } from "../refunds/balances.ts";
import { AUTH_ERRORS, BODY_ERRORS, doc, EmptyBody, PageQuery } from "./schemas.ts";
import type { Services } from "./services.ts";
import { validateBody } from "./validate.ts";

const TAG = "Refunds (server, API key)";

export function refundRoutes(services: Services) {
  const { database } = services;
  const scopeOf = (auth: ApiKeyAuth) => ({ merchantId: auth.merchant.id, environment: auth.environment });

  const bases: LinkBases = { encryptionKey: services.encryptionKey, publicUrl: services.config.publicUrl, sandboxPublicUrl: services.config.sandboxPublicUrl };
  const viewsOf = (rows: RefundRow[]) => refundViews(database, bases, rows);

  async function page(auth: ApiKeyAuth, query: { limit?: string; startingAfter?: string }, sessionId?: string) {
    const limit = query.limit === undefined ? 20 : Number(query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new ApiError("parameter_invalid", "limit must be a whole number from 1 to 100.", "limit");
    let startingAfter: string | undefined;
    if (query.startingAfter !== undefined) {
      const cursor = isId("refund", query.startingAfter) ? await findRefund(database.db, scopeOf(auth), query.startingAfter) : undefined;
      if (!cursor || (sessionId !== undefined && cursor.sessionId !== sessionId)) {
        throw new ApiError("parameter_invalid", "startingAfter is not a refund of this list.", "startingAfter");
      }
      startingAfter = cursor.id;
    }
    const found = await listRefunds(database.db, { ...scopeOf(auth), limit, ...(sessionId ? { sessionId } : {}), ...(startingAfter ? { startingAfter } : {}) });
    return { data: await viewsOf(found.rows), hasMore: found.hasMore, nextCursor: found.hasMore ? found.rows[found.rows.length - 1]!.id : null };
  }

  return new Elysia()
    .get(
      "/refund-balances",
      async ({ request }) => {
        const auth = await requireApiKey(services, request);
        return { data: await refundBalances(services.networks, services.config.sweeps.relayerPrivateKey?.reveal(), auth.merchant.id, auth.environment) };
      },
      {
        detail: doc({
          tag: TAG,
          summary: "List your refund balances",
          description: "Per enabled network of this environment: the address of your refund balance (fund it with the network's stablecoins; refunds are paid from it) and what it holds per token, read from the chain.",
          auth: "apiKey",
          scope: "refunds:read",
          ok: { status: 200, schema: RefundBalanceList, description: "Your refund balances." },
          errors: [...AUTH_ERRORS],
        }),
      },
    )
    .post(
      "/payment-sessions/:id/refunds",
      async ({ request, params, set }) => {
        const auth = await requireApiKey(services, request);
        const key = readIdempotencyKey(request.headers);
        const raw = await readJsonBody(request);
        const input = checkRefundInput(validateBody(CreateRefundBody, raw));
        if (!isId("paymentSession", params.id)) throw sessionNotFound(params.id);
        const indexerPresent = await indexerTablesPresent(database.sql);
        const create = async (tx: TransactionSql) => {
          const { link, ...rest } = input;
          const row = await createRefund(tx, scopeOf(auth), {
            sessionId: params.id,
            ...rest,
            ...(link ? { link: { ...link, encryptionKey: services.encryptionKey } } : {}),
            maxPerRefundMinor: services.config.refunds.maxPerRefundMinor,
            indexerPresent,
          });
          // Read in the create's transaction: its link (and so its claimUrl) is not committed yet.
          return { status: 201, body: (await refundViews({ db: database.db, sql: tx }, bases, [row]))[0]! };
        };
        // A key is scoped to this route; the session is part of what it was sent with, so the same
        // key and body for another session is another request (422), never that session's refund.
        const result = key
          ? await withIdempotency(
              database.sql,
              { secret: services.encryptionKey, ...scopeOf(auth), endpoint: "POST /payment-sessions/{id}/refunds" },
              key,
              requestHash({ paymentSessionId: params.id, body: raw }),
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
          summary: "Refund a payment session",
          description:
            "Sends money the session received back to the address that paid it, in the token and on the network it came in, from your refund balance (docs/refunds.md). `amount` defaults to everything left to refund; a session paid in two tokens is refunded in the proportions left in each unless `token` names one. The sum of a session's refunds never exceeds what it received. With `destination: \"link\"` the payer chooses the address: the refund waits (`awaiting_claim`) until they claim it at `claimUrl` (a single-use page that expires after `linkExpiresInSeconds`), then goes out, or waits for your approval first (`requireApproval`). The amount is held from creation either way. `Idempotency-Key` supported: for 24 h the same key and body replay the first answer.",
          auth: "apiKey",
          scope: "refunds:write",
          body: CreateRefundBody,
          ok: { status: 201, schema: Refund, description: "Created, PENDING." },
          errors: [
            ...AUTH_ERRORS,
            ...BODY_ERRORS,
            "parameter_invalid",
            "amount_invalid",
            "amount_too_large",
            "address_checksum_invalid",
            "idempotency_key_invalid",
            "idempotency_key_reused",
            "resource_not_found",
            "session_not_refundable",
            "refund_exceeds_refundable",
            "service_unavailable",
          ],
        }),
      },
    )
    .get(
      "/payment-sessions/:id/refunds",
      async ({ request, params, query }) => {
        const auth = await requireApiKey(services, request);
        const session = isId("paymentSession", params.id) ? await findSession(database.db, auth.merchant.id, auth.environment, params.id) : undefined;
        if (!session) throw sessionNotFound(params.id);
        return page(auth, query, session.id);
      },
      {
        query: PageQuery,
        detail: doc({
          tag: TAG,
          summary: "List a payment session's refunds",
          description: "Newest first, in pages of `limit` (1–100, default 20). Pass the previous page's `nextCursor` as `startingAfter`.",
          auth: "apiKey",
          scope: "refunds:read",
          ok: { status: 200, schema: RefundList, description: "A page of the session's refunds." },
          errors: [...AUTH_ERRORS, "parameter_invalid", "resource_not_found"],
        }),
      },
    )
    .get(
      "/refunds",
      async ({ request, query }) => page(await requireApiKey(services, request), query),
      {
        query: PageQuery,
        detail: doc({
          tag: TAG,
          summary: "List refunds",
          description: "Every refund of this environment, newest first, in pages of `limit` (1–100, default 20). Pass the previous page's `nextCursor` as `startingAfter`.",
          auth: "apiKey",
          scope: "refunds:read",
          ok: { status: 200, schema: RefundList, description: "A page of refunds." },
          errors: [...AUTH_ERRORS, "parameter_invalid"],
        }),
      },
    )
    .get(
      "/refunds/:id",
      async ({ request, params }) => {
        const auth = await requireApiKey(services, request);
        const row = isId("refund", params.id) ? await findRefund(database.db, scopeOf(auth), params.id) : undefined;
        if (!row) throw refundNotFound(params.id);
        return (await viewsOf([row]))[0]!;
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Retrieve a refund",
          auth: "apiKey",
          scope: "refunds:read",
          ok: { status: 200, schema: Refund, description: "The refund." },
          errors: [...AUTH_ERRORS, "resource_not_found"],
        }),
      },
    )
    .post(
      "/refunds/:id/cancel",
      async ({ request, params }) => {
        const auth = await requireApiKey(services, request);
        validateBody(EmptyBody, await readJsonBody(request));
        if (!isId("refund", params.id)) throw refundNotFound(params.id);
        return (await viewsOf([await cancelRefund(database.sql, scopeOf(auth), params.id)]))[0]!;
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Cancel a refund",
          description: "Only while PENDING (not sent yet). The refund becomes CANCELED and its amount is refundable again.",
          auth: "apiKey",
          scope: "refunds:write",
          body: EmptyBody,
          ok: { status: 200, schema: Refund, description: "The canceled refund." },
          errors: [...AUTH_ERRORS, ...BODY_ERRORS, "resource_not_found", "refund_not_cancelable", "service_unavailable"],
        }),
      },
    )
    .post(
      "/refunds/:id/approve",
      async ({ request, params }) => {
        const auth = await requireApiKey(services, request);
        validateBody(EmptyBody, await readJsonBody(request));
        if (!isId("refund", params.id)) throw refundNotFound(params.id);
        return (await viewsOf([await approveRefund(database.sql, scopeOf(auth), params.id)]))[0]!;
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Approve a claimed refund",
          description:
            "For a refund to a link created with `requireApproval: true`, once the payer has claimed it (`waitingReason: awaiting_approval`; the parts show the claimed address): it becomes due and is sent. Before the claim, or for any other refund: `refund_not_approvable`. To refuse it, cancel it instead.",
          auth: "apiKey",
          scope: "refunds:write",
          body: EmptyBody,
          ok: { status: 200, schema: Refund, description: "The approved refund, PENDING with no waiting reason: about to be sent." },
          errors: [...AUTH_ERRORS, ...BODY_ERRORS, "resource_not_found", "refund_not_approvable", "service_unavailable"],
        }),
      },
    );
}
