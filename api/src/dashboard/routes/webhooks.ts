/**
 * Settings, webhooks: the environment's endpoints, adding one, an endpoint's page with every
 * attempt, editing it, and its actions (reveal or rotate the secret, send a test event,
 * delete). Each change is the API's own function (webhooks/endpoint-actions.ts), with the form
 * checked against the API's body schema (the same messages); its security-history line, naming
 * the person, commits with the change.
 */
import { Elysia } from "elysia";
import { isId } from "../../../../shared/ids.ts";
import { validateBody } from "../../http/validate.ts";
import { CreateWebhookEndpointBody, UpdateWebhookEndpointBody } from "../../http/webhook-endpoints.schemas.ts";
import { attemptExists, listAttempts } from "../../webhooks/attempts.ts";
import { createWebhookEndpoint, deleteWebhookEndpoint, revealWebhookSecret, rotateWebhookSecret, sendTestEvent, updateWebhookEndpoint } from "../../webhooks/endpoint-actions.ts";
import { findEndpoint, listEndpoints } from "../../webhooks/endpoints.ts";
import { attempt, errorPage, type PageContext } from "../context.ts";
import { html } from "../html.ts";
import type { Notice } from "../layout.ts";
import { webhookBody, webhooksBody } from "../pages/settings.ts";
import { redirect } from "../request.ts";
import { BAD_PAGE_LINK, HIDE, noticeOf, owner, type DashboardKit } from "./kit.ts";

/** Attempts a page on an endpoint's page. */
const ATTEMPTS_PAGE_SIZE = 25;

export function webhookRoutes({ services, db, pageRoute, actionRoute }: DashboardKit) {
  async function endpointPage(c: PageContext, notice: Notice | undefined, status = 200, secret?: string) {
    const e = isId("webhookEndpoint", c.params.id!) ? await findEndpoint(db, owner(c), c.params.id!) : undefined;
    if (!e || e.deletedAt) return errorPage(404, "Not found", "No such webhook endpoint in this account and environment.");
    // Every attempt, a page at a time (keyset: ?after= the last attempt shown); a bad cursor is said, not a 500.
    const raw = c.query.after;
    const cursor = raw && isId("webhookAttempt", raw) && (await attemptExists(db, owner(c), raw)) ? raw : undefined;
    if (raw && !cursor) notice ??= { kind: "error", text: BAD_PAGE_LINK };
    const page = await listAttempts(db, { ...owner(c), endpointId: e.id, limit: ATTEMPTS_PAGE_SIZE, startingAfter: cursor });
    const older = page.hasMore ? page.rows.at(-1)?.id : undefined;
    return c.render("webhooks", "Webhook endpoint", webhookBody(c.env, c.login, e, { rows: page.rows, older, paged: !!cursor }, secret), { notice, status });
  }

  return new Elysia()
    .get(
      "/dashboard/:env/settings/webhooks",
      pageRoute(async (c) => {
        const flash = c.takeFlash();
        const shown = flash?.secret && { secret: flash.secret.value, url: flash.secret.label };
        return c.render("webhooks", "Webhooks", webhooksBody(c.env, c.login, await listEndpoints(db, owner(c)), shown), { notice: noticeOf(c.query) });
      }),
      HIDE,
    )
    .post(
      "/dashboard/:env/settings/webhooks",
      actionRoute(async (c) => {
        const description = (c.form.get("description") ?? "").trim();
        const input = { url: (c.form.get("url") ?? "").trim(), ...(description ? { description } : {}) };
        const res = await attempt(() => createWebhookEndpoint(services, owner(c), c.by(), validateBody(CreateWebhookEndpointBody, input)));
        if (!res.ok) {
          const list = await listEndpoints(db, owner(c));
          return c.render("webhooks", "Webhooks", webhooksBody(c.env, c.login, list), { status: res.error.status, notice: { kind: "error", text: res.error.message } });
        }
        return c.redirectWith(`/dashboard/${c.env}/settings/webhooks`, { secret: { value: res.value.secret, label: res.value.endpoint.url } });
      }),
      HIDE,
    )
    .get(
      "/dashboard/:env/settings/webhooks/:id",
      pageRoute(async (c) => {
        const e = isId("webhookEndpoint", c.params.id!) ? await findEndpoint(db, owner(c), c.params.id!) : undefined;
        if (!e || e.deletedAt) return c.render("webhooks", "Not found", html`<p>No such webhook endpoint in this account's ${c.env}.</p>`, { status: 404 });
        const flash = c.takeFlash();
        return endpointPage(c, flash?.notice ?? noticeOf(c.query), 200, flash?.secret?.value);
      }),
      HIDE,
    )
    .post(
      "/dashboard/:env/settings/webhooks/:id",
      actionRoute(async (c) => {
        const input = { url: (c.form.get("url") ?? "").trim(), description: (c.form.get("description") ?? "").trim(), enabled: c.form.get("enabled") === "true" };
        const res = await attempt(() => updateWebhookEndpoint(services, owner(c), c.by(), c.params.id!, validateBody(UpdateWebhookEndpointBody, input)));
        if (!res.ok) return endpointPage(c, { kind: "error", text: res.error.message }, res.error.status);
        return redirect(`/dashboard/${c.env}/settings/webhooks/${res.value.id}?notice=endpoint-saved`);
      }),
      HIDE,
    )
    .post(
      "/dashboard/:env/settings/webhooks/:id/:op",
      actionRoute(async (c) => {
        const raw = c.params.id!;
        const id = encodeURIComponent(raw);
        const refused = (e: { message: string; status: number }) => endpointPage(c, { kind: "error", text: e.message }, e.status);
        switch (c.params.op) {
          case "reveal": {
            const res = await attempt(() => revealWebhookSecret(services, owner(c), c.by(), raw));
            if (!res.ok) return refused(res.error);
            return c.redirectWith(`/dashboard/${c.env}/settings/webhooks/${id}`, { secret: { value: res.value.secret, label: raw } });
          }
          case "rotate": {
            const res = await attempt(() => rotateWebhookSecret(services, owner(c), c.by(), raw));
            if (!res.ok) return refused(res.error);
            return redirect(`/dashboard/${c.env}/settings/webhooks/${id}?notice=secret-rotated`);
          }
          case "test": {
            const res = await attempt(() => sendTestEvent(services, owner(c), raw));
            if (!res.ok) return refused(res.error);
            const a = res.value.attempt;
            const text = a.succeeded ? `Test event delivered (HTTP ${a.statusCode}).` : `Test event not accepted: ${a.statusCode ? `HTTP ${a.statusCode}` : (a.error ?? "no answer")}.`;
            return c.redirectWith(`/dashboard/${c.env}/settings/webhooks/${id}`, { notice: { kind: a.succeeded ? "ok" : "error", text } });
          }
          case "delete": {
            const res = await attempt(() => deleteWebhookEndpoint(services, owner(c), c.by(), raw));
            if (!res.ok) return refused(res.error);
            return redirect(`/dashboard/${c.env}/settings/webhooks?notice=endpoint-deleted`);
          }
          default:
            return errorPage(404, "No such action", "Nothing here.");
        }
      }),
      HIDE,
    );
}
