/**
 * A session's history in plain words: what happened, and for under-, over- and late payments
 * what became of the money. Pure (the detail page renders it; timeline.test.ts checks it).
 */
import type { EventReason } from "../../../shared/status.ts";
import type { HistoryEntry } from "../sessions/views.ts";
import type { RefundView } from "../refunds/view.ts";

/** What the timeline reads of a history entry; each detail field is read with care (tokenAmount). */
type Entry = Pick<HistoryEntry, "sequence" | "status" | "previousStatus" | "at"> & { reason: EventReason; detail: Record<string, unknown> };

export interface TimelineItem {
  at: string;
  status: string;
  title: string;
  text: string;
}

/** Base units as a decimal string of the token (6 decimals: 1234500 → "1.2345"). */
export function tokenAmount(baseUnits: unknown, decimals: number): string | undefined {
  if (typeof baseUnits !== "string" && typeof baseUnits !== "number" && typeof baseUnits !== "bigint") return undefined;
  let v: bigint;
  try {
    v = BigInt(baseUnits);
  } catch {
    return undefined;
  }
  const neg = v < 0n;
  if (neg) v = -v;
  const scale = 10n ** BigInt(decimals);
  const whole = v / scale;
  const frac = (v % scale).toString().padStart(decimals, "0").replace(/0+$/, "");
  return `${neg ? "-" : ""}${whole}${frac ? `.${frac}` : ""}`;
}

export function describe(entry: Entry, ctx: { amount: string; currency: string; decimals: number; symbol: string }): TimelineItem {
  const d = entry.detail ?? {};
  const tok = (k: string) => tokenAmount(d[k], ctx.decimals);
  const money = (k: string) => (tok(k) ? `${tok(k)} ${ctx.symbol}` : "an amount");
  const base = { at: entry.at, status: entry.status };
  // Paid by the payer's signed authorization: the money went straight to the settlement address.
  const byAuthorization = d.method === "authorization";
  switch (entry.reason) {
    case "created":
      return { ...base, title: "Created", text: `The session was created for ${ctx.amount} ${ctx.currency}, waiting for payment.` };
    case "paid":
      if (byAuthorization) return { ...base, title: "Paid", text: "The payer's signed authorization moved the full amount straight to your settlement address; it is confirmed." };
      return { ...base, title: "Paid", text: "The full amount arrived at the deposit address and is confirmed. It is being moved to your settlement address." };
    case "overpaid":
      return { ...base, title: "Overpaid", text: `The payer sent more than asked (${money("overpaid")} extra). Everything received, surplus included, is moved to your settlement address; refund the surplus from this page, or let automatic returns (Settings → Refunds) send it back.` };
    case "expired":
      return { ...base, title: "Expired", text: "Nothing was paid before the session expired. No money moved." };
    case "canceled_by_payer":
      return { ...base, title: "Canceled by the payer", text: "The payer canceled before paying. No money moved." };
    case "canceled_by_merchant":
      return { ...base, title: "Canceled by you", text: "You canceled the session (with your API key or from this dashboard; the security history says who, for a dashboard cancel) before any payment. No money moved." };
    case "underpaid":
      return { ...base, title: "Underpaid", text: `The session expired with only part of the amount paid (${money("shortBy")} short). What arrived is moved to your settlement address all the same; refund what arrived from this page, or let automatic returns (Settings → Refunds) send it back.` };
    case "simulated":
      return { ...base, title: "Error (simulated)", text: "A sandbox tool sent this session to ERROR so your error handling can be tried. No money moved." };
    case "swept":
      if (byAuthorization) return { ...base, title: "Settled", text: "The payment by signed authorization is at your settlement address: no sweep was needed." };
      return { ...base, title: "Settled", text: "The payment reached your settlement address and is confirmed." };
    case "sweep_failed":
      return { ...base, title: "Sweep failed", text: "Moving the funds to your settlement address failed after its retries. The money is safe at the deposit address and is moved in a later round." };
    case "reorged":
      return { ...base, title: "Payment undone by the network", text: "The network reorganised and the payment's transaction is no longer in the chain. Do not ship the order unless the payer pays again." };
    case "paid_after_cancel":
      if (byAuthorization) {
        return { ...base, title: "Paid after it ended", text: `A payment (${money("amount")}) by the payer's signed authorization reached your settlement address after the session had been canceled or expired; refund it from this page (automatic returns, if on, send it back) or fulfil the order.` };
      }
      return { ...base, title: "Paid after it ended", text: `A payment (${money("amount")}) arrived after the session had been canceled or expired. It is moved to your settlement address all the same; refund it from this page (automatic returns, if on, send it back) or fulfil the order.` };
    case "funds_received":
      if (byAuthorization) return { ...base, title: "More money received", text: `Another payment of ${money("amountBaseUnits")} by the payer's signed authorization reached your settlement address.` };
      return { ...base, title: "More money received", text: `Another payment of ${money("amountBaseUnits")} arrived at the deposit address. It is moved to your settlement address.` };
    case "funds_settled":
      return { ...base, title: "Money settled", text: `${money("amountBaseUnits")} reached your settlement address.` };
    case "funds_reverted":
      return { ...base, title: "Money movement undone", text: "A movement of this session's funds left the chain (a reorganisation). It is reported again if it comes back." };
    default:
      return { ...base, title: String(entry.reason), text: "" };
  }
}

