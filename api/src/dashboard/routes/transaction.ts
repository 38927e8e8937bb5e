/**
 * One payment's page (detail.ts) and what can be done from it: the sandbox tools (the functions
 * the API's sandbox routes call, sessions/sandbox-tools.ts), redelivering one of its events, and
 * cancelling it behind a confirmation step. A refusal shows the payment's page with the
 * catalogue error's message.
 */
import { Elysia } from "elysia";
import { isId } from "../../../../shared/ids.ts";
import type { Merchant } from "../../credentials/store.ts";
import { cancelSession } from "../../sessions/cancel.ts";
import { expireSandboxSession, failNextSweep, paySandboxSession, simulateSandboxError, type SandboxServices } from "../../sessions/sandbox-tools.ts";
import { redeliverEvent } from "../../webhooks/redelivery.ts";
import { attempt, errorPage, type ActionContext } from "../context.ts";
import { loadDetail } from "../detail.ts";
import { html } from "../html.ts";
import { cancelBody } from "../pages/cancel.ts";
import { transactionBody, type SandboxTool } from "../pages/transaction.ts";
import { redirect } from "../request.ts";
import { HIDE, noticeOf, owner, type DashboardKit } from "./kit.ts";

/** The sandbox tools a payment's page offers, by the name in its path: the functions the API's sandbox routes call. */
type SandboxToolRun = (services: SandboxServices, merchant: Merchant, id: string) => Promise<unknown>;
const SANDBOX_TOOL_RUNS = new Map<string, SandboxToolRun>(
  Object.entries({
    pay: (s, m, id) => paySandboxSession(s, m, id),
    expire: expireSandboxSession,
    "fail-next-sweep": failNextSweep,
    "simulate-error": simulateSandboxError,
  } satisfies Record<SandboxTool, SandboxToolRun>),
);

export function transactionRoutes({ services, pageRoute, actionRoute }: DashboardKit) {
  /** The payment's page again, with what refused the action and its status. */
  async function toolError(c: ActionContext, message: string, status: number) {
    const d = await loadDetail(services, c.login.merchant, c.env, c.params.id!);
    if (!d) return errorPage(404, "Not found", "No such payment session in this account.");
    return c.render("transactions", `Payment ${d.view.amount} ${d.view.currency}`, transactionBody(c.env, c.login, d), { status, notice: { kind: "error", text: message } });
  }

  return (
    new Elysia()
      .get(
        "/dashboard/:env/transactions/:id",
        pageRoute(async (c) => {
          const d = await loadDetail(services, c.login.merchant, c.env, c.params.id!);
          if (!d) return c.render("transactions", "Not found", html`<p>No payment session ${c.params.id} in this account's ${c.env}.</p>`, { status: 404 });
          return c.render("transactions", `Payment ${d.view.amount} ${d.view.currency}`, transactionBody(c.env, c.login, d), { notice: noticeOf(c.query) });
        }),
        HIDE,
      )
      .post(
        "/dashboard/:env/transactions/:id/sandbox/:tool",
        actionRoute(async (c) => {
          const run = SANDBOX_TOOL_RUNS.get(c.params.tool!);
          if (c.env !== "sandbox" || !run) return errorPage(404, "No such tool", "Sandbox tools exist only in the sandbox.");
          const res = await attempt(() => run(services, c.login.merchant, c.params.id!));
          if (!res.ok) return toolError(c, res.error.message, res.error.status);
          return redirect(`/dashboard/${c.env}/transactions/${c.params.id}?notice=tool-done`);
        }),
        HIDE,
      )
      .post(
        "/dashboard/:env/transactions/:id/events/:eventId/redeliver",
        actionRoute(async (c) => {
          // The event must belong to this session (and so to this merchant and environment).
          const d = await loadDetail(services, c.login.merchant, c.env, c.params.id!);
          if (!d || !d.events.some((e) => e.event.id === c.params.eventId)) return errorPage(404, "Not found", "No such event in this account.");
          const res = await attempt(() => redeliverEvent(services.database, owner(c), c.by(), c.params.eventId!));
          if (!res.ok) return toolError(c, res.error.message, res.error.status);
          return redirect(`/dashboard/${c.env}/transactions/${c.params.id}?notice=redelivered`);
        }),
        HIDE,
      )
      // A confirmation step, not a script's confirm(): it works under the CSP and without script.
      .get(
        "/dashboard/:env/transactions/:id/cancel",
        pageRoute(async (c) => {
          const d = await loadDetail(services, c.login.merchant, c.env, c.params.id!);
          if (!d) return c.render("transactions", "Not found", html`<p>No payment session ${c.params.id} in this account's ${c.env}.</p>`, { status: 404 });
          return c.render("transactions", "Cancel this payment?", cancelBody(c.env, c.login, d.view));
        }),
        HIDE,
      )
      .post(
        "/dashboard/:env/transactions/:id/cancel",
        actionRoute(async (c) => {
          if (!isId("paymentSession", c.params.id!)) return errorPage(404, "Not found", "No such payment session in this account.");
          // The API's own cancel: the same rule (only PENDING, nothing paid) and message; as the
          // person is named, its security-history line commits with the cancel (sessions/cancel.ts).
          const res = await attempt(() => cancelSession(services.database, owner(c), c.params.id!, c.by()));
          if (!res.ok) return toolError(c, res.error.message, res.error.status);
          return redirect(`/dashboard/${c.env}/transactions/${c.params.id}?notice=canceled`);
        }),
        HIDE,
      )
  );
}
