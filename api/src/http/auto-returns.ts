/**
 * Automatic returns (API key; docs/refunds.md, "Automatic returns"): the merchant's setting per
 * environment, a session's returns, and "keep it" (the merchant acting first). The timers and
 * their decisions are refunds/auto-returns.ts; this file adapts HTTP.
 */
import { Elysia } from "elysia";
import { isId } from "../../../shared/ids.ts";
import { findSession } from "../sessions/repository.ts";
import { sessionNotFound } from "../refunds/store.ts";
import { autoReturnSetting, merchantActed, returnsOfSession, saveAutoReturnSetting, type AutoReturnRow } from "../refunds/auto-returns-store.ts";
import { readJsonBody } from "./body.ts";
import { changedBy, requireApiKey, type ApiKeyAuth } from "./auth.ts";
import { AutomaticReturnList, RefundSettings, RefundSettingsBody } from "./auto-returns.schemas.ts";
import { AUTH_ERRORS, BODY_ERRORS, doc, EmptyBody } from "./schemas.ts";
import type { Services } from "./services.ts";
import { validateBody } from "./validate.ts";

const TAG = "Refunds (server, API key)";

const view = (r: AutoReturnRow) => ({
  automaticReturnId: r.id,
  chainId: r.chain_id,
  reason: r.reason,
  status: r.state,
  dueAt: r.due_at.toISOString(),
  refundId: r.refund_id,
  outcome: r.outcome,
  createdAt: r.created_at.toISOString(),
  decidedAt: r.decided_at?.toISOString() ?? null,
});

export function autoReturnRoutes(services: Services) {
  const { database } = services;
  const settingsOf = async (auth: ApiKeyAuth) => {
    const s = await autoReturnSetting(database.sql, auth.merchant.id, auth.environment);
    return { automaticReturns: s.enabled, delaySeconds: s.delaySeconds };
  };
  const sessionOf = async (auth: ApiKeyAuth, id: string) => {
    const session = isId("paymentSession", id) ? await findSession(database.db, auth.merchant.id, auth.environment, id) : undefined;
    if (!session) throw sessionNotFound(id);
    return session;
  };

  return new Elysia()
    .get("/refund-settings", async ({ request }) => settingsOf(await requireApiKey(services, request)), {
      detail: doc({
        tag: TAG,
        summary: "Show your refund settings",
        description: "This environment's automatic returns: whether they are on (off by default) and how long money waits for you before it goes back.",
        auth: "apiKey",
        scope: "refunds:read",
        ok: { status: 200, schema: RefundSettings, description: "The settings." },
        errors: AUTH_ERRORS,
      }),
    })
    .put(
      "/refund-settings",
      async ({ request }) => {
        const auth = await requireApiKey(services, request);
        const body = validateBody(RefundSettingsBody, await readJsonBody(request));
        const now = await autoReturnSetting(database.sql, auth.merchant.id, auth.environment);
        const saved = await saveAutoReturnSetting(database.sql, auth.merchant.id, changedBy(auth, request), {
          enabled: body.automaticReturns ?? now.enabled,
          delaySeconds: body.delaySeconds ?? now.delaySeconds,
        });
        return { automaticReturns: saved.enabled, delaySeconds: saved.delaySeconds };
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Change your refund settings",
          description:
            "Turns automatic returns on or off in this environment, and sets their delay. A field left out keeps its value; the change is recorded in the security history. Applies to money that arrives from now on; a return already waiting keeps its due time, and one that falls due while they are off is skipped (`disabled`).",
          auth: "apiKey",
          scope: "refunds:write",
          body: RefundSettingsBody,
          ok: { status: 200, schema: RefundSettings, description: "Saved." },
          errors: [...AUTH_ERRORS, ...BODY_ERRORS],
        }),
      },
    )
    .get(
      "/payment-sessions/:id/automatic-returns",
      async ({ request, params }) => {
        const auth = await requireApiKey(services, request);
        const session = await sessionOf(auth, params.id);
        return { data: (await returnsOfSession(database.sql, session.id)).map(view) };
      },
      {
        detail: doc({
          tag: TAG,
          summary: "List a payment session's automatic returns",
          description: "Oldest first: one per network and reason, with when it falls due and what became of it.",
          auth: "apiKey",
          scope: "refunds:read",
          ok: { status: 200, schema: AutomaticReturnList, description: "The session's automatic returns." },
          errors: [...AUTH_ERRORS, "resource_not_found"],
        }),
      },
    )
    .post(
      "/payment-sessions/:id/automatic-returns/keep",
      async ({ request, params }) => {
        const auth = await requireApiKey(services, request);
        validateBody(EmptyBody, await readJsonBody(request));
        const session = await sessionOf(auth, params.id);
        await merchantActed(database.sql, session.id, "kept");
        return { data: (await returnsOfSession(database.sql, session.id)).map(view) };
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Keep the money of a session's automatic returns",
          description: "Its returns still `scheduled` become `kept`: nothing goes back by itself. Those already decided stay as they are. Calling it again changes nothing.",
          auth: "apiKey",
          scope: "refunds:write",
          body: EmptyBody,
          ok: { status: 200, schema: AutomaticReturnList, description: "The session's automatic returns, after." },
          errors: [...AUTH_ERRORS, ...BODY_ERRORS, "resource_not_found"],
        }),
      },
    );
}
