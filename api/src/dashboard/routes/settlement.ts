/**
 * Settings, settlement: where each network's funds settle, and changing one — the most
 * sensitive act in the product, so it asks for the password again. The change is the API's own
 * (webhooks/settlement-addresses.ts), with the form checked against the API's body schema.
 */
import { Elysia } from "elysia";
import { recordSecurityEvent } from "../../credentials/security-history.ts";
import { SettlementAddressBody } from "../../http/settlement-addresses.schemas.ts";
import { validateBody } from "../../http/validate.ts";
import { setSettlementAddress, settlementAddresses } from "../../webhooks/settlement-addresses.ts";
import { attempt, type PageContext } from "../context.ts";
import type { Notice } from "../layout.ts";
import { settlementBody } from "../pages/settings.ts";
import { redirect } from "../request.ts";
import { checkPassword } from "../users.ts";
import { HIDE, noticeOf, type DashboardKit } from "./kit.ts";

export function settlementRoutes({ services, db, pageRoute, actionRoute }: DashboardKit) {
  async function settlementPage(c: PageContext, notice?: Notice, status = 200) {
    const lines = await settlementAddresses(services, c.login.merchant.id, c.env);
    return c.render("settlement", "Settlement", settlementBody(c.env, c.login, lines), { notice, status });
  }

  return new Elysia()
    .get(
      "/dashboard/:env/settings/settlement",
      pageRoute(async (c) => settlementPage(c, noticeOf(c.query))),
      HIDE,
    )
    .post(
      "/dashboard/:env/settings/settlement/:chainId",
      actionRoute(async (c) => {
        // The most sensitive act in the product: in production a fresh second factor (for a person
        // with one), and the password again, whoever holds the session.
        if (c.env === "production") {
          const stepUp = c.stepUp(`/dashboard/${c.env}/settings/settlement`);
          if (stepUp) return stepUp;
        }
        const user = await checkPassword(c.login.user, c.form.get("password") ?? "");
        if (!user) {
          await recordSecurityEvent(db, c.actor(), "settlement_address_change_refused", { chainId: c.params.chainId }, c.env);
          return settlementPage(c, { kind: "error", text: "Wrong password: the settlement address was not changed." }, 403);
        }
        // The API's own change (webhooks/settlement-addresses.ts): it records the change in the
        // security history and writes its webhook event in the change's own transaction, naming this user.
        const body = { address: (c.form.get("address") ?? "").trim() };
        const res = await attempt(() => setSettlementAddress(services, c.login.merchant, c.env, c.by(), { chainId: c.params.chainId!, ...validateBody(SettlementAddressBody, body) }));
        if (!res.ok) {
          const text = res.error.code === "address_checksum_invalid" ? "That address's checksum is wrong (a typo?). Copy it again from your wallet; nothing was changed." : res.error.message;
          return settlementPage(c, { kind: "error", text }, res.error.status);
        }
        return redirect(`/dashboard/${c.env}/settings/settlement?notice=settlement-changed`);
      }),
      HIDE,
    );
}
