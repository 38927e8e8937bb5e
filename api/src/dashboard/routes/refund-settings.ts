/**
 * Automatic returns from the dashboard: the Refunds settings page (the API's own
 * saveAutoReturnSetting, its security-history line naming the person) and "Keep the money" on a
 * payment's page (the API's keep, refunds/auto-returns-store.ts merchantActed, with the person's
 * line in the same transaction). The form is checked against the API's own body schema, so a
 * delay out of range gets the API's message and changes nothing.
 */
import { Elysia } from "elysia";
import { isId } from "../../../../shared/ids.ts";
import { changeStatement } from "../../credentials/security-history.ts";
import { ApiError } from "../../errors.ts";
import { RefundSettingsBody } from "../../http/auto-returns.schemas.ts";
import { validateBody } from "../../http/validate.ts";
import { autoReturnSetting, merchantActed, saveAutoReturnSetting } from "../../refunds/auto-returns-store.ts";
import { findSession } from "../../sessions/repository.ts";
import { attempt, errorPage, type PageContext } from "../context.ts";
import type { Notice } from "../layout.ts";
import { DELAY_UNITS, refundSettingsBody, type DelayUnit } from "../pages/auto-returns.ts";
import { redirect } from "../request.ts";
import { HIDE, noticeOf, owner, type DashboardKit } from "./kit.ts";

/** The form's delay in seconds; a value that is no whole number of a known unit is refused in the API's words. */
export function delaySecondsOf(delay: string, unit: string): number {
  const n = delay.trim();
  if (!/^[0-9]{1,9}$/.test(n) || !(unit in DELAY_UNITS)) throw new ApiError("parameter_invalid", "The delay must be a whole number of seconds, minutes, hours or days.", "delay");
  return Number(n) * DELAY_UNITS[unit as DelayUnit];
}

export function refundSettingsRoutes({ services, sql, pageRoute, actionRoute }: DashboardKit) {
  async function settingsPage(c: PageContext, notice?: Notice, error?: { message: string; status: number; typed: { delay: string; unit: string; on: boolean } }) {
    const s = await autoReturnSetting(sql, c.login.merchant.id, c.env);
    return c.render("refunds", "Refund settings", refundSettingsBody(c.env, c.login, s, error?.typed, error?.message), { notice, status: error?.status ?? 200 });
  }

  return new Elysia()
    .get(
      "/dashboard/:env/settings/refunds",
      pageRoute(async (c) => settingsPage(c, noticeOf(c.query))),
      HIDE,
    )
    .post(
      "/dashboard/:env/settings/refunds",
      actionRoute(async (c) => {
        const typed = { delay: (c.form.get("delay") ?? "").slice(0, 20), unit: (c.form.get("unit") ?? "").slice(0, 20), on: c.form.get("automaticReturns") === "true" };
        const res = await attempt(() => {
          const body = validateBody(RefundSettingsBody, { automaticReturns: typed.on, delaySeconds: delaySecondsOf(typed.delay, typed.unit) });
          return saveAutoReturnSetting(sql, c.login.merchant.id, c.by(), { enabled: body.automaticReturns!, delaySeconds: body.delaySeconds! });
        });
        if (!res.ok) return settingsPage(c, undefined, { message: res.error.message, status: res.error.status, typed });
        return redirect(`/dashboard/${c.env}/settings/refunds?notice=refund-settings-saved`);
      }),
      HIDE,
    )
    .post(
      "/dashboard/:env/transactions/:id/automatic-returns/keep",
      actionRoute(async (c) => {
        const session = isId("paymentSession", c.params.id!) ? await findSession(services.database.db, c.login.merchant.id, c.env, c.params.id!) : undefined;
        if (!session) return errorPage(404, "Not found", "No such payment session in this account.");
        // The keep and its line commit together; a keep that finds nothing waiting changes nothing and records nothing.
        await sql.begin(async (tx) => {
          const kept = await merchantActed(tx, session.id, "kept");
          if (kept > 0) await changeStatement(tx, c.by(), "automatic_returns_kept", { paymentSessionId: session.id, kept });
        });
        return redirect(`/dashboard/${c.env}/transactions/${session.id}?notice=automatic-returns-kept#ar`);
      }),
      HIDE,
    );
}
