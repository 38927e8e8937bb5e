/**
 * The events page: every event of the account and environment with its deliveries and
 * attempts, filtered and paged (events.ts), and redelivering one from it, back to the same
 * filtered page.
 */
import { Elysia } from "elysia";
import { isId } from "../../../../shared/ids.ts";
import { listEndpoints } from "../../webhooks/endpoints.ts";
import { findEvent } from "../../webhooks/events.ts";
import { findRefundEvent } from "../../webhooks/refund-events.ts";
import { redeliverEvent } from "../../webhooks/redelivery.ts";
import { attempt, errorPage, type PageContext } from "../context.ts";
import { listEventLines, ownsEvent, parseEventFilters } from "../events.ts";
import type { Notice } from "../layout.ts";
import { eventsBody, eventsQuery } from "../pages/events.ts";
import { redirect } from "../request.ts";
import { BAD_PAGE_LINK, HIDE, noticeOf, owner, type DashboardKit } from "./kit.ts";

export function eventsRoutes({ services, db, sql, pageRoute, actionRoute }: DashboardKit) {
  async function eventsPage(c: PageContext, notice?: Notice, status = 200, parsed = parseEventFilters(c.query)) {
    // A cursor must be one of this account's events (as the endpoint's attempts page checks its own).
    if (parsed.after && !(await ownsEvent(db, owner(c), parsed.after))) {
      parsed = { ...parsed, after: undefined };
      notice ??= { kind: "error", text: BAD_PAGE_LINK };
    }
    const page = await listEventLines(sql, db, owner(c), parsed.filters, parsed.after);
    const endpoints = new Map((await listEndpoints(db, owner(c))).map((e) => [e.id, e]));
    const body = eventsBody({ env: c.env, login: c.login, filters: parsed.filters, cursor: parsed.after, problems: parsed.problems, page, endpoints });
    return c.render("events", "Events", body, { notice, status });
  }

  return new Elysia()
    .get(
      "/dashboard/:env/events",
      pageRoute(async (c) => eventsPage(c, noticeOf(c.query))),
      HIDE,
    )
    .post(
      "/dashboard/:env/events/:eventId/redeliver",
      actionRoute(async (c) => {
        const back = parseEventFilters(Object.fromEntries(["type", "status", "session", "after"].map((k) => [k, c.form.get(k) ?? undefined])));
        const id = c.params.eventId!;
        // A session's event or one of its refunds' (redeliverEvent takes either), of this account.
        if (!isId("event", id) || !((await findEvent(db, owner(c), id)) || (await findRefundEvent(db, owner(c), id)))) return errorPage(404, "Not found", "No such event in this account and environment.");
        const endpoint = (c.form.get("endpoint") ?? "").trim();
        const res = await attempt(() => redeliverEvent(services.database, owner(c), c.by(), id, endpoint || undefined));
        if (!res.ok) return eventsPage(c, { kind: "error", text: res.error.message }, res.error.status, back);
        return redirect(`/dashboard/${c.env}/events${eventsQuery(back.filters, { after: back.after, notice: "redelivered" })}`);
      }),
      HIDE,
    );
}
