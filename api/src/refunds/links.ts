/**
 * A refund link's rules, pure (docs/refunds.md, "Refund links"): the link id (a bearer secret:
 * whoever holds it chooses where the refund goes), its hash (how it is looked up, so the table
 * never holds it in clear) and its seal (so the merchant's view can show the URL again), the
 * claim URL, what state a link is in, and which addresses a claim may name. The statements are
 * refunds/link-store.ts; the page is api/src/refund-page/.
 */
import { createHash } from "node:crypto";
import { newSecret } from "../../../shared/ids.ts";
import { seal, unseal } from "../credentials/seal.ts";
import { checkAddressInput } from "../sessions/deposits.ts";
import type { RefundState } from "./logic.ts";

const LINK_PREFIX = "rl_";

/** How long a link may stay open: 10 minutes to 30 days, 7 days unless the create says. */
export const LINK_LIFETIME = { minSeconds: 600, maxSeconds: 30 * 86400, defaultSeconds: 7 * 86400 } as const;

/** A fresh link id: rl_ and a 40-character secret of 62 letters (~238 bits), like API keys. */
export function newLinkId(): string {
  return LINK_PREFIX + newSecret();
}

/** Whether `id` has the exact shape of a link id (checked before it reaches a query). */
/** `path` with every refund link id in it (any case: a path may be typed in capitals) shown as `{linkId}`. */
export function maskLinkIds(path: string): string {
  return path.replace(/rl_[0-9A-Za-z]{40}/gi, "{linkId}");
}

export function isLinkId(id: string): boolean {
  return /^rl_[0-9A-Za-z]{40}$/.test(id);
}

/** What the table keys a link by: hex SHA-256 of its id (the id has 238 bits: no salt or stretching is needed). */
export function linkHash(id: string): string {
  return createHash("sha256").update(id, "utf8").digest("hex");
}

/** The seal's format for link ids: bound to their refund, so a sealed id copied to another row does not open. */
const format = (refundId: string) => ({ label: "v1", aad: `refund-link:${refundId}` });

export function sealLinkId(key: Buffer, refundId: string, id: string): string {
  return seal(key, id, format(refundId));
}

export function openLinkId(key: Buffer, refundId: string, sealed: string): string {
  return unseal(key, sealed, format(refundId));
}

/** The page the payer opens: /refund/{id} under the environment's public base (a path prefix kept). */
export function claimUrlOf(base: URL, id: string): string {
  const root = base.toString().endsWith("/") ? base.toString() : `${base.toString()}/`;
  return new URL(`refund/${id}`, root).toString();
}

/**
 * What a link is now: `open` (it can be claimed), `claimed` (once; whatever the refund did next),
 * `expired` (unclaimed past its expiry), `canceled` (the merchant canceled the refund first).
 * `expired` is the database's clock (`expires_at <= now()`), so every process agrees on it.
 */
export type LinkStatus = "open" | "claimed" | "expired" | "canceled";

export function linkStatus(l: { state: RefundState; claimed: boolean; expired: boolean }): LinkStatus {
  if (l.claimed) return "claimed";
  if (l.state === "CANCELED") return "canceled";
  if (l.expired) return "expired";
  return "open";
}

/** Addresses a refund must never be sent to: it would be lost or come straight back. Lowercase. */
export interface ForbiddenDestinations {
  /** The merchant's refund vault on the network (null: no relayer signs there). */
  vault: string | null;
  /** The refund's token contracts. */
  tokens: readonly string[];
  /** The session's deposit addresses. */
  deposits: readonly string[];
  /**
   * Addresses on the network that are no wallet and would keep what is sent: every stablecoin the
   * network watches and the service's own contracts (the deposit factory, RefundVaults,
   * AuthorizationBatch). Another session's deposit address is refused by the claim's statement.
   */
  contracts: readonly string[];
}

export type ClaimAddress = { ok: true; address: string } | { ok: false; problem: "malformed" | "checksum" | "zero" | "vault" | "token" | "deposit" | "contract" };

/** The address a payer typed or their wallet filled: a 20-byte 0x address, checksummed when mixed-case, none of the forbidden ones. */
export function checkClaimAddress(text: string, forbidden: ForbiddenDestinations): ClaimAddress {
  const checked = checkAddressInput(text.trim());
  if (!checked.ok) return { ok: false, problem: checked.problem === "checksum" ? "checksum" : "malformed" };
  const address = checked.address.toLowerCase();
  if (/^0x0{40}$/.test(address)) return { ok: false, problem: "zero" };
  if (forbidden.vault !== null && forbidden.vault.toLowerCase() === address) return { ok: false, problem: "vault" };
  if (forbidden.tokens.some((t) => t.toLowerCase() === address)) return { ok: false, problem: "token" };
  if (forbidden.deposits.some((d) => d.toLowerCase() === address)) return { ok: false, problem: "deposit" };
  if (forbidden.contracts.some((c) => c.toLowerCase() === address)) return { ok: false, problem: "contract" };
  return { ok: true, address };
}
