/**
 * Paying a session by a signed EIP-3009 authorization, the pure part: what the payer signs for
 * a session on a network, and the check of a submitted authorization against it. No I/O: the
 * token's domain and the chain's answers come from ./chain.ts.
 *
 * The payer signs TransferWithAuthorization(from = the payer, to = the session's settlement
 * address on that network, value = the session's amount in the token's base units,
 * validAfter = 0, validBefore = the session's expiry in unix seconds, nonce = authorizationNonce
 * of the session id). `to` is the settlement address, not the deposit address: the money lands
 * where the merchant wants it in one transfer, with no deposit and no sweep. The nonce ties the
 * authorization to this one session (docs/decisions.md, "Pay by authorization").
 */
import { getAddress, isAddressEqual, recoverTypedDataAddress, type Address, type Hex } from "viem";
import { AUTHORIZATION_NONCE_PREFIX, authorizationNonce, TRANSFER_WITH_AUTHORIZATION_TYPES } from "../../../shared/contracts/eip3009.ts";

/** A token's EIP-712 domain, as read from the token (chain.ts), never assumed. */
export interface TokenDomain {
  name: string;
  version: string;
  chainId: number;
  verifyingContract: Address;
}

/** What a session asks the payer to sign on one network, `from` aside. */
export interface AuthorizationTerms {
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
}

/** An authorization as the payer submits it (POST /api/payment-sessions/authorizations). */
export interface SubmittedAuthorization {
  chainId: number;
  from: Address;
  /** Optional in the request: when given, it must be the terms' `to`. */
  to?: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
  signature: Hex;
}

/**
 * The session's EIP-3009 nonce (keccak256 of "paysession:eip3009:v1:" + its id): defined with the
 * EIP-3009 types in shared/, since the create statement and a migration derive it too.
 */
export { AUTHORIZATION_NONCE_PREFIX, authorizationNonce };

/** The terms of a session on one network (its deposit row holds the settlement address and amount). */
export function authorizationTerms(
  session: { id: string; expiresAt: Date },
  deposit: { settlementAddress: string; requiredBaseUnits: bigint | string },
): AuthorizationTerms {
  return {
    to: getAddress(deposit.settlementAddress),
    value: BigInt(deposit.requiredBaseUnits),
    validAfter: 0n,
    validBefore: BigInt(Math.floor(session.expiresAt.getTime() / 1000)),
    nonce: authorizationNonce(session.id),
  };
}

/** The EIP-712 typed data `from` signs (viem's signTypedData takes exactly this). */
export function typedData(domain: TokenDomain, terms: AuthorizationTerms, from: Address) {
  return {
    domain,
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: "TransferWithAuthorization" as const,
    message: { from, to: terms.to, value: terms.value, validAfter: terms.validAfter, validBefore: terms.validBefore, nonce: terms.nonce },
  };
}

/**
 * What the payer view offers on a network: the typed data without `from` (the wallet's own
 * address), numbers as decimal strings (JSON has no 256-bit integers).
 */
export function offerOf(domain: TokenDomain, terms: AuthorizationTerms) {
  return {
    primaryType: "TransferWithAuthorization" as const,
    domain,
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    message: {
      to: terms.to,
      value: terms.value.toString(),
      validAfter: terms.validAfter.toString(),
      validBefore: terms.validBefore.toString(),
      nonce: terms.nonce,
    },
  };
}

export type GaslessOffer = ReturnType<typeof offerOf>;

/**
 * Seconds an authorization must still have before its session expires to be recorded: the
 * relayer needs a few blocks to carry it out (and the chain's clock runs a little apart from ours).
 */
export const MIN_SECONDS_LEFT = 30n;

export type TermsMismatch = "recipient" | "value" | "window" | "nonce";

/**
 * The first field of the submission that is not what the session asked for, or null. The
 * order is fixed (recipient, value, window, nonce), so the same submission always gets the
 * same answer; a nonce of another session is a nonce mismatch.
 */
export function termsMismatch(sub: SubmittedAuthorization, terms: AuthorizationTerms): TermsMismatch | null {
  if (sub.to !== undefined && !isAddressEqual(sub.to, terms.to)) return "recipient";
  if (sub.value !== terms.value) return "value";
  if (sub.validAfter !== terms.validAfter || sub.validBefore !== terms.validBefore) return "window";
  if (sub.nonce.toLowerCase() !== terms.nonce.toLowerCase()) return "nonce";
  return null;
}

/** Whether the authorization can no longer be carried out in time (its validBefore is the session's expiry). */
export function tooLate(terms: AuthorizationTerms, nowSeconds: bigint): boolean {
  return terms.validBefore - nowSeconds < MIN_SECONDS_LEFT;
}

/**
 * Whether the signature is an EOA's over exactly these terms by `from`. False for anything else,
 * a contract wallet's EIP-1271 signature included: that one only the token's own check (the
 * simulation in chain.ts) can accept.
 */
export async function signedByFrom(domain: TokenDomain, terms: AuthorizationTerms, sub: SubmittedAuthorization): Promise<boolean> {
  if (sub.signature.length !== 132) return false;
  try {
    const signer = await recoverTypedDataAddress({ ...typedData(domain, terms, sub.from), signature: sub.signature });
    return isAddressEqual(signer, sub.from);
  } catch {
    return false;
  }
}