/** What the timeline reads of a refund (refunds/view.ts). */
type RefundEntry = Pick<RefundView, "refundId" | "status" | "amount" | "currency" | "reason" | "parts" | "failureReason" | "funding" | "createdAt" | "sentAt" | "finishedAt"> &
  Partial<Pick<RefundView, "claimedAt" | "approvedAt" | "requireApproval">>;

/**
 * A refund's steps on the session's timeline: asked for, sent, and how it ended. Each at the time
 * the refund records for it; the page merges them with the session's own history by time.
 */
export function refundItems(refunds: readonly RefundEntry[]): TimelineItem[] {
  const out: TimelineItem[] = [];
  for (const r of refunds) {
    const tokens = r.parts.map((p) => `${p.amount} ${p.tokenSymbol}`).join(" and ");
    out.push({ at: r.createdAt, status: "PENDING", title: "Refund asked for", text: `A refund of ${r.amount} ${r.currency} (${tokens}, reason ${r.reason}) was created: ${r.refundId}.` });
    // A refund to a link: the payer's claim names the address; with approval, the merchant's
    // approval lets it go. Both are steps a person reading the history asks about.
    if (r.claimedAt) {
      const to = r.parts[0]?.destination ?? "an address";
      const next = r.requireApproval ? (r.approvedAt ? "" : " It waits for your approval.") : " It goes out now.";
      out.push({ at: r.claimedAt, status: "PENDING", title: "Refund link claimed", text: `The payer claimed the refund link of ${r.refundId} for ${to}.${next}` });
    }
    if (r.approvedAt) out.push({ at: r.approvedAt, status: "PENDING", title: "Refund approved", text: `The claim of ${r.refundId} was approved; it goes out now.` });
    if (r.sentAt) out.push({ at: r.sentAt, status: "SENT", title: "Refund sent", text: `The refund ${r.refundId} went out ${r.funding === "merchant_wallet" ? "from your own wallet (your settlement address)" : "from your refund balance"} to the payer.` });
    if (r.finishedAt) {
      const end =
        r.status === "SUCCEEDED"
          ? { title: "Refunded", text: `${tokens} reached the payer (${r.refundId}).` }
          : r.status === "CANCELED"
            ? { title: "Refund canceled", text: `The refund ${r.refundId} was canceled before it was sent; its amount can be refunded again.` }
            : r.status === "FAILED"
              ? { title: "Refund failed", text: `The refund ${r.refundId} did not reach the payer (${r.failureReason ?? "failed"}); its amount can be refunded again.` }
              : undefined;
      if (end) out.push({ at: r.finishedAt, status: r.status, ...end });
    }
  }
  return out;
}
