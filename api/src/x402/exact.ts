/**
 * An x402 payment (protocol version 2, scheme `exact` on EVM networks, EIP-3009 only), the pure
 * part: the network's CAIP-2 id, the payload's authorization read, and the check of a payment
 * against its requirements and against what this merchant may be paid — in the order the x402
 * reference facilitator checks, each refusal one of its invalid reasons (docs/x402.md). No I/O:
 * the token's domain, the chain's answers and the merchant's settlement address come from
 * ./facilitator.ts.
 *
 * What an x402 client signs is EIP-3009's TransferWithAuthorization, as the session's own
 * gasless offer is (gasless/authorization.ts), except that the client chooses the nonce (32
 * random bytes) and the window (validAfter 0 or ten minutes back, validBefore now + the
 * requirements' maxTimeoutSeconds). So the terms the relayer carries out are the payload's own,
 * checked here against the requirements; the requirements' `payTo` against the merchant's
 * settlement address: a stolen API key cannot send the money anywhere else.
 */
import { getAddress, isAddress, isAddressEqual, type Address, type Hex } from "viem";
import type { AuthorizationTerms, SubmittedAuthorization, TokenDomain } from "../gasless/authorization.ts";

/** The one protocol version served. */
export const X402_VERSION = 2;
export const SCHEME = "exact";

/** The x402 invalid reasons this facilitator answers (the names of @x402/evm's exact scheme, and the core's). */
export const INVALID = {
  version: "invalid_x402_version",
  scheme: "invalid_exact_evm_scheme",
  network: "invalid_exact_evm_network_mismatch",
  payload: "invalid_exact_evm_payload",
  missingDomain: "invalid_exact_evm_missing_eip712_domain",
  nameMismatch: "invalid_exact_evm_token_name_mismatch",
  versionMismatch: "invalid_exact_evm_token_version_mismatch",
  notSupported: "invalid_exact_evm_eip3009_not_supported",
  signature: "invalid_exact_evm_signature",
  recipient: "invalid_exact_evm_recipient_mismatch",
  validBefore: "invalid_exact_evm_payload_authorization_valid_before",
  validAfter: "invalid_exact_evm_payload_authorization_valid_after",
  value: "invalid_exact_evm_authorization_value",
  valueMismatch: "invalid_exact_evm_payload_authorization_value_mismatch",
  nonceUsed: "invalid_exact_evm_nonce_already_used",
  balance: "invalid_exact_evm_insufficient_balance",
  simulation: "invalid_exact_evm_transaction_simulation_failed",
  transactionFailed: "invalid_exact_evm_transaction_failed",
  pending: "settlement_pending",
  unavailable: "unexpected_settle_error",
} as const;

export type InvalidReason = (typeof INVALID)[keyof typeof INVALID];
export interface Invalid {
  reason: InvalidReason;
  message: string;
}

/**
 * Seconds an authorization must still have when it is verified: as the reference facilitator
 * (6 s), plus what the relayer needs to carry it out (a block or two: gasless/submission.ts).
 */
export const MIN_SECONDS_LEFT = 10n;

/** `eip155:<chainId>` → the chain id; null for any other namespace or a malformed id. */
export function chainIdOf(network: string): number | null {
  const m = /^eip155:([1-9][0-9]{0,15})$/.exec(network);
  if (!m) return null;
  const id = Number(m[1]);
  return Number.isSafeInteger(id) ? id : null;
}

export function networkOf(chainId: number): `eip155:${number}` {
  return `eip155:${chainId}`;
}

/** What a payment is checked against, as the body carries it (x402's PaymentRequirements). */
export interface Requirements {
  scheme: string;
  network: string;
  asset: string;
  amount: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra?: Record<string, unknown>;
}

export interface PaymentPayload {
  x402Version: number;
  accepted: Requirements;
  payload: Record<string, unknown>;
  resource?: { url?: string; description?: string; mimeType?: string };
}

/** The exact scheme's EIP-3009 payload: { authorization: {...}, signature }. */
export interface ExactAuthorization {
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
  signature: Hex;
}

const UINT = /^[0-9]{1,78}$/;
const BYTES32 = /^0x[0-9a-fA-F]{64}$/;
const SIG = /^0x([0-9a-fA-F]{2}){65,2048}$/;

