/** Settings, security history: every sign-in, key, endpoint and settlement change of the account, newest first, fifty a page. */
import { Elysia } from "elysia";
import { isId } from "../../../../shared/ids.ts";
import { listSecurityEvents } from "../../credentials/security-history.ts";
import { securityBody } from "../pages/settings.ts";
import { HIDE, type DashboardKit } from "./kit.ts";

export function securityRoutes({ db, pageRoute }: DashboardKit) {
  return new Elysia().get(
    "/dashboard/:env/settings/security",
    pageRoute(async (c) => {
      const before = c.query.before && isId("securityEvent", c.query.before) ? c.query.before : undefined;
      const { rows: events, hasMore } = await listSecurityEvents(db, c.login.merchant.id, 50, before);
      return c.render("security", "Security history", securityBody(c.env, events, hasMore ? events.at(-1)?.id : undefined));
    }),
    HIDE,
  );
}
