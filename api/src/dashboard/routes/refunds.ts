/**
 * Refunding a payment from its page: the form, the review (what the API's create would make,
 * read and planned by the very same store function with nothing written: refunds/store.ts
 * previewRefund), the create (refunds/store.ts createRefund, the API's own, with its security-
 * history line in the same transaction), and canceling a PENDING refund (cancelRefund). In
 * production a refund above SERVICE_DASHBOARD_REFUND_PASSWORD_ABOVE asks for the password again,
 * as a settlement change does. A refusal shows the form or the review with the catalogue's message
 * and its status; nothing is written then.
 */
import { Elysia } from "elysia";
import { isId } from "../../../../shared/ids.ts";
import { formatAmount, formatUnitAmount } from "../../../../shared/money.ts";
import { changeStatement, recordSecurityEvent } from "../../credentials/security-history.ts";
import { ApiError } from "../../errors.ts";
import { checkRefundInput } from "../../refunds/input.ts";
import { REFUND_REASONS, type RefundReason } from "../../refunds/logic.ts";
import { cancelRefund, createRefund, findRefund, previewRefund, refundableOf, type NewRefund, type RefundPreview } from "../../refunds/store.ts";
import { indexerTablesPresent } from "../../sessions/indexed.ts";
import { attempt, errorPage, type PageContext } from "../context.ts";
import { loadDetail } from "../detail.ts";
import { html } from "../html.ts";
import { defaultAmount, refundFormBody, refundReviewBody, type RefundFormValues } from "../pages/refund.ts";
import { transactionBody } from "../pages/transaction.ts";
import { linkChoiceOf, linkFields } from "../refund-destination.ts";
import { refundWalletBody } from "../pages/refund-wallet.ts";
import { recordWalletAuthorization, recordWalletTransfer, walletRefundOf, type WalletRefund } from "../../refunds/wallet-store.ts";
import { looksLikeAddress, type WalletAuthorization } from "../../refunds/wallet.ts";
import { redirect } from "../request.ts";
import { checkPassword } from "../users.ts";
import { HIDE, owner, type DashboardKit } from "./kit.ts";

const NOT_FOUND = "No such payment session in this account.";

/** The form's two fields as sent (trimmed, bounded); the reason checked against the API's list. */
function valuesOf(get: (k: string) => string | null | undefined): RefundFormValues {
  const reason = (get("reason") ?? "").trim();
  const chainId = (get("chainId") ?? "").trim();
  return {
    amount: (get("amount") ?? "").trim().slice(0, 40),
    reason: (REFUND_REASONS as readonly string[]).includes(reason) ? (reason as RefundReason) : "",
    // Kept as sent (bounded): a malformed one is refused by the create's check, not dropped.
    chainId: chainId.slice(0, 20),
    ...linkChoiceOf(get),
  };
}

/** Whether the review's "Pay from my wallet" was pressed (anything else: the refund balance). */
const fromWallet = (get: (k: string) => string | null | undefined) => get("funding") === "merchant_wallet";

/** A whole number in a form field (a uint256 of the authorization), or undefined. */
const uint = (s: string | null | undefined) => (s !== null && s !== undefined && /^[0-9]{1,78}$/.test(s) ? BigInt(s) : undefined);

/** The signed authorization as the page's script posts it, or why it cannot be read. */
function authorizationOf(get: (k: string) => string | null | undefined): WalletAuthorization {
  const [from, to, nonce, signature] = ["from", "to", "nonce", "signature"].map((k) => (get(k) ?? "").trim());
  const [value, validAfter, validBefore] = ["value", "validAfter", "validBefore"].map((k) => uint(get(k)));
  if (!looksLikeAddress(from!) || !looksLikeAddress(to!)) throw new ApiError("refund_wallet_payment_invalid", "from and to must be addresses.");
  if (value === undefined || validAfter === undefined || validBefore === undefined) throw new ApiError("refund_wallet_payment_invalid", "value, validAfter and validBefore must be whole numbers.");
  if (!/^0x[0-9a-fA-F]{64}$/.test(nonce!)) throw new ApiError("refund_wallet_payment_invalid", "The authorization's nonce is not 32 bytes of hex.");
  if (!/^0x[0-9a-fA-F]+$/.test(signature!)) throw new ApiError("refund_wallet_payment_invalid", "The signature is not hex.");
  return { from: from as `0x${string}`, to: to as `0x${string}`, value, validAfter, validBefore, nonce: nonce as `0x${string}`, signature: signature as `0x${string}` };
}

/** The form's network, as a number the API's check accepts or refuses (anything malformed: NaN, refused). */
function chainIdOf(text: string): number {
  return /^[1-9][0-9]{0,9}$/.test(text) ? Number(text) : Number.NaN;
}

