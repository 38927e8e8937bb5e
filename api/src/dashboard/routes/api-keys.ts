/**
 * Settings, API keys: the environment's keys, a new one (its secret shown once, on the page the
 * creation redirects to), and revoking one. A new key may be restricted to scopes and given an
 * expiry (credentials/scopes.ts); left as the form starts, it has full access and never expires. Each change and its security-history line commit
 * together (credentials/store.ts).
 */
import { Elysia } from "elysia";
import { createApiKey, listApiKeys, revokeApiKey, type KeyLimits } from "../../credentials/store.ts";
import { expiryIn, parseScopes } from "../../credentials/scopes.ts";
import { errorPage } from "../context.ts";
import { apiKeysBody } from "../pages/settings.ts";
import { redirect } from "../request.ts";
import { HIDE, noticeOf, type DashboardKit } from "./kit.ts";

/**
 * Pure: a new key's limits from the form. "Full access" is the radio checked to start with (and
 * what a form that names no access at all gets); "Only the scopes ticked" needs one ticked, and
 * scopes ticked under "Full access" are refused rather than guessed at, since one guess hands out
 * full access and the other takes away what the person asked for.
 */
export function keyLimitsFromForm(form: URLSearchParams, now: Date): { ok: true; limits: KeyLimits } | { ok: false; problem: string } {
  const access = form.get("access");
  const ticked = form.getAll("scope");
  if (access !== null && access !== "full" && access !== "scoped") return { ok: false, problem: "Choose full access or the scopes ticked." };
  if (access === "full" && ticked.length) return { ok: false, problem: "Scopes are ticked but “Full access” is chosen: choose “Only the scopes ticked” to restrict the key, or untick them." };
  if (access === "scoped" && !ticked.length) return { ok: false, problem: "Tick at least one scope, or choose “Full access”." };
  const scopes = ticked.length ? parseScopes(ticked) : null;
  if (scopes && !scopes.ok) return scopes;
  const days = (form.get("expiresInDays") ?? "").trim();
  const expiry = days === "" ? null : expiryIn(days, now);
  if (expiry && !expiry.ok) return expiry;
  return { ok: true, limits: { scopes: scopes?.scopes ?? null, expiresAt: expiry?.expiresAt ?? null } };
}

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
        // A production key moves real money: a fresh second factor first, for a person with one.
        if (c.env === "production") {
          const stepUp = c.stepUp(`/dashboard/${c.env}/settings/api-keys`);
          if (stepUp) return stepUp;
        }
        const name = (c.form.get("name") ?? "").trim().slice(0, 100);
        if (!name) return c.render("api-keys", "API keys", apiKeysBody(c.env, c.login, await envKeys(c)), { status: 400, notice: { kind: "error", text: "Give the key a name." } });
        const limits = keyLimitsFromForm(c.form, new Date());
        if (!limits.ok) return c.render("api-keys", "API keys", apiKeysBody(c.env, c.login, await envKeys(c)), { status: 400, notice: { kind: "error", text: limits.problem } });
        // Its security-history line commits with it (credentials/store.ts).
        const { secret } = await createApiKey(db, c.login.merchant.id, c.env, name, c.by(), limits.limits);
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
