/**
 * EIP-3009 as USDC (FiatToken v2.2) and our TestUSD expose it: the EIP-712 types a holder signs
 * and the ABI fragments a client calls. Pure data, no I/O; the one definition for the gasless
 * payment code (api/src/gasless/) and the contract tests.
 */
import { keccak256, parseAbi, stringToHex, type Hex } from "viem";

/** Versioned, so that a later scheme can never produce an earlier one's nonce. */
export const AUTHORIZATION_NONCE_PREFIX = "paysession:eip3009:v1:";

/**
 * A payment session's EIP-3009 nonce: keccak256(utf8("paysession:eip3009:v1:" + sessionId)), 32
 * bytes. Anyone can compute it from the session id (so an AuthorizationUsed event names its
 * session), and an authorization signed for one session carries a nonce no other session accepts.
 * Here, below everything, because the create statement, the migration that filled it in for
 * older sessions (api/src/db/backfills.ts) and the gasless code must all derive the same one.
 */
export function authorizationNonce(sessionId: string): Hex {
  if (!sessionId) throw new Error("authorizationNonce: empty session id");
  return keccak256(stringToHex(AUTHORIZATION_NONCE_PREFIX + sessionId));
}

const AUTHORIZATION_FIELDS = [
  { name: "from", type: "address" },
  { name: "to", type: "address" },
  { name: "value", type: "uint256" },
  { name: "validAfter", type: "uint256" },
  { name: "validBefore", type: "uint256" },
  { name: "nonce", type: "bytes32" },
] as const;

/** `types` for viem's signTypedData / verifyTypedData (the domain type is implied). */
export const TRANSFER_WITH_AUTHORIZATION_TYPES = { TransferWithAuthorization: AUTHORIZATION_FIELDS } as const;
export const RECEIVE_WITH_AUTHORIZATION_TYPES = { ReceiveWithAuthorization: AUTHORIZATION_FIELDS } as const;
export const CANCEL_AUTHORIZATION_TYPES = {
  CancelAuthorization: [
    { name: "authorizer", type: "address" },
    { name: "nonce", type: "bytes32" },
  ],
} as const;

/**
 * What we call on a token that may support EIP-3009 (USDC's own ABI has more; these are the
 * functions both it and TestUSD have, with the same signatures).
 */
export const eip3009Abi = parseAbi([
  "function name() view returns (string)",
  "function version() view returns (string)",
  "function DOMAIN_SEPARATOR() view returns (bytes32)",
  "function balanceOf(address account) view returns (uint256)",
  "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)",
  "function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)",
  "function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)",
  "event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)",
  "event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)",
]);
