/**
 * Settings, API keys: the environment's keys, a new one (its secret shown once, on the page the
 * creation redirects to), and revoking one. Each change and its security-history line commit
 * together (credentials/store.ts).
 */
import { Elysia } from "elysia";
import { createApiKey, listApiKeys, revokeApiKey } from "../../credentials/store.ts";
import { errorPage } from "../context.ts";
import { apiKeysBody } from "../pages/settings.ts";
import { redirect } from "../request.ts";
import { HIDE, noticeOf, type DashboardKit } from "./kit.ts";

export function apiKeyRoutes({ db, pageRoute, actionRoute }: DashboardKit) {
  async function envKeys(c: { login: { merchant: { id: string } }; env: string }) {
    return (await listApiKeys(db, c.login.merchant.id)).filter((k) => k.environment === c.env);
  }

  return new Elysia()
    .get(
      "/dashboard/:env/settings/api-keys",
      pageRoute(async (c) => {
        const flash = c.takeFlash();
        const shown = flash?.secret && { secret: flash.secret.value, name: flash.secret.label };
        return c.render("api-keys", "API keys", apiKeysBody(c.env, c.login, await envKeys(c), shown), { notice: noticeOf(c.query) });
      }),
      HIDE,
    )
    .post(
      "/dashboard/:env/settings/api-keys",
      actionRoute(async (c) => {
        const name = (c.form.get("name") ?? "").trim().slice(0, 100);
        if (!name) return c.render("api-keys", "API keys", apiKeysBody(c.env, c.login, await envKeys(c)), { status: 400, notice: { kind: "error", text: "Give the key a name." } });
        // Its security-history line commits with it (credentials/store.ts).
        const { secret } = await createApiKey(db, c.login.merchant.id, c.env, name, c.by());
        // The secret is shown once, on the page this redirects to (a sealed one-time flash).
        return c.redirectWith(`/dashboard/${c.env}/settings/api-keys`, { secret: { value: secret, label: name } });
      }),
      HIDE,
    )
    .post(
      "/dashboard/:env/settings/api-keys/:keyId/revoke",
      actionRoute(async (c) => {
        const key = (await envKeys(c)).find((k) => k.id === c.params.keyId);
        const revoked = key && !key.revokedAt ? await revokeApiKey(db, c.login.merchant.id, key.id, c.by()) : undefined;
        if (!revoked) return errorPage(404, "Not found", "No such active key in this account and environment.");
        return redirect(`/dashboard/${c.env}/settings/api-keys?notice=key-revoked`);
      }),
      HIDE,
    );
}
