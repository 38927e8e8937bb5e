/**
 * Session-token endpoints, called from the payer's browser by the SDK and checkout
 * (`Authorization: Bearer pst_…`). They answer CORS (app.ts): a token is safe to hold in
 * a page, an API key never is.
 */
import { Elysia } from "elysia";
import { ApiError } from "../errors.ts";
import { depositsOfSession, findSessionById } from "../sessions/repository.ts";
import { requestCancel } from "../sessions/cancel.ts";
import { publicView } from "../sessions/views.ts";
import { readJsonBody } from "./body.ts";
import { requireSessionToken } from "./auth.ts";
import { PublicQuery, PublicSession } from "./payment-sessions.schemas.ts";
import { BODY_ERRORS, doc, EmptyBody, TOKEN_ERRORS } from "./schemas.ts";
import type { Services } from "./services.ts";
import { validateBody } from "./validate.ts";

const TAG = "Payment session (browser, session token)";

export function publicSessionRoutes(services: Services) {
  return new Elysia()
    .get(
      "/api/payment-sessions",
      async ({ request, query }) => {
        const auth = await requireSessionToken(services, request);
        if (query.paymentSessionId !== undefined && query.paymentSessionId !== auth.session.id) {
          throw new ApiError("session_token_mismatch", undefined, "paymentSessionId");
        }
        return publicView(auth.session, auth.merchantName, await depositsOfSession(services.database.db, auth.session.id));
      },
      {
        query: PublicQuery,
        detail: doc({
          tag: TAG,
          summary: "Retrieve the token's payment session",
          description:
            "The public view of the one session the token belongs to: no metadata, no reference id. The token names the session; `paymentSessionId` may be added as a check.",
          auth: "sessionToken",
          ok: { status: 200, schema: PublicSession, description: "The session." },
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
        return publicView(updated, auth.merchantName, await depositsOfSession(services.database.db, updated.id));
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Cancel the token's payment session (payer)",
          description: "Only while PENDING. The session becomes CANCELED with reason `canceled_by_payer`.",
          auth: "sessionToken",
          body: EmptyBody,
          ok: { status: 200, schema: PublicSession, description: "The canceled session." },
          errors: [...TOKEN_ERRORS, ...BODY_ERRORS, "session_not_cancelable", "service_unavailable"],
        }),
      },
    );
}
