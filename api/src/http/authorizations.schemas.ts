/**
 * Schemas of paying by a signed EIP-3009 authorization (authorizations.ts): what the payer view
 * offers to sign on a network, the body that carries the signed authorization, and its record.
 */
import { t } from "elysia";
import { JsonInteger, literals } from "./schemas.ts";

const Uint = (description: string, examples: string[]) => t.String({ pattern: "^[0-9]{1,78}$", description, examples });
const Bytes32 = (description: string) => t.String({ pattern: "^0x[0-9a-fA-F]{64}$", description });

const TypedField = t.Object({ name: t.String(), type: t.String() });

export const GaslessOffer = t.Object(
  {
    primaryType: t.Literal("TransferWithAuthorization"),
    domain: t.Object(
      {
        name: t.String({ examples: ["Test USD"] }),
        version: t.String({ examples: ["2"] }),
        chainId: JsonInteger({ examples: [31337] }),
        verifyingContract: t.String({ description: "The token." }),
      },
      { description: "The token's EIP-712 domain, as read from the token (name(), version(), the chain's id, its address)." },
    ),
    types: t.Object({ TransferWithAuthorization: t.Array(TypedField) }),
    message: t.Object(
      {
        to: t.String({ description: "The session's settlement address on this network: the money goes there directly." }),
        value: Uint("The session's amount in the token's base units.", ["12340000"]),
        validAfter: Uint("Always 0.", ["0"]),
        validBefore: Uint("The session's expiry, unix seconds.", ["1767225600"]),
        nonce: Bytes32("The session's nonce: keccak256 of the UTF-8 bytes of `paysession:eip3009:v1:` + the session id."),
      },
      { description: "The TransferWithAuthorization to sign, without `from` (the wallet's own address); numbers as decimal strings." },
    ),
  },
  {
    description:
      "What to sign to pay without the chain's gas coin (EIP-3009): with viem, `signTypedData({ domain, types, primaryType, message: { ...message, from } })` (numbers as bigints), then POST /api/payment-sessions/authorizations.",
  },
);

export const AuthorizationBody = t.Object(
  {
    chainId: JsonInteger({ description: "One of the session's networks offering `gasless`.", examples: [31337] }),
    from: t.String({ maxLength: 64, description: "The payer's address: the signer, whose tokens move.", examples: ["0x90F79bf6EB2c4f870365E785982E1f101E93b906"] }),
    to: t.Optional(t.String({ maxLength: 64, description: "As signed; if sent, it must be the offer's `to`." })),
    value: Uint("As signed: the offer's `value`.", ["12340000"]),
    validAfter: Uint("As signed: the offer's `validAfter` (0).", ["0"]),
    validBefore: Uint("As signed: the offer's `validBefore`.", ["1767225600"]),
    nonce: Bytes32("As signed: the offer's `nonce`."),
    signature: t.String({
      pattern: "^0x([0-9a-fA-F]{2})+$",
      maxLength: 4098,
      description: "The EIP-712 signature, 0x hex (65 bytes from a plain wallet; a contract wallet's EIP-1271 signature may be longer).",
    }),
  },
  { additionalProperties: false },
);

export const PaymentAuthorization = t.Object(
  {
    paymentSessionId: t.String(),
    status: literals(["recorded", "sending", "mined", "failed"] as const),
    reason: t.Union(
      [
        literals(
          ["gasless_off", "spend_guard", "fee_above_ceiling", "relayer_unfunded", "used_elsewhere", "expired", "session_closed", "session_budget", "rejected", "reverted"] as const,
        ),
        t.Null(),
      ],
      {
        description:
          "Why a `recorded` one waits (`gasless_off`, `spend_guard`, `fee_above_ceiling`, `relayer_unfunded`) or why a `failed` one failed (`used_elsewhere`: the payer's signature was used on-chain by another transaction; `expired`; `session_closed`: the session left PENDING first; `session_budget`; `rejected`: the token refused it; `reverted`). null otherwise.",
      },
    ),
    detail: t.Union([t.String(), t.Null()], { description: "The reason in words (or why it was queued again), null when there is none." }),
    txHash: t.Union([t.String(), t.Null()], {
      description: "The transaction that carried it out (`mined`: the relayer's, or one someone else submitted with the payer's signature first), or the relayer's by whose receipt it `failed`.",
    }),
    chainId: JsonInteger(),
    tokenAddress: t.String(),
    from: t.String(),
    to: t.String(),
    value: t.String(),
    validAfter: t.String(),
    validBefore: t.String(),
    nonce: t.String(),
    createdAt: t.String({ format: "date-time" }),
    updatedAt: t.String({ format: "date-time" }),
  },
  {
    description:
      "A checked and recorded authorization and how far the relayer got with it: `recorded` (kept for the relayer; nothing is sent on-chain by the request that records it) → `sending` (a relayer transaction carries it) → `mined` (its receipt shows the transfer to the settlement address) or `failed` (final, see `reason`). One that someone else submitted on-chain before it reached the service is recorded `mined` at once, with that transaction, and never sent. The session itself turns FUNDED from what the chain shows, like any payment.",
  },
);
