/**
 * What each side sees of a session. The merchant's view (API key) has everything the
 * merchant gave us; the public view (session token, read by the payer's browser) has only
 * what a checkout needs: no metadata, no reference id, nothing of other sessions.
 */
import { formatAmount } from "../../../shared/money.ts";
import type { Environment } from "../../../shared/environment.ts";
import type { SessionStatus, TransitionReason } from "../../../shared/status.ts";
import type { ReasonAndDetail } from "./event-detail.ts";
import type { AcceptedToken, paymentSessions, sessionDeposits, sessionEvents } from "../db/schema.ts";
import { presetByChainId, presetStablecoin } from "../../../shared/chains/presets.ts";
import { checksumAddress } from "../../../shared/contracts/keccak.ts";

/**
 * Addresses leave the API in EIP-55 checksum form; they are stored lowercase. Not viem's
 * getAddress: its cache only churns on deposit addresses, each seen once (keccak.ts).
 */
export const checksummed: (address: string) => string = checksumAddress;

/**
 * The same, remembered: for the few addresses every session repeats (its network's token, the
 * merchant's settlement address), so each view pays one keccak (its deposit address), not three.
 */
const remembered = new Map<string, string>();
function checksummedKnown(address: string): string {
  let c = remembered.get(address);
  if (c === undefined) {
    c = checksumAddress(address);
    if (remembered.size >= 10_000) remembered.clear();
    remembered.set(address, c);
  }
  return c;
}

export type SessionRow = typeof paymentSessions.$inferSelect;
/** A stored event as a history shows it (its snapshot, what a webhook body is built from, left out). */
export type EventRow = Omit<typeof sessionEvents.$inferSelect, "snapshot">;
export type DepositRow = typeof sessionDeposits.$inferSelect;

/** Where and how much to pay on one network: what a checkout or a wallet needs. */
export interface NetworkView {
  chainId: number;
  network: string;
  tokenAddress: string;
  tokenSymbol: string;
  decimals: number;
  depositAddress: string;
  /** The amount in the token's base units, as a decimal string. */
  amountBaseUnits: string;
  confirmations: number;
  /** Every stablecoin accepted on the network, the main one first, with the amount in its own base units. */
  tokens: NetworkTokenView[];
  /** Merchant views only: where this deposit's funds are swept (fixed when the session was created). */
  settlementAddress?: string;
}

export interface NetworkTokenView {
  tokenAddress: string;
  tokenSymbol: string;
  decimals: number;
  amountBaseUnits: string;
}

export interface DepositLike {
  chainId: number;
  address: string;
  tokenAddress: string;
  decimals: number;
  requiredBaseUnits: bigint | string;
  confirmations: number;
  settlementAddress?: string;
  /** The accepted stablecoins as stored (session_deposits.tokens); absent or empty: only `tokenAddress`. */
  tokens?: readonly AcceptedToken[];
}

/** One network of a session; `withSettlement` for the merchant's views (the payer's has no use for it). */
export function networkView(d: DepositLike, withSettlement = false): NetworkView {
  const preset = presetByChainId(d.chainId);
  return {
    chainId: d.chainId,
    network: preset?.name ?? `chain ${d.chainId}`,
    tokenAddress: checksummedKnown(d.tokenAddress),
    tokenSymbol: d.tokens?.find((t) => t.address === d.tokenAddress.toLowerCase())?.symbol ?? symbolOf(d.chainId, d.tokenAddress),
    decimals: d.decimals,
    depositAddress: checksummed(d.address),
    amountBaseUnits: d.requiredBaseUnits.toString(),
    confirmations: d.confirmations,
    tokens: tokenViews(d),
    ...(withSettlement && d.settlementAddress ? { settlementAddress: checksummedKnown(d.settlementAddress) } : {}),
  };
}

/**
 * The accepted stablecoins of a deposit, main one first, each with the amount in its own base units: the required
 * amount is in the session's unit (the most decimals among them), so each token's is that divided
 * by 10^(unit − its decimals) — exact, since amounts are whole cents and tokens have ≥ 2 decimals.
 */
