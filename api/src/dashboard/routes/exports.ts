/**
 * The transactions page's CSV export (csv-export.ts: the columns; reconciliation.ts: what each
 * session received and settled), with the page's filters, streamed a keyset page at a time.
 */
import { Elysia } from "elysia";
import { CSV_HEADER, csvRefundRow, csvRow } from "../csv-export.ts";
import { reconciliationOf, succeededRefundsOf } from "../reconciliation.ts";
import { SECURITY_HEADERS } from "../request.ts";
import { listTransactions, parseFilters } from "../transactions.ts";
import { HIDE, type DashboardKit } from "./kit.ts";

export function exportRoutes({ sql, db, pageRoute }: DashboardKit) {
  return new Elysia().get(
    "/dashboard/:env/transactions.csv",
    pageRoute(async (c) => {
      const { filters } = parseFilters(c.query);
      const owner = { merchantId: c.login.merchant.id, environment: c.env };
      // Streamed a keyset page at a time: an export of 100,000 rows never sits in memory whole.
      const pageAfter = async (after: string | undefined) => {
        const p = await listTransactions(sql, owner, filters, { after }, 1000);
        const [rec, out] = await Promise.all([reconciliationOf(sql, p.rows), succeededRefundsOf(db, p.rows.map((r) => r.id))]);
        // Each session's row, then its refunds (money out), so a sort by session keeps them together.
        return { lines: p.rows.flatMap((r) => [csvRow(r, rec.get(r.id)), ...(out.get(r.id) ?? []).map((x) => csvRefundRow(r, x))]), next: p.next };
      };
      // The first page is read before the answer starts: a database that does not answer then
      // gets the 503 page, not a 200 whose download breaks off (a later page that fails can
      // only end the download short, which the browser reports as failed).
      let first: { lines: string[]; next: string | undefined } | undefined = await pageAfter(undefined);
      let after: string | undefined;
      const stream = new ReadableStream<string>({
        start(ctrl) {
          ctrl.enqueue(CSV_HEADER);
        },
        async pull(ctrl) {
          const p = first ?? (await pageAfter(after));
          first = undefined;
          for (const line of p.lines) ctrl.enqueue(line);
          after = p.next;
          if (!after) ctrl.close();
        },
      });
      return new Response(stream, {
        headers: {
          "content-type": "text/csv; charset=utf-8",
          "content-disposition": `attachment; filename="transactions-${c.env}.csv"`,
          ...SECURITY_HEADERS,
        },
      });
    }),
    HIDE,
  );
}