export function refundRoutes({ services, sql, pageRoute, actionRoute }: DashboardKit) {
  const threshold = services.config.dashboard.refundPasswordAboveMinor;

  /** The create's input from the form, checked as the API checks its body (the same messages). */
  async function newRefund(c: PageContext, values: RefundFormValues): Promise<NewRefund> {
    if (!values.reason) throw new ApiError("parameter_invalid", "Choose the reason for the refund.", "reason");
    const input = checkRefundInput({ reason: values.reason, ...(values.amount ? { amount: values.amount } : {}), ...(values.chainId ? { chainId: chainIdOf(values.chainId) } : {}), ...linkFields(values.reason, values.link) });
    const { link, ...ask } = input;
    return { sessionId: c.params.id!, ...ask, ...(link ? { link: { ...link, encryptionKey: services.encryptionKey } } : {}), maxPerRefundMinor: services.config.refunds.maxPerRefundMinor, indexerPresent: await indexerTablesPresent(sql) };
  }

  /** A production refund above the threshold (compared in the session's unit) asks for the password. */
  const passwordNeeded = (c: PageContext, p: RefundPreview) => c.env === "production" && p.amount > threshold * 10n ** BigInt(p.unitDecimals - 2);

  async function formPage(c: PageContext, values: RefundFormValues, error?: { message: string; status: number }) {
    const d = await loadDetail(services, c.login.merchant, c.env, c.params.id!);
    if (!d) return errorPage(404, "Not found", NOT_FOUND);
    const rests = await refundableOf(sql, d.view.paymentSessionId, await indexerTablesPresent(sql));
    return c.render("transactions", "Refund this payment", refundFormBody(c.env, d.view, rests, values, error?.message), { status: error?.status ?? 200 });
  }

  async function reviewPage(c: PageContext, values: RefundFormValues, preview: RefundPreview, error?: { message: string; status: number }) {
    const d = await loadDetail(services, c.login.merchant, c.env, c.params.id!);
    if (!d) return errorPage(404, "Not found", NOT_FOUND);
    const body = refundReviewBody(c.env, c.login, d.view, preview, values, { passwordNeeded: passwordNeeded(c, preview), thresholdText: `${formatAmount(threshold)} ${d.view.currency}`, error: error?.message });
    return c.render("transactions", "Review the refund", body, { status: error?.status ?? 200 });
  }

  /** The merchant's wallet refund of this session (404 otherwise, the same for another merchant's). */
  async function walletRefundHere(c: PageContext): Promise<{ ok: true; value: WalletRefund } | { ok: false; page: Response }> {
    const missing = { ok: false as const, page: errorPage(404, "Not found", "No such refund of this payment in this account.") };
    if (!isId("refund", c.params.refundId!)) return missing;
    const res = await attempt(() => walletRefundOf(sql, owner(c), c.params.refundId!, services.networks));
    if (!res.ok) return res.error.code === "resource_not_found" ? missing : { ok: false, page: errorPage(res.error.status, "Not paid from a wallet", res.error.message) };
    if (res.value.refund.sessionId !== c.params.id) return missing;
    return { ok: true, value: res.value };
  }

  async function walletPage(c: PageContext, w: WalletRefund, error?: { message: string; status: number }) {
    const d = await loadDetail(services, c.login.merchant, c.env, c.params.id!);
    if (!d) return errorPage(404, "Not found", NOT_FOUND);
    return c.render("transactions", "Pay the refund from your wallet", refundWalletBody(c.env, c.login, d.view, w, error?.message), { status: error?.status ?? 200 });
  }

  return new Elysia()
    .get(
      "/dashboard/:env/transactions/:id/refund",
      pageRoute(async (c) => {
        const d = isId("paymentSession", c.params.id!) ? await loadDetail(services, c.login.merchant, c.env, c.params.id!) : undefined;
        if (!d) return c.render("transactions", "Not found", html`<p>No payment session ${c.params.id} in this account's ${c.env}.</p>`, { status: 404 });
        const rests = await refundableOf(sql, d.view.paymentSessionId, await indexerTablesPresent(sql));
        const asked = valuesOf((k) => c.query[k]);
        const values = { ...asked, amount: c.query.amount !== undefined ? asked.amount : defaultAmount(rests) };
        return c.render("transactions", "Refund this payment", refundFormBody(c.env, d.view, rests, values));
      }),
      HIDE,
    )
    // The review is a GET: it changes nothing, and a reload shows the same review.
    .get(
      "/dashboard/:env/transactions/:id/refund/review",
      pageRoute(async (c) => {
        const values = valuesOf((k) => c.query[k]);
        const res = await attempt(async () => previewRefund(sql, owner(c), await newRefund(c, values)));
        if (!res.ok) return res.error.code === "resource_not_found" ? errorPage(404, "Not found", NOT_FOUND) : formPage(c, values, res.error);
        return reviewPage(c, values, res.value);
      }),
      HIDE,
    )
    .post(
      "/dashboard/:env/transactions/:id/refunds",
      actionRoute(async (c) => {
        const values = valuesOf((k) => c.form.get(k));
        const preview = await attempt(async () => previewRefund(sql, owner(c), await newRefund(c, values)));
        if (!preview.ok) return preview.error.code === "resource_not_found" ? errorPage(404, "Not found", NOT_FOUND) : formPage(c, values, preview.error);
        // Above the threshold in production: a fresh second factor (for a person with one) and the password.
        if (passwordNeeded(c, preview.value)) {
          const stepUp = c.stepUp(`/dashboard/${c.env}/transactions/${c.params.id}`);
          if (stepUp) return stepUp;
        }
        if (passwordNeeded(c, preview.value) && !(await checkPassword(c.login.user, c.form.get("password") ?? ""))) {
          await recordSecurityEvent(services.database.db, c.actor(), "refund_refused", { paymentSessionId: c.params.id }, c.env);
          return reviewPage(c, values, preview.value, { message: "Wrong password: nothing was refunded.", status: 403 });
        }
        // The API's own create, judged again against the cap in its own transaction (a refund made
        // since the review is counted); the person's security-history line commits with it.
        const wallet = fromWallet((k) => c.form.get(k));
        const input = { ...(await newRefund(c, values)), ...(wallet ? { funding: "merchant_wallet" as const } : {}) };
        const res = await attempt(() =>
          sql.begin(async (tx) => {
            const row = await createRefund(tx, owner(c), input);
            await changeStatement(tx, c.by(), "refund_created", { refundId: row.id, paymentSessionId: row.sessionId, amount: formatUnitAmount(BigInt(row.amount), row.unitDecimals) });
            return row;
          }),
        );
        if (!res.ok) return res.error.code === "refund_not_payable_from_wallet" ? reviewPage(c, values, preview.value, res.error) : formPage(c, values, res.error);
        // A wallet refund waits for the wallet: its page asks it to sign (or send).
        if (wallet) return redirect(`/dashboard/${c.env}/transactions/${c.params.id}/refunds/${res.value.id}/wallet`);
        return redirect(`/dashboard/${c.env}/transactions/${c.params.id}?notice=${values.link ? "refund-link-created" : "refund-created"}#rf`);
      }),
      HIDE,
    )
    .get(
      "/dashboard/:env/transactions/:id/refunds/:refundId/wallet",
      pageRoute(async (c) => {
        const found = await walletRefundHere(c);
        if (!found.ok) return found.page;
        return walletPage(c, found.value);
      }),
      HIDE,
    )
    .post(
      "/dashboard/:env/transactions/:id/refunds/:refundId/wallet",
      actionRoute(async (c) => {
        const found = await walletRefundHere(c);
        if (!found.ok) return found.page;
        const get = (k: string) => c.form.get(k);
        // Checked completely before anything is written (wallet-store.ts): a refusal changes nothing.
        const res = await attempt(async () =>
          get("kind") === "transfer" ? recordWalletTransfer(sql, found.value, (get("txHash") ?? "").trim()) : recordWalletAuthorization(sql, found.value, authorizationOf(get)),
        );
        if (!res.ok) return walletPage(c, found.value, res.error);
        return redirect(`/dashboard/${c.env}/transactions/${c.params.id}?notice=refund-wallet-signed#rf`);
      }),
      HIDE,
    )
    .post(
      "/dashboard/:env/transactions/:id/refunds/:refundId/cancel",
      actionRoute(async (c) => {
        // The refund must be of this session (and so of this merchant and environment).
        const r = isId("refund", c.params.refundId!) ? await findRefund(services.database.db, owner(c), c.params.refundId!) : undefined;
        if (!r || r.sessionId !== c.params.id) return errorPage(404, "Not found", "No such refund of this payment in this account.");
        const res = await attempt(() => cancelRefund(sql, owner(c), r.id, c.by()));
        if (!res.ok) {
          const d = await loadDetail(services, c.login.merchant, c.env, c.params.id!);
          if (!d) return errorPage(404, "Not found", NOT_FOUND);
          return c.render("transactions", `Payment ${d.view.amount} ${d.view.currency}`, transactionBody(c.env, c.login, d), { status: res.error.status, notice: { kind: "error", text: res.error.message } });
        }
        return redirect(`/dashboard/${c.env}/transactions/${c.params.id}?notice=refund-canceled#rf`);
      }),
      HIDE,
    );
}
