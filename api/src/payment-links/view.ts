/** A payment link as the merchant sees it (the API's answers, the dashboard), pure: from its row, its uses and its page's address. */
import { formatAmount } from "../../../shared/money.ts";
import { linkStatus, linkUrl, type LinkStatus } from "./rules.ts";
import type { LinkWithUses } from "./store.ts";
import type { Environment } from "../../../shared/environment.ts";

export interface PaymentLinkView {
  paymentLinkId: string;
  url: string;
  status: LinkStatus;
  amount: string | null;
  minAmount: string | null;
  maxAmount: string | null;
  currency: string;
  description: string;
  maxUses: number | null;
  uses: number;
  expiresAt: string | null;
  redirectUrl: string | null;
  metadata: Record<string, string>;
  environment: Environment;
  createdAt: string;
  deactivatedAt: string | null;
}

const money = (v: bigint | null) => (v === null ? null : formatAmount(v));

export function linkView(l: LinkWithUses, base: URL, now: Date): PaymentLinkView {
  return {
    paymentLinkId: l.id,
    url: linkUrl(base, l.id),
    status: linkStatus(l, now),
    amount: money(l.amountMinor),
    minAmount: money(l.minAmountMinor),
    maxAmount: money(l.maxAmountMinor),
    currency: l.currency,
    description: l.description,
    maxUses: l.maxUses,
    uses: l.uses,
    expiresAt: l.expiresAt?.toISOString() ?? null,
    redirectUrl: l.redirectUrl,
    metadata: l.metadata,
    environment: l.environment,
    createdAt: l.createdAt.toISOString(),
    deactivatedAt: l.deactivatedAt?.toISOString() ?? null,
  };
}
