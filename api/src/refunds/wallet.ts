/**
 * A refund paid from the merchant's own wallet (docs/refunds.md, "From the merchant's own
 * wallet"), the pure part: what the wallet must pay — from the session's settlement address on the
 * refund's network, to the refund's one destination, exactly its part's base units of its token —
 * and the checks of what the wallet gave against it: a signed EIP-3009 TransferWithAuthorization
 * (a USDC-like token: the relayer submits it), or the hash of an ERC-20 transfer the wallet sent
 * itself (a USDT-like token: its receipt is watched). No I/O: the token's domain and the
 * settlement address are read by the caller (wallet-store.ts).
 */
import { getAddress, isAddress, isAddressEqual, type Address, type Hex } from "viem";
import { signedByFrom, type TokenDomain } from "../gasless/authorization.ts";
import type { LoggedTransfer } from "./batch.ts";

/** The longest validity window the page asks for, and the service accepts: a signature that lies around is spendable only briefly. */
export const WALLET_WINDOW_MAX_SECONDS = 3600n;
/** What a signed authorization must still have when it is stored: the relayer needs a few blocks to carry it out. */
export const WALLET_MIN_SECONDS_LEFT = 60n;

/** What the merchant's wallet must pay for a refund. */
export interface WalletPayment {
  chainId: number;
  /** The session's settlement address on the refund's network: the wallet's account. */
  from: Address;
  token: Address;
  to: Address;
  value: bigint;
}

/** A refund's single part and its destination, or why the wallet cannot pay it. */
export function walletPaymentOf(
  refund: { chainId: number; parts: readonly { token: string; baseUnits: string; destination: string | null }[] },
  settlement: string,
): { ok: true; payment: WalletPayment } | { ok: false; reason: string } {
  if (refund.parts.length !== 1) return { ok: false, reason: "A refund over two tokens is paid from the refund balance: refund each token separately to pay from your wallet." };
  const part = refund.parts[0]!;
  if (!part.destination) return { ok: false, reason: "The refund has no destination yet (no single address paid): it cannot be paid from a wallet." };
  return {
    ok: true,
    payment: { chainId: refund.chainId, from: getAddress(settlement), token: getAddress(part.token), to: getAddress(part.destination), value: BigInt(part.baseUnits) },
  };
}

/** A TransferWithAuthorization as the page POSTs it (numbers as decimal strings in the form). */
export interface WalletAuthorization {
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
  signature: Hex;
}

/**
 * The first thing wrong with a submitted authorization for `p` at `nowSeconds`, or null. Fixed
 * order (signer, destination, amount, window, nonce), so one submission always gets one answer.
 */
export function authorizationProblem(sub: WalletAuthorization, p: WalletPayment, nowSeconds: bigint): string | null {
  if (!isAddressEqual(sub.from, p.from)) return `The authorization is for ${getAddress(sub.from)}, not the session's settlement address ${p.from}: sign with that account.`;
  if (!isAddressEqual(sub.to, p.to)) return `The authorization pays ${getAddress(sub.to)}, not the refund's destination ${p.to}.`;
  if (sub.value !== p.value) return `The authorization is for ${sub.value} base units; the refund is ${p.value}.`;
  if (sub.validBefore - nowSeconds < WALLET_MIN_SECONDS_LEFT) return "The authorization's validity window has closed (or closes within a minute): sign again.";
  if (sub.validAfter > nowSeconds) return "The authorization is not valid yet (validAfter is in the future).";
  if (sub.validBefore - nowSeconds > WALLET_WINDOW_MAX_SECONDS) return `The authorization stays valid too long: at most ${WALLET_WINDOW_MAX_SECONDS} seconds from now.`;
  if (!/^0x[0-9a-fA-F]{64}$/.test(sub.nonce)) return "The authorization's nonce is not 32 bytes of hex.";
  return null;
}

/**
 * Whether `sub.signature` is `sub.from`'s EIP-712 signature of exactly these terms on the token's
 * domain (an ordinary account's): the payers' check (gasless/authorization.ts signedByFrom), the
 * terms being the submission's own.
 */
export async function signedBySettlement(domain: TokenDomain, sub: WalletAuthorization): Promise<boolean> {
  if (!/^0x[0-9a-fA-F]{130}$/.test(sub.signature)) return false;
  const terms = { to: sub.to, value: sub.value, validAfter: sub.validAfter, validBefore: sub.validBefore, nonce: sub.nonce };
  return signedByFrom(domain, terms, { ...sub, chainId: domain.chainId });
}

/** Whether a form field is an address (any case; checksummed later). */
export const looksLikeAddress = (s: string): s is Address => isAddress(s, { strict: false });

/** Whether a string is a transaction hash. */
export const isTxHash = (s: string): s is Hex => /^0x[0-9a-fA-F]{64}$/.test(s);

/**
 * The outcome a mined wallet transfer gives its refund: SUCCEEDED when its receipt logs the
 * token's Transfer from the settlement address to the destination of exactly the amount; FAILED
 * (`reverted`, or `transfer_missing`: another token, recipient, sender or amount) otherwise.
 */
export function transferOutcome(status: "success" | "reverted", logs: readonly LoggedTransfer[], p: WalletPayment): { paid: true } | { paid: false; reason: "reverted" | "transfer_missing" } {
  if (status !== "success") return { paid: false, reason: "reverted" };
  const found = logs.some((l) => l.token === p.token.toLowerCase() && l.from === p.from.toLowerCase() && l.to === p.to.toLowerCase() && l.value === p.value);
  return found ? { paid: true } : { paid: false, reason: "transfer_missing" };
}
