/**
 * The merchant dashboard's routes (docs/dashboard.md), mounted on the API's Elysia app; hidden
 * from Swagger, since they are pages, not API. Each page or group of actions is a file of its own
 * here; they are mounted in this order, which is the route table's (the metrics name a request
 * by the first route of the table that matches it, so `/dashboard/sign-in` comes before
 * `/dashboard/:env`).
 */
import { Elysia } from "elysia";
import type { Services } from "../../http/services.ts";
import { apiKeyRoutes } from "./api-keys.ts";
import { entryRoutes } from "./entry.ts";
import { eventsRoutes } from "./events.ts";
import { exportRoutes } from "./exports.ts";
import { homeRoutes } from "./home.ts";
import { dashboardKit } from "./kit.ts";
import { securityRoutes } from "./security.ts";
import { outboxRoutes } from "./outbox.ts";
import { accountRoutes } from "./account.ts";
import { memberRoutes } from "./members.ts";
import { twoFactorRoutes } from "./two-factor.ts";
import { settlementRoutes } from "./settlement.ts";
import { signInRoutes } from "./sign-in.ts";
import { passwordResetRoutes } from "./password-reset.ts";
import { refundBalanceRoutes } from "./refund-balance.ts";
import { refundRoutes } from "./refunds.ts";
import { refundApprovalRoutes } from "./refund-approvals.ts";
import { refundSettingsRoutes } from "./refund-settings.ts";
import { transactionRoutes } from "./transaction.ts";
import { transactionsRoutes } from "./transactions.ts";
import { webhookRoutes } from "./webhooks.ts";
import { paymentLinkRoutes } from "./payment-links.ts";

export function dashboardRoutes(services: Services) {
  const kit = dashboardKit(services);
  return new Elysia()
    .use(entryRoutes(kit))
    .use(signInRoutes(kit))
    .use(passwordResetRoutes(kit))
    .use(homeRoutes(kit))
    .use(transactionsRoutes(kit))
    .use(exportRoutes(kit))
    .use(transactionRoutes(kit))
    .use(paymentLinkRoutes(kit))
    .use(refundRoutes(kit))
    .use(refundBalanceRoutes(kit))
    .use(refundApprovalRoutes(kit))
    .use(eventsRoutes(kit))
    .use(apiKeyRoutes(kit))
    .use(webhookRoutes(kit))
    .use(settlementRoutes(kit))
    .use(refundSettingsRoutes(kit))
    .use(securityRoutes(kit))
    .use(outboxRoutes(kit))
    .use(accountRoutes(kit))
    .use(memberRoutes(kit))
    .use(twoFactorRoutes(kit));
}