/** The payload's authorization, or why it is not one (the reference's field names; numbers as decimal strings). */
export function readAuthorization(payload: Record<string, unknown>): ExactAuthorization | Invalid {
  const bad = (what: string): Invalid => ({ reason: INVALID.payload, message: `payload.${what} is missing or malformed.` });
  const a = payload.authorization;
  if (typeof a !== "object" || a === null || Array.isArray(a)) return bad("authorization");
  const f = a as Record<string, unknown>;
  for (const k of ["from", "to"] as const) if (typeof f[k] !== "string" || !isAddress(f[k] as string, { strict: false })) return bad(`authorization.${k}`);
  for (const k of ["value", "validAfter", "validBefore"] as const) if (typeof f[k] !== "string" || !UINT.test(f[k] as string)) return bad(`authorization.${k}`);
  if (typeof f.nonce !== "string" || !BYTES32.test(f.nonce)) return bad("authorization.nonce");
  if (typeof payload.signature !== "string" || !SIG.test(payload.signature)) return bad("signature");
  const value = BigInt(f.value as string);
  const [validAfter, validBefore] = [BigInt(f.validAfter as string), BigInt(f.validBefore as string)];
  if (value >= 2n ** 256n || validAfter >= 2n ** 256n || validBefore >= 2n ** 256n) return bad("authorization");
  return {
    from: getAddress(f.from as string),
    to: getAddress(f.to as string),
    value,
    validAfter,
    validBefore,
    nonce: (f.nonce as string).toLowerCase() as Hex,
    signature: (payload.signature as string).toLowerCase() as Hex,
  };
}

/**
 * Checks of the request itself, before anything is read from the chain: versions, scheme,
 * network (`eip155:<chainId>` of a network this environment offers), the authorization readable.
 * `networkOffered`: whether the chain id is one of the key's environment's networks paying by authorization.
 */
export function checkRequest(
  x402Version: number,
  payment: PaymentPayload,
  requirements: Requirements,
  networkOffered: (chainId: number) => boolean,
): { chainId: number; authorization: ExactAuthorization } | Invalid {
  if (x402Version !== X402_VERSION || payment.x402Version !== X402_VERSION) {
    return { reason: INVALID.version, message: `This facilitator speaks x402 version ${X402_VERSION}.` };
  }
  if (payment.accepted.scheme !== SCHEME || requirements.scheme !== SCHEME) {
    return { reason: INVALID.scheme, message: `Only the "${SCHEME}" scheme is served.` };
  }
  if (payment.accepted.network !== requirements.network) {
    return { reason: INVALID.network, message: "The payment was made for another network than the requirements name." };
  }
  const chainId = chainIdOf(requirements.network);
  if (chainId === null || !networkOffered(chainId)) {
    return { reason: INVALID.network, message: `${JSON.stringify(requirements.network.slice(0, 40))} is not a network this account's environment is paid on here (GET /x402/supported lists them).` };
  }
  const authorization = readAuthorization(payment.payload);
  if ("reason" in authorization) return authorization;
  return { chainId, authorization };
}

/** The session amount (US cents, at par) of a token amount; null when it is not a whole number of cents. */
export function centsOf(value: bigint, decimals: number): bigint | null {
  if (decimals < 2) return null;
  const unit = 10n ** BigInt(decimals - 2);
  return value % unit === 0n ? value / unit : null;
}

/** What the checks against the requirements and the merchant need to know. */
export interface PaymentContext {
  /** The token named by `asset`, if it is one of the network's accepted stablecoins. */
  token: { address: Address; decimals: number } | undefined;
  /** The token's EIP-712 domain as read from the token; undefined when it has no EIP-3009. */
  domain: TokenDomain | undefined;
  /** Where this merchant is paid on this network in this environment; undefined: nowhere. */
  settlement: Address | undefined;
  /** The smallest and largest session amount, in cents (SERVICE_MIN/MAX_AMOUNT). */
  minCents: bigint;
  maxCents: bigint;
  nowSeconds: bigint;
}

/**
 * The payment checked against its requirements and the merchant, in the reference's order
 * where it has one (domain, recipient, window, value), the signature last (the one costly check
 * here: the caller runs it once the cheap ones pass, `signedByFrom`). Returns the terms the
 * relayer will carry out and the session amount in cents.
 */
