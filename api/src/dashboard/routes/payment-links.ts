/**
 * Payment links (docs/payment-links.md): the list with the create form, a link's page with the
 * sessions it started, and Deactivate. The form is checked against the API's body schema and
 * the API's rules (payment-links/rules.ts), and written by the same store functions, so a link
 * made here is the one POST /payment-links would make, refused with the same messages.
 */
import { Elysia } from "elysia";
import { isId } from "../../../../shared/ids.ts";
import { validateBody } from "../../http/validate.ts";
import { CreateLinkBody } from "../../http/payment-links.schemas.ts";
import { checkCreateLink } from "../../payment-links/rules.ts";
import { deactivateLink, findLink, insertLink, listLinks, sessionsOfLink } from "../../payment-links/store.ts";
import { linkView } from "../../payment-links/view.ts";
import { attempt, errorPage, type PageContext } from "../context.ts";
import type { Notice } from "../layout.ts";
import { linkBody, linksBody, type LinkFormValues } from "../pages/payment-links.ts";
import { redirect } from "../request.ts";
import { BAD_PAGE_LINK, HIDE, noticeOf, owner, type DashboardKit } from "./kit.ts";

const PAGE_SIZE = 50;
/** The sessions shown on a link's page, newest first (the rest: Transactions). */
const SESSIONS_SHOWN = 100;

/** The form's fields as the API's create body: only what was filled in, the amount of the kind chosen. Pure. */
export function bodyOfForm(v: LinkFormValues): Record<string, unknown> {
  const body: Record<string, unknown> = { description: v.description ?? "" };
  if (v.kind === "choose") {
    body.minAmount = v.minAmount ?? "";
    body.maxAmount = v.maxAmount ?? "";
  } else body.amount = v.amount ?? "";
  if (v.maxUses) body.maxUses = /^\d{1,9}$/.test(v.maxUses) ? Number(v.maxUses) : v.maxUses;
  if (v.expiresOn) body.expiresAt = /^\d{4}-\d{2}-\d{2}$/.test(v.expiresOn) ? `${v.expiresOn}T23:59:59Z` : v.expiresOn;
  if (v.redirectUrl) body.redirectUrl = v.redirectUrl;
  return body;
}

export function paymentLinkRoutes({ services, db, sql, pageRoute, actionRoute }: DashboardKit) {
  const { config } = services;
  const baseOf = (env: string) => (env === "sandbox" ? config.sandboxPublicUrl : config.publicUrl);

  async function listPage(c: PageContext, opts: { notice?: Notice; status?: number; form?: LinkFormValues } = {}) {
    const raw = c.query.after;
    const cursor = raw && isId("paymentLink", raw) && (await findLink(db, owner(c), raw)) ? raw : undefined;
    let notice = opts.notice;
    if (raw && !cursor) notice ??= { kind: "error", text: BAD_PAGE_LINK };
    const page = await listLinks(db, { ...owner(c), limit: PAGE_SIZE, ...(cursor ? { startingAfter: cursor } : {}) });
    const now = new Date();
    const views = page.rows.map((l) => linkView(l, baseOf(c.env), now));
    return c.render("payment-links", "Payment links", linksBody(c.env, c.login, views, opts.form, page.hasMore ? page.rows.at(-1)?.id : undefined), { notice, status: opts.status ?? 200 });
  }

  return new Elysia()
    .get(
      "/dashboard/:env/payment-links",
      pageRoute(async (c) => listPage(c, { notice: noticeOf(c.query) })),
      HIDE,
    )
    .post(
      "/dashboard/:env/payment-links",
      actionRoute(async (c) => {
        const field = (n: string) => (c.form.get(n) ?? "").trim();
        const form: LinkFormValues = Object.fromEntries(
          (["kind", "amount", "minAmount", "maxAmount", "description", "maxUses", "expiresOn", "redirectUrl"] as const).map((n) => [n, field(n).slice(0, 2000)]),
        );
        const res = await attempt(async () => {
          const input = checkCreateLink(validateBody(CreateLinkBody, bodyOfForm(form)), {
            bounds: { minAmountMinor: config.minAmountMinor, maxAmountMinor: config.maxAmountMinor },
            environment: c.env,
            now: new Date(),
          });
          return insertLink(sql, owner(c), input);
        });
        if (!res.ok) return listPage(c, { notice: { kind: "error", text: res.error.message }, status: res.error.status, form });
        return redirect(`/dashboard/${c.env}/payment-links/${res.value.id}?notice=payment-link-created`);
      }),
      HIDE,
    )
    .get(
      "/dashboard/:env/payment-links/:id",
      pageRoute(async (c) => {
        const l = isId("paymentLink", c.params.id!) ? await findLink(db, owner(c), c.params.id!) : undefined;
        if (!l) return errorPage(404, "Not found", "No such payment link in this account and environment.");
        const sessions = await sessionsOfLink(db, l.id, SESSIONS_SHOWN);
        return c.render("payment-links", "Payment link", linkBody(c.env, c.login, linkView(l, baseOf(c.env), new Date()), sessions), { notice: noticeOf(c.query) });
      }),
      HIDE,
    )
    .post(
      "/dashboard/:env/payment-links/:id/deactivate",
      actionRoute(async (c) => {
        const l = isId("paymentLink", c.params.id!) ? await deactivateLink(db, owner(c), c.params.id!) : undefined;
        if (!l) return errorPage(404, "Not found", "No such payment link in this account and environment.");
        return redirect(`/dashboard/${c.env}/payment-links/${l.id}?notice=payment-link-deactivated`);
      }),
      HIDE,
    );
}
