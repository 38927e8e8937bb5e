/**
 * The Approvals page (claimed refund links that wait for the merchant) and Approve: the API's own
 * approveRefund (refunds/store.ts), with the person's security-history line in its transaction.
 * In production a refund above SERVICE_DASHBOARD_REFUND_PASSWORD_ABOVE asks for the password again,
 * as its create does: an approval is the moment the money is sent, to an address the payer chose.
 */
import { Elysia } from "elysia";
import { isId } from "../../../../shared/ids.ts";
import { formatAmount, formatUnitAmount } from "../../../../shared/money.ts";
import { recordSecurityEvent } from "../../credentials/security-history.ts";
import { approveRefund, findRefund } from "../../refunds/store.ts";
import type { RefundView } from "../../refunds/view.ts";
import { attempt, errorPage, type PageContext } from "../context.ts";
import type { Notice } from "../layout.ts";
import { approvalsBody } from "../pages/refund-approvals.ts";
import { refundsAwaitingApproval } from "../refunds.ts";
import { redirect } from "../request.ts";
import { checkPassword } from "../users.ts";
import { HIDE, noticeOf, owner, type DashboardKit } from "./kit.ts";

/** Whether a decimal amount ("1.50", "2.000001") is above a threshold in minor units (cents), compared exactly. Pure. */
export function aboveThreshold(amount: string, thresholdMinor: bigint): boolean {
  const [whole = "0", frac = ""] = amount.split(".");
  const places = Math.max(frac.length, 2);
  const value = BigInt(whole + frac.padEnd(places, "0"));
  return value > thresholdMinor * 10n ** BigInt(places - 2);
}

export function refundApprovalRoutes({ services, sql, pageRoute, actionRoute }: DashboardKit) {
  const threshold = services.config.dashboard.refundPasswordAboveMinor;
  /** A production refund above the threshold, its amount as the view spells it ("x.yy", more places when its unit has them). */
  const needsPassword = (env: string, amount: string) => env === "production" && aboveThreshold(amount, threshold);
  const thresholdText = (currency: string) => `${formatAmount(threshold)} ${currency}`;

  async function approvalsPage(c: PageContext, notice?: Notice, status = 200) {
    const rows = await refundsAwaitingApproval(services, owner(c));
    const body = approvalsBody(c.env, c.login, rows, (r: RefundView) => needsPassword(c.env, r.amount), thresholdText(rows[0]?.currency ?? "USD"));
    return c.render("refund-approvals", "Refund approvals", body, { notice, status });
  }

  return new Elysia()
    .get(
      "/dashboard/:env/refund-approvals",
      pageRoute(async (c) => approvalsPage(c, noticeOf(c.query))),
      HIDE,
    )
    .post(
      "/dashboard/:env/refunds/:refundId/approve",
      actionRoute(async (c) => {
        const r = isId("refund", c.params.refundId!) ? await findRefund(services.database.db, owner(c), c.params.refundId!) : undefined;
        if (!r) return errorPage(404, "Not found", "No such refund in this account and environment.");
        if (needsPassword(c.env, formatUnitAmount(BigInt(r.amount), r.unitDecimals)) && !(await checkPassword(c.login.user, c.form.get("password") ?? ""))) {
          await recordSecurityEvent(services.database.db, c.actor(), "refund_refused", { refundId: r.id, paymentSessionId: r.sessionId, approval: true }, c.env);
          return approvalsPage(c, { kind: "error", text: "Wrong password: nothing was approved." }, 403);
        }
        const res = await attempt(() => approveRefund(sql, owner(c), r.id, c.by()));
        if (!res.ok) return approvalsPage(c, { kind: "error", text: res.error.message }, res.error.status);
        return redirect(`/dashboard/${c.env}/refund-approvals?notice=refund-approved`);
      }),
      HIDE,
    );
}