export function checkTerms(
  payment: PaymentPayload,
  requirements: Requirements,
  a: ExactAuthorization,
  ctx: PaymentContext,
): { terms: AuthorizationTerms; submitted: SubmittedAuthorization; cents: bigint } | Invalid {
  if (!isAddress(requirements.asset, { strict: false }) || !isAddress(payment.accepted.asset, { strict: false }) || !isAddressEqual(requirements.asset as Address, payment.accepted.asset as Address)) {
    return { reason: INVALID.notSupported, message: "The payment was made for another asset than the requirements name." };
  }
  if (!ctx.token) return { reason: INVALID.notSupported, message: "The asset is not a stablecoin accepted on this network here." };
  if (!ctx.domain) return { reason: INVALID.notSupported, message: "The asset has no EIP-3009 (transferWithAuthorization) here." };
  const name = requirements.extra?.name;
  const version = requirements.extra?.version;
  if (typeof name !== "string" || typeof version !== "string") {
    return { reason: INVALID.missingDomain, message: "The requirements' extra must carry the token's EIP-712 name and version." };
  }
  if (name !== ctx.domain.name) return { reason: INVALID.nameMismatch, message: `The token's EIP-712 name is ${JSON.stringify(ctx.domain.name)}.` };
  if (version !== ctx.domain.version) return { reason: INVALID.versionMismatch, message: `The token's EIP-712 version is ${JSON.stringify(ctx.domain.version)}.` };
  // payTo must be the merchant's own settlement address, and the authorization must pay exactly there.
  if (!ctx.settlement || !isAddress(requirements.payTo, { strict: false }) || !isAddressEqual(requirements.payTo as Address, ctx.settlement)) {
    return { reason: INVALID.recipient, message: "payTo must be this account's settlement address on this network in this environment (GET /settlement-addresses)." };
  }
  if (!isAddressEqual(a.to, ctx.settlement)) return { reason: INVALID.recipient, message: "The authorization pays another address than payTo." };
  if (a.validBefore < ctx.nowSeconds + MIN_SECONDS_LEFT) {
    return { reason: INVALID.validBefore, message: `The authorization's validBefore has passed, or is less than ${MIN_SECONDS_LEFT} s away.` };
  }
  if (a.validAfter > ctx.nowSeconds) return { reason: INVALID.validAfter, message: "The authorization's validAfter is still to come." };
  if (!UINT.test(requirements.amount) || a.value !== BigInt(requirements.amount) || requirements.amount !== payment.accepted.amount) {
    return { reason: INVALID.valueMismatch, message: "The authorization's value is not the requirements' amount." };
  }
  const cents = centsOf(a.value, ctx.token.decimals);
  if (cents === null || cents < ctx.minCents || cents > ctx.maxCents) {
    return {
      reason: INVALID.value,
      message: `The amount must be a whole number of cents from ${ctx.minCents} to ${ctx.maxCents} cents (${ctx.token.decimals} decimals: a multiple of ${10n ** BigInt(Math.max(0, ctx.token.decimals - 2))} base units).`,
    };
  }
  const terms: AuthorizationTerms = { to: ctx.settlement, value: a.value, validAfter: a.validAfter, validBefore: a.validBefore, nonce: a.nonce };
  const submitted: SubmittedAuthorization = { chainId: ctx.domain.chainId, from: a.from, ...terms, signature: a.signature };
  return { terms, submitted, cents };
}

/** The session's metadata and reference from the requirements and the resource (within the session's limits). */
export function sessionFacts(payment: PaymentPayload, requirements: Requirements, payer: Address, nonce?: Hex): { referenceId: string | undefined; metadata: Record<string, string> } {
  const cut = (s: string, n: number) => (s.length > n ? s.slice(0, n) : s);
  const url = payment.resource?.url;
  const metadata: Record<string, string> = {
    x402_scheme: requirements.scheme,
    x402_network: cut(requirements.network, 500),
    x402_asset: getAddress(requirements.asset),
    x402_pay_to: getAddress(requirements.payTo),
    x402_payer: payer,
  };
  if (nonce) metadata.x402_nonce = nonce;
  if (url) metadata.x402_resource = cut(url, 500);
  if (payment.resource?.description) metadata.x402_description = cut(payment.resource.description, 500);
  if (payment.resource?.mimeType) metadata.x402_mime_type = cut(payment.resource.mimeType, 500);
  return { referenceId: url ? cut(url, 128) : undefined, metadata };
}
