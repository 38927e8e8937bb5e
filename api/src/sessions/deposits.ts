/**
 * Where a new session can be paid: one deposit address per enabled network of its
 * environment, bound to the merchant's settlement address on that network. Pure.
 */
import { getAddress, type Address } from "viem";
import { predictDepositAddressLowercase, predictedFactoryAddress, sessionSalt } from "../../../shared/contracts/addresses.ts";
import type { NetworkConfig } from "../../../shared/chains/config.ts";
import type { Environment } from "../../../shared/environment.ts";
import { minorToBaseUnits } from "../../../shared/money.ts";
import type { AcceptedToken } from "../db/schema.ts";

export interface PlannedDeposit {
  chainId: number;
  /** Lowercase 0x hex, as the indexer stores addresses. */
  address: string;
  settlementAddress: string;
  /** The network's main stablecoin. */
  tokenAddress: string;
  /** The session's unit on the network: the most decimals among its accepted stablecoins. */
  decimals: number;
  /** The session amount in that unit. */
  requiredBaseUnits: bigint;
  confirmations: number;
  /** Every stablecoin accepted on the network, main first: any of them pays, at par. */
  tokens: AcceptedToken[];
}

export type DepositPlan =
  | { ok: true; deposits: PlannedDeposit[] }
  | { ok: false; problem: "no_network" | "no_settlement" };

export function planDeposits(args: {
  sessionId: string;
  environment: Environment;
  amountMinor: bigint;
  networks: readonly NetworkConfig[];
  /** The merchant's settlement address per chain id, for this environment. */
  settlements: ReadonlyMap<number, string>;
  /** Used on networks with no merchant setting; sandbox only. */
  defaultSettlement?: string;
}): DepositPlan {
  const networks = args.networks.filter((n) => n.environment === args.environment);
  if (networks.length === 0) return { ok: false, problem: "no_network" };
  const salt = sessionSalt(args.sessionId);
  const deposits: PlannedDeposit[] = [];
  for (const n of networks) {
    const settlement = args.settlements.get(n.chainId) ?? (args.environment === "sandbox" ? args.defaultSettlement : undefined);
    if (!settlement) continue; // a production network without a settlement address is not offered
    const address = predictDepositAddressLowercase({ factory: n.factory ?? predictedFactoryAddress(), settlement: settlement as Address, sessionSalt: salt });
    const { tokens, unit } = acceptedTokens(n);
    deposits.push({
      chainId: n.chainId,
      address,
      settlementAddress: settlement.toLowerCase(),
      tokenAddress: tokens[0]!.address,
      decimals: unit,
      requiredBaseUnits: minorToBaseUnits(args.amountMinor, unit),
      confirmations: n.confirmations,
      tokens,
    });
  }
  if (deposits.length === 0) return { ok: false, problem: "no_settlement" };
  return { ok: true, deposits };
}

/**
 * A network's accepted stablecoins as a session stores them, and the session's unit there: the
 * most decimals among them, so that every token's amount is a whole number of units (USDC and
 * USDT have 6: the unit is 6). Kept per network config object: it is on the create path.
 */
const accepted = new WeakMap<NetworkConfig, { tokens: AcceptedToken[]; unit: number }>();
export function acceptedTokens(n: NetworkConfig): { tokens: AcceptedToken[]; unit: number } {
  let a = accepted.get(n);
  if (!a) {
    const tokens = n.stablecoins.map((c) => ({ address: c.address.toLowerCase(), symbol: c.symbol, decimals: c.decimals }));
    a = { tokens, unit: Math.max(...tokens.map((t) => t.decimals)) };
    accepted.set(n, a);
  }
  return a;
}

export type AddressInput = { ok: true; address: Address } | { ok: false; problem: "invalid" | "checksum" };

/**
 * An address as a client sends it: 0x and 40 hex digits. All-lowercase and all-uppercase
 * digits carry no checksum and are taken as they are; mixed case is an EIP-55 checksum and
 * must be right (a wrong one is a typo, and funds sent to a typo are lost).
 */
export function checkAddressInput(text: unknown): AddressInput {
  if (typeof text !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(text)) return { ok: false, problem: "invalid" };
  const digits = text.slice(2);
  const address = getAddress(text.toLowerCase());
  if (digits !== digits.toLowerCase() && digits !== digits.toUpperCase() && address !== text) return { ok: false, problem: "checksum" };
  return { ok: true, address };
}

/** A settlement address a merchant may set: a checksummed (or unchecksummed) 20-byte address, not zero. */
export function parseSettlementAddress(text: string): Address | undefined {
  const r = checkAddressInput(text);
  return r.ok && !/^0x0{40}$/i.test(r.address) ? r.address : undefined;
}