export function tokenViews(d: DepositLike): NetworkTokenView[] {
  const required = BigInt(d.requiredBaseUnits);
  const tokens = d.tokens && d.tokens.length > 0 ? d.tokens : [{ address: d.tokenAddress, symbol: symbolOf(d.chainId, d.tokenAddress), decimals: d.decimals }];
  return tokens.map((t) => ({
    tokenAddress: checksummedKnown(t.address),
    tokenSymbol: t.symbol,
    decimals: t.decimals,
    amountBaseUnits: (required / 10n ** BigInt(Math.max(0, d.decimals - t.decimals))).toString(),
  }));
}

const symbolOf = (chainId: number, token: string) => presetStablecoin(chainId, token)?.symbol ?? "USD stablecoin";

/**
 * One event of the session: a status change's reason, or a money event's (`funds_received`,
 * `funds_settled`, `funds_reverted`: the status did not change), with the detail of that reason.
 */
export type HistoryEntry = ReasonAndDetail & {
  sequence: number;
  status: SessionStatus;
  previousStatus: SessionStatus | null;
  at: string;
};

export interface MerchantSessionView {
  paymentSessionId: string;
  status: SessionStatus;
  statusReason: TransitionReason;
  amount: string;
  currency: string;
  environment: Environment;
  merchantId: string;
  referenceId: string | null;
  metadata: Record<string, string>;
  /** The payment link whose page started it (docs/payment-links.md); null when the API created it. */
  paymentLinkId: string | null;
  expiresAt: string;
  createdAt: string;
  updatedAt: string;
  networks: NetworkView[];
  /** What its refunds that are not CANCELED or FAILED hold (docs/refunds.md); in the API's answers, not in webhooks. */
  amountRefunded?: string;
  history?: HistoryEntry[];
}

export interface PublicSessionView {
  paymentSessionId: string;
  status: SessionStatus;
  amount: string;
  currency: string;
  environment: Environment;
  merchantName: string;
  expiresAt: string;
  createdAt: string;
  networks: NetworkView[];
}

export function merchantView(row: SessionRow, publicMerchantId: string, deposits: DepositLike[], events?: EventRow[], amountRefunded?: string): MerchantSessionView {
  return {
    paymentSessionId: row.id,
    status: row.status,
    statusReason: row.statusReason,
    amount: formatAmount(row.amountMinor),
    currency: row.currency,
    environment: row.environment,
    merchantId: publicMerchantId,
    referenceId: row.referenceId,
    metadata: row.metadata,
    paymentLinkId: row.paymentLinkId,
    expiresAt: row.expiresAt.toISOString(),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    networks: deposits.map((d) => networkView(d, true)),
    ...(amountRefunded !== undefined ? { amountRefunded } : {}),
    ...(events ? { history: events.map(historyEntry) } : {}),
  };
}

export function publicView(row: SessionRow, merchantName: string, deposits: DepositLike[]): PublicSessionView {
  return {
    paymentSessionId: row.id,
    status: row.status,
    amount: formatAmount(row.amountMinor),
    currency: row.currency,
    environment: row.environment,
    merchantName,
    expiresAt: row.expiresAt.toISOString(),
    createdAt: row.createdAt.toISOString(),
    networks: deposits.map((d) => networkView(d)),
  };
}

function historyEntry(e: EventRow): HistoryEntry {
  return {
    sequence: e.sequence,
    status: e.status,
    previousStatus: e.previousStatus,
    ...storedReasonAndDetail(e),
    at: e.createdAt.toISOString(),
  };
}

/**
 * A stored event's reason and detail (app.session_events) as the typed code wrote them
 * (repository.ts recordTransition and recordMoneyEvent, typed by event-detail.ts): read back
 * as such, not checked again.
 */
export function storedReasonAndDetail(e: { reason: string; detail: Record<string, unknown> }): ReasonAndDetail {
  return { reason: e.reason, detail: e.detail } as ReasonAndDetail;
}
