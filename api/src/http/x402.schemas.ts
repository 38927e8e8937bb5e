/**
 * Schemas of the x402 facilitator (x402.ts, docs/x402.md): the request a resource server's
 * facilitator client sends to /x402/verify and /x402/settle (x402 protocol version 2:
 * `paymentPayload` and `paymentRequirements`), and the three answers, in x402's own shapes —
 * an x402 client library reads them as they are. Objects allow fields they do not name (x402's
 * extensions), since a newer client may send more.
 */
import { t } from "elysia";
import type { Static } from "@sinclair/typebox";
import { JsonInteger, literals } from "./schemas.ts";
import { INVALID } from "../x402/exact.ts";

const RequirementsObject = t.Object(
  {
    scheme: t.String({ maxLength: 64, examples: ["exact"] }),
    network: t.String({ maxLength: 64, description: "CAIP-2: `eip155:<chainId>`.", examples: ["eip155:31337"] }),
    asset: t.String({ maxLength: 64, description: "The token's address (TestUSD in the sandbox, USDC in production)." }),
    amount: t.String({ maxLength: 80, description: "Token base units, a whole number of cents (6 decimals: a multiple of 10000).", examples: ["10000"] }),
    payTo: t.String({ maxLength: 64, description: "The merchant's settlement address on the network (GET /settlement-addresses)." }),
    maxTimeoutSeconds: JsonInteger({ minimum: 0 }),
    extra: t.Optional(t.Record(t.String(), t.Unknown(), { description: "`name` and `version`: the token's EIP-712 domain (TestUSD: `Test USD`, `2`; USDC on Base: `USD Coin`, `2`)." })),
  },
  { description: "x402 PaymentRequirements: what the resource server asks for." },
);
/** Components of the document (app.ts): the requirements appear twice in every request, the reasons in both answers. */
const REQUIREMENTS = "X402PaymentRequirements";
const REASON = "X402Reason";
const Requirements = t.Unsafe<Static<typeof RequirementsObject>>({ $ref: `#/components/schemas/${REQUIREMENTS}` });

const Resource = t.Object({
  url: t.String({ maxLength: 4096 }),
  description: t.Optional(t.String({ maxLength: 4096 })),
  mimeType: t.Optional(t.String({ maxLength: 256 })),
});

const FacilitatorObject = t.Object(
  {
    x402Version: JsonInteger({ examples: [2] }),
    paymentPayload: t.Object(
      {
        x402Version: JsonInteger({ examples: [2] }),
        accepted: Requirements,
        payload: t.Record(t.String(), t.Unknown(), { description: "The exact scheme's EIP-3009 payload: `{ authorization: { from, to, value, validAfter, validBefore, nonce }, signature }`." }),
        resource: t.Optional(Resource),
        extensions: t.Optional(t.Record(t.String(), t.Unknown())),
      },
      { description: "x402 PaymentPayload: what the client sent in its PAYMENT-SIGNATURE header, decoded." },
    ),
    paymentRequirements: Requirements,
  },
  { description: "x402 VerifyRequest / SettleRequest, as @x402/core's HTTPFacilitatorClient sends it." },
);

/** What the route checks a body against: the components written out (a $ref has no check of its own). */
export const FacilitatorBody = t.Object(
  {
    x402Version: FacilitatorObject.properties.x402Version,
    paymentPayload: t.Object({ ...FacilitatorObject.properties.paymentPayload.properties, accepted: RequirementsObject }),
    paymentRequirements: RequirementsObject,
  },
);
const REQUEST = "X402Request";
/** The body as the document shows it (the one component, for verify and settle). */
export const FacilitatorBodyDoc = t.Unsafe<Static<typeof FacilitatorBody>>({ $ref: `#/components/schemas/${REQUEST}` });

const ReasonLiterals = literals(Object.values(INVALID));
const Reason = t.Unsafe<Static<typeof ReasonLiterals>>({ $ref: `#/components/schemas/${REASON}` });

export const VerifyResponse = t.Object(
  {
    isValid: t.Boolean(),
    invalidReason: t.Optional(Reason),
    invalidMessage: t.Optional(t.String()),
    payer: t.Optional(t.String()),
  },
  { description: "x402 VerifyResponse: `isValid`, or false with x402's `invalidReason` and our words in `invalidMessage`." },
);

export const SettleResponse = t.Object(
  {
    success: t.Boolean(),
    errorReason: t.Optional(Reason),
    errorMessage: t.Optional(t.String()),
    payer: t.Optional(t.String()),
    transaction: t.String({ description: "The relayer's transaction hash (empty when nothing was sent)." }),
    network: t.String(),
    amount: t.Optional(t.String()),
    extra: t.Optional(
      t.Object({
        paymentSessionId: t.String({ description: "The payment session made for the payment (GET /payment-sessions/{id})." }),
        transaction: t.Optional(t.String()),
      }),
    ),
  },
  { description: "x402 SettleResponse; `extra.paymentSessionId` names the session it was recorded as." },
);

export const SupportedResponse = t.Object(
  {
    kinds: t.Array(
      t.Object({
        x402Version: JsonInteger({ examples: [2] }),
        scheme: t.Literal("exact"),
        network: t.String({ examples: ["eip155:31337"] }),
        extra: t.Object({
          payTo: t.Optional(t.String({ description: "This account's settlement address there: what `payTo` must be." })),
          assets: t.Array(
            t.Object({ asset: t.String(), symbol: t.String(), decimals: JsonInteger(), name: t.Optional(t.String()), version: t.Optional(t.String()), eip3009: t.Boolean() }),
            { description: "The network's stablecoins; those with `eip3009` can be paid, `name` and `version` going into the requirements' `extra`." },
          ),
        }),
      }),
    ),
    extensions: t.Array(t.String()),
    signers: t.Record(t.String(), t.Array(t.String()), { description: "The relayer address that submits the authorizations, under `eip155:*`." }),
  },
  { description: "x402 SupportedResponse: the networks of the key's environment." },
);

export const x402Components = {
  [REQUIREMENTS]: RequirementsObject,
  [REQUEST]: FacilitatorObject,
  [REASON]: ReasonLiterals,
};
