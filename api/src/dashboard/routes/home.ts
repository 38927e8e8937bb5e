/** GET /dashboard/:env — the home page (README "The merchant dashboard"): reads (home.ts), figures (home-figures.ts), page (pages/home.ts), and the low refund balance notice (refunds.ts). */
import { Elysia } from "elysia";
import type { Sql } from "postgres";
import type { PageContext } from "../context.ts";
import { figures, parsePeriod, periodDays } from "../home-figures.ts";
import { loadAttention, loadDays, today } from "../home.ts";
import { homeBody } from "../pages/home.ts";
import { HIDE, type DashboardKit } from "./kit.ts";
import type { Services } from "../../http/services.ts";
import { html } from "../html.ts";
import { lowBalanceNotice } from "../pages/refund-balance.ts";
import { lowRefundBalances } from "../refunds.ts";

export function homeRoutes({ services, sql, pageRoute }: DashboardKit) {
  return new Elysia().get("/dashboard/:env", pageRoute(homePage(services, sql)), HIDE);
}

function homePage(services: Services, sql: Sql) {
  return async (c: PageContext): Promise<Response> => {
    // A period other than 7, 30 or 90 days is a 400, with the default period's page and why.
    const { days: period, problem } = parsePeriod(c.query.days);
    const owner = { merchantId: c.login.merchant.id, environment: c.env };
    const todayDay = await today(sql);
    const days = periodDays(todayDay, period);
    const [byDay, attention, low] = await Promise.all([loadDays(sql, owner, days, todayDay), loadAttention(sql, owner, days[0]!), lowRefundBalances(services, owner)]);
    const body = html`${lowBalanceNotice(c.env, low, true)}${homeBody({ env: c.env, period, figures: figures(days, byDay), attention, problem })}`;
    return c.render("home", "Home", body, { status: problem ? 400 : 200 });
  };
}
