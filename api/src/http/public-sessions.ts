/**
 * Session-token endpoints, called from the payer's browser by the SDK and checkout
 * (`Authorization: Bearer pst_…`). They answer CORS (app.ts): a token is safe to hold in
 * a page, an API key never is.
 *
 * GET answers with an ETag and honours If-None-Match (304): the checkout polls it twice a
 * second while open ("conditional polling"), which costs a 304 while nothing changes.
 */
import { Elysia } from "elysia";
import { ApiError } from "../errors.ts";
import { depositsOfSession, findSessionById } from "../sessions/repository.ts";
import { requestCancel } from "../sessions/cancel.ts";
import { publicView, type SessionRow } from "../sessions/views.ts";
import { readIndexedAlone } from "../sessions/indexed.ts";
import { authorizedPayments } from "../sessions/movements.ts";
import { payerView, viewEtag, type PayerSessionView } from "../sessions/payer-view.ts";
import { gaslessOffers, withGaslessOffers } from "../gasless/offers.ts";
import { relayerAddressOn } from "../credentials/relayer.ts";
import { readJsonBody } from "./body.ts";
import { requireSessionToken, type SessionTokenAuth } from "./auth.ts";
import { PublicQuery } from "./payment-sessions.schemas.ts";
import { BODY_ERRORS, doc, EmptyBody, TOKEN_ERRORS } from "./schemas.ts";
import { PayerSession } from "./public-sessions.schemas.ts";
import type { Services } from "./services.ts";
import { validateBody } from "./validate.ts";

const TAG = "Payment session (browser, session token)";

/** The payer's view of the token's session, payments seen on-chain included. */
export async function loadPayerView(services: Services, auth: SessionTokenAuth, row: SessionRow = auth.session): Promise<PayerSessionView> {
  const { db, sql } = services.database;
  // Read with the token (requireSessionToken) unless the row is newer (after a cancel).
  const deposits = row === auth.session ? auth.deposits : await depositsOfSession(db, row.id);
  // While the indexer rebuilds, the payments are not known: show none rather than fail.
  const indexed = await readIndexedAlone(sql, row.id);
  const transfers = indexed === "not_ready" ? [] : [...indexed.transfers, ...authorizedPayments(indexed.authorized, deposits)];
  const view = payerView(
    publicView(row, auth.merchantName, deposits),
    { statusReason: row.statusReason, merchantId: auth.merchantPublicId, tokenExpiresAt: row.tokenExpiresAt },
    services.networks,
    transfers,
  );
  // Per network, what to sign to pay by authorization (gasless/offers.ts), or null.
  const relayerKey = services.config.sweeps.relayerPrivateKey?.reveal();
  return withGaslessOffers(view, await gaslessOffers(row, deposits, services.networks, (net) => relayerAddressOn(net, relayerKey)));
}

export function publicSessionRoutes(services: Services) {
  return new Elysia()
    .get(
      "/api/payment-sessions",
      async ({ request, query, set }) => {
        const auth = await requireSessionToken(services, request);
        if (query.paymentSessionId !== undefined && query.paymentSessionId !== auth.session.id) {
          throw new ApiError("session_token_mismatch", undefined, "paymentSessionId");
        }
        const view = await loadPayerView(services, auth);
        const etag = viewEtag(view);
        set.headers["etag"] = etag;
        // The view changes with the chain: never from a cache without asking.
        set.headers["cache-control"] = "no-cache, private";
        if (request.headers.get("if-none-match") === etag) {
          set.status = 304;
          return "";
        }
        return view;
      },
      {
        query: PublicQuery,
        detail: doc({
          tag: TAG,
          summary: "Retrieve the token's payment session",
          description:
            "The payer's view of the one session the token belongs to: no metadata, no reference id; with the status reason, the merchant's public id, per network what a wallet needs to add it, and the payments seen on-chain with their confirmations. The token names the session; `paymentSessionId` may be added as a check. Answers carry an `ETag`; with `If-None-Match` set to it, an unchanged session answers `304` with no body (the checkout polls this way).",
          auth: "sessionToken",
          ok: { status: 200, schema: PayerSession, description: "The session." },
          errors: [...TOKEN_ERRORS, "session_token_mismatch"],
        }),
      },
    )
    .post(
      "/api/payment-sessions/cancel",
      async ({ request }) => {
        const auth = await requireSessionToken(services, request);
        validateBody(EmptyBody, await readJsonBody(request));
        await requestCancel(services.database.sql, auth.session.id, "payer");
        const updated = (await findSessionById(services.database.db, auth.session.id))!;
        return loadPayerView(services, auth, updated);
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Cancel the token's payment session (payer)",
          description: "Only while PENDING. The session becomes CANCELED with reason `canceled_by_payer`.",
          auth: "sessionToken",
          body: EmptyBody,
          ok: { status: 200, schema: PayerSession, description: "The canceled session." },
          errors: [...TOKEN_ERRORS, ...BODY_ERRORS, "session_not_cancelable", "service_unavailable"],
        }),
      },
    );
}
