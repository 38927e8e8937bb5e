/** Settings, Outbox (mail/outbox.ts listOutbox): the account's latest hundred mails; their text where the service keeps its own mail. */
import { Elysia } from "elysia";
import { listOutbox } from "../../mail/outbox.ts";
import { outboxBody } from "../pages/outbox.ts";
import { HIDE, type DashboardKit } from "./kit.ts";

export function outboxRoutes({ services, sql, pageRoute }: DashboardKit) {
  const dashboardUrl = new URL("dashboard", services.config.publicUrl).href;
  return new Elysia().get(
    "/dashboard/:env/settings/outbox",
    pageRoute(async (c) => {
      const mails = await listOutbox(sql, { merchantId: c.login.merchant.id, encryptionKey: services.encryptionKey, dashboardUrl, withBodies: services.mailMode === "catcher", viewer: c.login.user.email });
      return c.render("outbox", "Outbox", outboxBody(mails, services.mailMode));
    }),
    HIDE,
  );
}
