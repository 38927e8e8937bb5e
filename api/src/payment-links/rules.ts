/**
 * A payment link's rules (docs/payment-links.md), pure: what a create may ask for (a fixed amount
 * or bounds for the payer's, a redirect that is https — or http on this machine in the sandbox —,
 * an expiry in the future), what state a link is in, the amount a payer typed on its page, and
 * where the payer goes once paid. The store and the page read and write around these.
 */
import type { Environment } from "../../../shared/environment.ts";
import { formatAmount, isSupportedCurrency, parseAmount, SUPPORTED_CURRENCIES, type Currency } from "../../../shared/money.ts";
import { ApiError } from "../errors.ts";
import { checkMetadata } from "../sessions/create/input.ts";

export const LINK_LIMITS = { descriptionLength: 500, redirectUrlLength: 2000, maxUses: 1_000_000, maxLifetimeDays: 3650 } as const;

/** The create body as its schema (http/payment-links.schemas.ts) typed it. */
export interface CreateLinkBody {
  amount?: string;
  minAmount?: string;
  maxAmount?: string;
  currency?: string;
  description: string;
  maxUses?: number;
  expiresAt?: string;
  redirectUrl?: string;
  metadata?: Record<string, string>;
}

export interface NewLinkInput {
  /** Fixed amount; null when the payer chooses within [minAmountMinor, maxAmountMinor]. */
  amountMinor: bigint | null;
  minAmountMinor: bigint | null;
  maxAmountMinor: bigint | null;
  currency: Currency;
  description: string;
  maxUses: number | null;
  expiresAt: Date | null;
  redirectUrl: string | null;
  metadata: Record<string, string>;
}

/** The service's bounds on one session's amount (SERVICE_MIN_AMOUNT, SERVICE_MAX_AMOUNT). */
export interface AmountBounds {
  minAmountMinor: bigint;
  maxAmountMinor: bigint;
}

function amountOf(field: "amount" | "minAmount" | "maxAmount", raw: string, bounds: AmountBounds): bigint {
  const a = parseAmount(raw);
  if (!a.ok) {
    throw new ApiError(
      "amount_invalid",
      a.problem === "zero" ? `${field} must be greater than zero.` : `${field} must be a string with exactly two decimal places, such as "12.34"; got ${JSON.stringify(raw.slice(0, 40))}.`,
      field,
    );
  }
  if (a.minor < bounds.minAmountMinor) throw new ApiError("amount_too_small", `${field} must be at least ${formatAmount(bounds.minAmountMinor)}.`, field);
  if (a.minor > bounds.maxAmountMinor) throw new ApiError("amount_too_large", `${field} must be at most ${formatAmount(bounds.maxAmountMinor)}.`, field);
  return a.minor;
}

/** The create's meaning checked, after its shape was: amounts, bounds, description, uses, expiry, redirect. */
export function checkCreateLink(body: CreateLinkBody, ctx: { bounds: AmountBounds; environment: Environment; now: Date }): NewLinkInput {
  let amountMinor: bigint | null = null;
  let minAmountMinor: bigint | null = null;
  let maxAmountMinor: bigint | null = null;
  if (body.amount !== undefined) {
    const other = body.minAmount !== undefined ? "minAmount" : body.maxAmount !== undefined ? "maxAmount" : undefined;
    if (other) throw new ApiError("parameter_invalid", `Send either amount (a fixed price) or minAmount and maxAmount (the payer chooses), not both.`, other);
    amountMinor = amountOf("amount", body.amount, ctx.bounds);
  } else {
    if (body.minAmount === undefined) throw new ApiError("parameter_missing", "Send amount (a fixed price), or minAmount and maxAmount (the payer chooses within them).", "amount");
    if (body.maxAmount === undefined) throw new ApiError("parameter_missing", "maxAmount is required with minAmount.", "maxAmount");
    minAmountMinor = amountOf("minAmount", body.minAmount, ctx.bounds);
    maxAmountMinor = amountOf("maxAmount", body.maxAmount, ctx.bounds);
    if (maxAmountMinor < minAmountMinor) throw new ApiError("parameter_invalid", "maxAmount must not be below minAmount.", "maxAmount");
  }
  const currency = (body.currency ?? "USD").toUpperCase();
  if (!isSupportedCurrency(currency)) {
    throw new ApiError("currency_unsupported", `currency ${JSON.stringify(currency.slice(0, 10))} is not supported; supported: ${SUPPORTED_CURRENCIES.join(", ")}.`, "currency");
  }
  const description = body.description.trim();
  if (description === "") throw new ApiError("parameter_invalid", "description must say what is paid for.", "description");
  let expiresAt: Date | null = null;
  if (body.expiresAt !== undefined) {
    const t = Date.parse(body.expiresAt);
    if (!/^\d{4}-\d{2}-\d{2}T/.test(body.expiresAt) || Number.isNaN(t)) throw new ApiError("parameter_invalid", "expiresAt must be a date-time such as 2027-01-31T23:59:59Z.", "expiresAt");
    if (t <= ctx.now.getTime() + 60_000) throw new ApiError("parameter_invalid", "expiresAt must be at least a minute in the future.", "expiresAt");
    if (t > ctx.now.getTime() + LINK_LIMITS.maxLifetimeDays * 86_400_000) throw new ApiError("parameter_invalid", `expiresAt must be within ${LINK_LIMITS.maxLifetimeDays} days.`, "expiresAt");
    expiresAt = new Date(t);
  }
  const redirectUrl = body.redirectUrl === undefined ? null : checkRedirectUrl(body.redirectUrl, ctx.environment);
  return {
    amountMinor,
    minAmountMinor,
    maxAmountMinor,
    currency,
    description,
    maxUses: body.maxUses ?? null,
    expiresAt,
    redirectUrl,
    metadata: checkMetadata(body.metadata),
  };
}

