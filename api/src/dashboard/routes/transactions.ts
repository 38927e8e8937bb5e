/**
 * The transactions page: every payment session of the account and environment, searched and
 * filtered (transactions.ts), a keyset page at a time; and its rows alone, which the page's
 * script fetches to refresh them in place.
 */
import { Elysia } from "elysia";
import { isId } from "../../../../shared/ids.ts";
import { depositsOf, findSession } from "../../sessions/repository.ts";
import { rows, transactionsBody } from "../pages/transactions.ts";
import { SECURITY_HEADERS } from "../request.ts";
import { listTransactions, parseFilters } from "../transactions.ts";
import { refundStandings } from "../refunds.ts";
import { BAD_PAGE_LINK, HIDE, type DashboardKit } from "./kit.ts";

export function transactionsRoutes({ services, db, sql, pageRoute }: DashboardKit) {
  const apiHost = (env: string) => (env === "sandbox" ? services.config.sandboxPublicUrl : services.config.publicUrl).toString().replace(/\/$/, "");
  return new Elysia()
    .get(
      "/dashboard/:env/transactions",
      pageRoute(async (c) => {
        const { filters, problems } = parseFilters(c.query);
        const owner = { merchantId: c.login.merchant.id, environment: c.env };
        // A cursor must be one of this account's sessions, or it would page by another's.
        const cursorId = c.query.after ?? c.query.before;
        const cursorOk = !cursorId || (isId("paymentSession", cursorId) && (await findSession(db, owner.merchantId, c.env, cursorId)) !== undefined);
        const cursor = cursorOk ? { after: c.query.after, before: c.query.before } : {};
        const page = await listTransactions(sql, owner, filters, cursor);
        const firstPage = !cursor.after && !cursor.before;
        const anyAtAll = page.rows.length > 0 || (await sql`select 1 from app.payment_sessions where merchant_id = ${owner.merchantId} and environment = ${c.env} limit 1`).length > 0;
        const deposits = await depositsOf(db, page.rows.map((r) => r.id));
        const refunded = await refundStandings(sql, page.rows.map((r) => r.id));
        return c.render("transactions", "Transactions", transactionsBody({ env: c.env, filters, problems, page, deposits, refunded, firstPage, anyAtAll, apiHost: apiHost(c.env) }), cursorOk ? {} : { notice: { kind: "error", text: BAD_PAGE_LINK } });
      }),
      HIDE,
    )
    .get(
      "/dashboard/:env/transactions/rows",
      pageRoute(async (c) => {
        const { filters } = parseFilters(c.query);
        const page = await listTransactions(sql, { merchantId: c.login.merchant.id, environment: c.env }, filters);
        const ids = page.rows.map((r) => r.id);
        return new Response(rows(c.env, page, await depositsOf(db, ids), await refundStandings(sql, ids)).toString(), {
          headers: { "content-type": "text/html; charset=utf-8", ...SECURITY_HEADERS },
        });
      }),
      HIDE,
    );
}
