/**
 * The refund balance page (dashboard/refunds.ts reads it: addresses and balances from the chain,
 * what waiting refunds need) and, in the sandbox, funding it from the faucet: the very tool the
 * API's POST /sandbox/refund-balances/fund calls (sessions/sandbox-tools.ts fundRefundBalance).
 */
import { Elysia } from "elysia";
import { hasFaucet } from "../../sandbox/faucet.ts";
import { fundRefundBalance } from "../../refunds/sandbox-fund.ts";
import { attempt, errorPage, type PageContext } from "../context.ts";
import type { Notice } from "../layout.ts";
import { refundBalanceBody } from "../pages/refund-balance.ts";
import { loadRefundBalancePage } from "../refunds.ts";
import { redirect } from "../request.ts";
import { HIDE, noticeOf, owner, type DashboardKit } from "./kit.ts";

export function refundBalanceRoutes({ services, pageRoute, actionRoute }: DashboardKit) {
  const faucetChains = new Set(services.networks.filter((n) => n.environment === "sandbox" && hasFaucet(n)).map((n) => n.chainId));
  async function balancePage(c: PageContext, notice?: Notice, status = 200) {
    const p = await loadRefundBalancePage(services, owner(c));
    return c.render("refund-balance", "Refund balance", refundBalanceBody(c.env, c.login, p, faucetChains), { notice, status });
  }
  return new Elysia()
    .get(
      "/dashboard/:env/refund-balance",
      pageRoute(async (c) => balancePage(c, noticeOf(c.query))),
      HIDE,
    )
    .post(
      "/dashboard/:env/refund-balance/fund",
      actionRoute(async (c) => {
        if (c.env !== "sandbox") return errorPage(404, "No such tool", "Sandbox tools exist only in the sandbox.");
        const chainId = Number(c.form.get("chainId") ?? "");
        const token = (c.form.get("token") ?? "").trim();
        const amount = (c.form.get("amount") ?? "").trim();
        const res = await attempt(() =>
          fundRefundBalance(services, c.login.merchant, { ...(Number.isInteger(chainId) && chainId > 0 ? { chainId } : {}), ...(token ? { token } : {}), ...(amount ? { amount } : {}) }),
        );
        if (!res.ok) return balancePage(c, { kind: "error", text: res.error.message }, res.error.status);
        return redirect(`/dashboard/sandbox/refund-balance?notice=refund-balance-funded`);
      }),
      HIDE,
    );
}
