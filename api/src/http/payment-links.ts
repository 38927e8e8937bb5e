/**
 * Payment links (API key; docs/payment-links.md): a page at /pay/{id} that starts a payment
 * session for whoever opens it, for a merchant without a server of its own. The page itself is a
 * face (api/src/payment-page/); these routes make, list, show and deactivate links.
 */
import { Elysia } from "elysia";
import type { TransactionSql } from "postgres";
import { isId } from "../../../shared/ids.ts";
import { ApiError } from "../errors.ts";
import { withIdempotency } from "../credentials/idempotency-keys.ts";
import { checkCreateLink } from "../payment-links/rules.ts";
import { deactivateLink, findLink, insertLink, listLinks, type Owner } from "../payment-links/store.ts";
import { linkView } from "../payment-links/view.ts";
import { readJsonBody } from "./body.ts";
import { readIdempotencyKey, requestHash } from "./idempotency.ts";
import { requireApiKey, type ApiKeyAuth } from "./auth.ts";
import { CreateLinkBody, LinkList, LinkListQuery, PaymentLink } from "./payment-links.schemas.ts";
import { AUTH_ERRORS, BODY_ERRORS, doc, EmptyBody } from "./schemas.ts";
import type { Services } from "./services.ts";
import { validateBody } from "./validate.ts";

const TAG = "Payment links (server, API key)";

export function paymentLinkRoutes(services: Services) {
  const { database, config } = services;
  const owner = (auth: ApiKeyAuth): Owner => ({ merchantId: auth.merchant.id, environment: auth.environment });
  const baseOf = (auth: ApiKeyAuth) => (auth.environment === "sandbox" ? config.sandboxPublicUrl : config.publicUrl);
  const notFound = (id: string) => new ApiError("resource_not_found", `No payment link ${JSON.stringify(id.slice(0, 64))} in this account and environment.`, "id");

  return new Elysia()
    .post(
      "/payment-links",
      async ({ request, set }) => {
        const auth = await requireApiKey(services, request);
        const key = readIdempotencyKey(request.headers);
        const raw = await readJsonBody(request);
        const input = checkCreateLink(validateBody(CreateLinkBody, raw), {
          bounds: { minAmountMinor: config.minAmountMinor, maxAmountMinor: config.maxAmountMinor },
          environment: auth.environment,
          now: new Date(),
        });
        const create = async (tx: TransactionSql) => ({
          status: 201,
          body: linkView(await insertLink(tx, owner(auth), input), baseOf(auth), new Date()),
        });
        const result = key
          ? await withIdempotency(database.sql, { secret: services.encryptionKey, ...owner(auth), endpoint: "POST /payment-links" }, key, requestHash(raw), create)
          : { ...(await database.sql.begin(create)), replayed: false };
        set.status = result.status;
        if (result.replayed) set.headers["idempotent-replayed"] = "true";
        return result.body;
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Create a payment link",
          description:
            "A page at the answer's `url` that starts a payment session for whoever opens it and pays: a fixed `amount`, or one the payer types within `minAmount`..`maxAmount`. Each session carries the link's `metadata` and `paymentLinkId`, in its views and webhooks. Send `Idempotency-Key: <unique>` to make retries safe: for 24 h the same key and body replay the first answer.",
          auth: "apiKey",
          scope: "payment_links:write",
          body: CreateLinkBody,
          ok: { status: 201, schema: PaymentLink, description: "Created." },
          errors: [
            ...AUTH_ERRORS,
            ...BODY_ERRORS,
            "amount_invalid",
            "amount_too_small",
            "amount_too_large",
            "currency_unsupported",
            "redirect_url_invalid",
            "idempotency_key_invalid",
            "idempotency_key_reused",
            "service_unavailable",
          ],
        }),
      },
    )
    .get(
      "/payment-links",
      async ({ request, query }) => {
        const auth = await requireApiKey(services, request);
        const limit = query.limit === undefined ? 20 : Number(query.limit);
        if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new ApiError("parameter_invalid", "limit must be a whole number from 1 to 100.", "limit");
        if (query.startingAfter !== undefined && !(isId("paymentLink", query.startingAfter) && (await findLink(database.db, owner(auth), query.startingAfter)))) {
          throw new ApiError("parameter_invalid", "startingAfter is not a payment link of this account and environment.", "startingAfter");
        }
        const page = await listLinks(database.db, { ...owner(auth), limit, ...(query.startingAfter ? { startingAfter: query.startingAfter } : {}) });
        const now = new Date();
        return {
          data: page.rows.map((l) => linkView(l, baseOf(auth), now)),
          hasMore: page.hasMore,
          nextCursor: page.hasMore ? page.rows[page.rows.length - 1]!.id : null,
        };
      },
      {
        query: LinkListQuery,
        detail: doc({
          tag: TAG,
          summary: "List payment links",
          description: "Newest first, in pages of `limit` (1–100, default 20). Pass the previous page's `nextCursor` as `startingAfter`.",
          auth: "apiKey",
          scope: "payment_links:read",
          ok: { status: 200, schema: LinkList, description: "A page of payment links." },
          errors: [...AUTH_ERRORS, "parameter_invalid"],
        }),
      },
    )
    .get(
      "/payment-links/:id",
      async ({ request, params }) => {
        const auth = await requireApiKey(services, request);
        const link = isId("paymentLink", params.id) ? await findLink(database.db, owner(auth), params.id) : undefined;
        if (!link) throw notFound(params.id);
        return linkView(link, baseOf(auth), new Date());
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Retrieve a payment link",
          description: "The link with its `status` and `uses`. Its sessions: GET /payment-sessions shows each one's `paymentLinkId`; the dashboard lists them per link.",
          auth: "apiKey",
          scope: "payment_links:read",
          ok: { status: 200, schema: PaymentLink, description: "The payment link." },
          errors: [...AUTH_ERRORS, "resource_not_found"],
        }),
      },
    )
    .post(
      "/payment-links/:id/deactivate",
      async ({ request, params }) => {
        const auth = await requireApiKey(services, request);
        validateBody(EmptyBody, await readJsonBody(request));
        const link = isId("paymentLink", params.id) ? await deactivateLink(database.db, owner(auth), params.id) : undefined;
        if (!link) throw notFound(params.id);
        return linkView(link, baseOf(auth), new Date());
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Deactivate a payment link",
          description:
            "From now on its page starts no session and says so. Sessions it started are not touched (cancel one with POST /payment-sessions/{id}/cancel). Deactivating a deactivated link answers it unchanged. There is no reactivation: make a new link.",
          auth: "apiKey",
          scope: "payment_links:write",
          body: EmptyBody,
          ok: { status: 200, schema: PaymentLink, description: "The deactivated link." },
          errors: [...AUTH_ERRORS, ...BODY_ERRORS, "resource_not_found", "service_unavailable"],
        }),
      },
    );
}