const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** An absolute https URL without credentials; in the sandbox also http on this machine (a merchant trying it out). Returns it normalised. */
export function checkRedirectUrl(raw: string, environment: Environment): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ApiError("redirect_url_invalid", undefined, "redirectUrl");
  }
  const localHttp = environment === "sandbox" && url.protocol === "http:" && LOCAL_HOSTS.has(url.hostname);
  if ((url.protocol !== "https:" && !localHttp) || url.username || url.password || raw.length > LINK_LIMITS.redirectUrlLength) {
    throw new ApiError("redirect_url_invalid", undefined, "redirectUrl");
  }
  return url.toString();
}

export type LinkStatus = "active" | "inactive" | "expired" | "used_up";

export interface LinkState {
  deactivatedAt: Date | null;
  expiresAt: Date | null;
  maxUses: number | null;
  /** Sessions the link started that did not end CANCELED (store.ts liveUses). */
  uses: number;
}

/** Deactivated before expired before used up: what the merchant did says the most. */
export function linkStatus(l: LinkState, now: Date): LinkStatus {
  if (l.deactivatedAt) return "inactive";
  if (l.expiresAt && l.expiresAt.getTime() <= now.getTime()) return "expired";
  if (l.maxUses !== null && l.uses >= l.maxUses) return "used_up";
  return "active";
}

/** The refusal of a visit to a link that is not active, in the catalogue's codes. */
export function closedError(status: Exclude<LinkStatus, "active">): ApiError {
  return new ApiError(status === "inactive" ? "payment_link_inactive" : status === "expired" ? "payment_link_expired" : "payment_link_used_up");
}

export interface LinkAmount {
  amountMinor: bigint | null;
  minAmountMinor: bigint | null;
  maxAmountMinor: bigint | null;
}

/** The session's amount for a visit: the link's fixed one, or what the payer typed, within the link's bounds. */
export function visitAmount(link: LinkAmount, typed: string | undefined): { ok: true; amountMinor: bigint } | { ok: false; problem: string } {
  if (link.amountMinor !== null) return { ok: true, amountMinor: link.amountMinor };
  const min = link.minAmountMinor!;
  const max = link.maxAmountMinor!;
  const raw = (typed ?? "").trim().replace(/^\$/, "");
  // A payer types "20" or "20.5" as often as "20.00": whole and one-decimal amounts are read too.
  const normal = /^\d{1,12}$/.test(raw) ? `${raw}.00` : /^\d{1,12}\.\d$/.test(raw) ? `${raw}0` : raw;
  const a = parseAmount(normal);
  const range = `${formatAmount(min)} to ${formatAmount(max)}`;
  if (!a.ok) return { ok: false, problem: raw === "" ? `Enter an amount from ${range}.` : `Enter the amount as a number such as ${formatAmount(min)}: from ${range}.` };
  if (a.minor < min) return { ok: false, problem: `The amount must be at least ${formatAmount(min)}.` };
  if (a.minor > max) return { ok: false, problem: `The amount must be at most ${formatAmount(max)}.` };
  return { ok: true, amountMinor: a.minor };
}

/** Where a paid session's payer is sent: the link's redirectUrl with the session's id added (the merchant looks it up). */
export function redirectTarget(redirectUrl: string, paymentSessionId: string): string {
  const url = new URL(redirectUrl);
  url.searchParams.set("paymentSessionId", paymentSessionId);
  return url.toString();
}

/** The public address of a link's page, on its environment's base address. */
export function linkUrl(base: URL, id: string): string {
  return new URL(`pay/${id}`, base.href.endsWith("/") ? base : `${base.href}/`).toString();
}
