/**
 * Forgot password and the reset page its emailed link opens (dashboard/password-resets.ts):
 * pre-session forms (double-submit CSRF, pre-session.ts). The ask answers the same for every
 * email; the link's page shows the email it is for and nothing else of the account.
 */
import { Elysia } from "elysia";
import { newSecret } from "../../../../shared/ids.ts";
import { findInChain } from "../../../../shared/error-chain.ts";
import { askForReset, completeReset, openReset } from "../password-resets.ts";
import { forgotPasswordPage, resetLinkDeadPage, resetPasswordPage } from "../pages/password-reset.ts";
import { clientIp, page, readForm, redirect } from "../request.ts";
import { hashNewPassword, normalizeEmail, UserInputError } from "../users.ts";
import { preSession } from "./pre-session.ts";
import { HIDE, type DashboardKit } from "./kit.ts";

export function passwordResetRoutes({ services, db, secure, guard }: DashboardKit) {
  const { preCookie, preOk } = preSession(secure);
  const mailOff = () => services.mailMode === "off";
  const dashboardUrl = new URL("dashboard", services.config.publicUrl).href;

  function askForm(args: { email?: string; error?: string; sent?: boolean }, status = 200, extra: Record<string, string> = {}) {
    const csrf = newSecret();
    return page(forgotPasswordPage({ csrf, mailOff: mailOff(), ...args }), status, { "set-cookie": preCookie(csrf), ...extra });
  }
  function resetForm(token: string, email: string, error?: string, status = 200) {
    const csrf = newSecret();
    // No Referer from this page, even to our own: its URL holds the link's secret.
    return page(resetPasswordPage({ csrf, token, email, error }), status, { "set-cookie": preCookie(csrf), "referrer-policy": "no-referrer" });
  }

  return new Elysia()
    .get("/dashboard/forgot-password", ({ request }) => guard(async () => askForm({}))(request), HIDE)
    .post(
      "/dashboard/forgot-password",
      ({ request }) =>
        guard(async (r) => {
          // No mail on this service: a configuration, not an outage; the page says whom to ask.
          if (mailOff()) return askForm({}, 409);
          const form = await readForm(r);
          const raw = (form.get("email") ?? "").slice(0, 254);
          if (!preOk(r, form)) return askForm({ email: raw, error: "The form expired. Try again." }, 403);
          const email = normalizeEmail(raw);
          if (!email) return askForm({ email: raw, error: "That is not an email address." }, 400);
          const asked = await askForReset(db, { email, ip: clientIp(r), encryptionKey: services.encryptionKey, dashboardUrl });
          if (asked.outcome === "throttled") {
            return askForm({ email: raw, error: "Too many reset links were asked for from your address. Try again in an hour." }, 429, { "retry-after": String(asked.retryAfterSeconds) });
          }
          return askForm({ sent: true });
        })(request),
      HIDE,
    )
    .get(
      "/dashboard/reset-password/:token",
      ({ request, params }) =>
        guard(async () => {
          const open = await openReset(db, params.token);
          return open ? resetForm(params.token, open.email) : page(resetLinkDeadPage(), 410);
        })(request),
      HIDE,
    )
    .post(
      "/dashboard/reset-password/:token",
      ({ request, params }) =>
        guard(async (r) => {
          const open = await openReset(db, params.token);
          if (!open) return page(resetLinkDeadPage(), 410);
          const form = await readForm(r);
          if (!preOk(r, form)) return resetForm(params.token, open.email, "The form expired. Try again.", 403);
          const password = form.get("password") ?? "";
          if (password !== (form.get("confirm") ?? "")) return resetForm(params.token, open.email, "The two passwords differ. Type the same one twice.", 400);
          let hash: string;
          try {
            hash = await hashNewPassword(password);
          } catch (e) {
            const refused = findInChain(e, (x) => x instanceof UserInputError);
            if (refused) return resetForm(params.token, open.email, refused.message, 400);
            throw e;
          }
          // Used meanwhile (a second tab, a second click): nothing changes, and the page says so.
          if (!(await completeReset(db, params.token, hash, clientIp(r)))) return page(resetLinkDeadPage(), 410);
          return redirect("/dashboard/sign-in?notice=password-reset", { "set-cookie": preCookie("", 0) });
        })(request),
      HIDE,
    );
}
