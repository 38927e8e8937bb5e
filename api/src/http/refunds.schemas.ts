/**
 * Refund schemas (refunds.ts; docs/refunds.md): the create body, the refund as the merchant sees
 * it, its list.
 */
import { t, type Static } from "elysia";
import { ENVIRONMENTS } from "../../../shared/environment.ts";
import { METADATA_LIMITS } from "../sessions/create/input.ts";
import { FAILURE_REASONS, REFUND_FUNDINGS, REFUND_REASONS, REFUND_STATES, WAITING_REASONS } from "../refunds/logic.ts";
import { LINK_LIFETIME } from "../refunds/links.ts";
import { JsonInteger, literals } from "./schemas.ts";

export const CreateRefundBody = t.Object(
  {
    amount: t.Optional(
      t.String({
        description: 'Decimal amount with exactly two places, greater than zero, at most what is left to refund (SERVICE_REFUND_MAX_PER_REFUND at most). Absent: everything left to refund.',
        examples: ["12.34"],
        maxLength: 32,
      }),
    ),
    reason: literals(REFUND_REASONS),
    chainId: t.Optional(JsonInteger({ description: "The network to refund on: needed only when money is left to refund on more than one.", examples: [8453] })),
    token: t.Optional(
      t.String({
        maxLength: 64,
        description: "The stablecoin to refund in (one the session received on that network). Absent: every token received there, in the proportions left to refund.",
        examples: ["0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"],
      }),
    ),
    metadata: t.Optional(
      t.Record(t.String(), t.String({ maxLength: METADATA_LIMITS.valueLength }), {
        description: `Your own key/value strings, as on sessions: at most ${METADATA_LIMITS.keys} keys of ${METADATA_LIMITS.keyLength} characters, values of ${METADATA_LIMITS.valueLength}.`,
        examples: [{ returnId: "r-77" }],
      }),
    ),
    destination: t.Optional(
      t.Literal("link", {
        description:
          "`link`: the payer chooses where the refund goes. It waits (`awaiting_claim`) until the payer opens `claimUrl` and claims it with an address. Absent: to the address that paid.",
      }),
    ),
    requireApproval: t.Optional(
      t.Boolean({ description: "With `destination: link`: after the claim the refund waits (`awaiting_approval`) until you approve it (POST /refunds/{id}/approve). Default false." }),
    ),
    linkExpiresInSeconds: t.Optional(
      JsonInteger({
        minimum: LINK_LIFETIME.minSeconds,
        maximum: LINK_LIFETIME.maxSeconds,
        description: `With \`destination: link\`: seconds the link may be claimed. Default ${LINK_LIFETIME.defaultSeconds} (7 days).`,
        examples: [LINK_LIFETIME.defaultSeconds],
      }),
    ),
  },
  { additionalProperties: false },
);

export const RefundPart = t.Object(
  {
    tokenAddress: t.String({ examples: ["0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"] }),
    tokenSymbol: t.String({ examples: ["USDC"] }),
    decimals: JsonInteger({ examples: [6] }),
    amount: t.String({ description: "This token's share, in the session's currency.", examples: ["12.34"] }),
    amountBaseUnits: t.String({ description: "The same in the token's base units: exactly what the payer receives.", examples: ["12340000"] }),
    destination: t.Union([t.String(), t.Null()], {
      description:
        "Who receives it: the address that paid this token, or the one the payer claimed a refund link with. Null while unknown (several payers, or no index yet: `waitingReason: destination_unknown`) or not claimed yet (`awaiting_claim`).",
      examples: ["0x70997970C51812dc3A010C7d01b50e0d17dc79C8"],
    }),
  },
  { description: "One token's share of a refund; all parts go out in one transaction." },
);

/** The refund as the merchant sees it: in the document once, as a component (app.ts adds it), referenced by every route that answers one. */
const RefundObject = t.Object({
  refundId: t.String({ examples: ["rf_V1StGXR8Z5jdHi6BmyT2kq4e"] }),
  paymentSessionId: t.String({ examples: ["ps_V1StGXR8Z5jdHi6BmyT2kq4e"] }),
  status: literals(REFUND_STATES),
  amount: t.String({ description: "The sum of the parts in the session's currency: two places at least, more when the money received had more.", examples: ["12.34"] }),
  currency: t.String({ examples: ["USD"] }),
  reason: literals(REFUND_REASONS),
  environment: literals(ENVIRONMENTS),
  chainId: JsonInteger({ examples: [8453] }),
  network: t.String({ examples: ["Base"] }),
  parts: t.Array(RefundPart),
  waitingReason: t.Union([literals(WAITING_REASONS), t.Null()], { description: "Why a PENDING refund has not gone out yet; null otherwise." }),
  failureReason: t.Union([literals(FAILURE_REASONS), t.Null()], { description: "Why a FAILED refund failed; its amount is refundable again." }),
  funding: t.Union(literals(REFUND_FUNDINGS).anyOf, {
    description: "Where its money comes from: `balance`, the merchant's refund balance (the relayer pays); `merchant_wallet`, the merchant's own wallet on the settlement address (chosen in the dashboard; docs/refunds.md, \"From the merchant's own wallet\").",
  }),
  transactionHash: t.Union([t.String(), t.Null()], { description: "The relayer transaction that carries it, once SENT." }),
  metadata: t.Record(t.String(), t.String()),
  createdAt: t.String({ format: "date-time" }),
  updatedAt: t.String({ format: "date-time" }),
  sentAt: t.Union([t.String({ format: "date-time" }), t.Null()]),
  finishedAt: t.Union([t.String({ format: "date-time" }), t.Null()]),
  claimUrl: t.Union([t.String(), t.Null()], {
    description: "A refund to a link: the page to give the payer, where they claim it with an address. Anyone holding it can claim it: send it only to the payer. Null otherwise.",
    examples: ["https://pay.example.com/refund/rl_3kTMd9PQx2v8YbN1cR7aLw0ZsJfE5gHu4iOyV6tK"],
  }),
  claimExpiresAt: t.Union([t.String({ format: "date-time" }), t.Null()], { description: "Until when the link can be claimed; null without a link." }),
  claimedAt: t.Union([t.String({ format: "date-time" }), t.Null()], { description: "When the payer claimed the link (the parts' destination is then theirs); null before, or without a link." }),
  approvedAt: t.Union([t.String({ format: "date-time" }), t.Null()], { description: "When you approved the claim (POST /refunds/{id}/approve); null before, or without approval." }),
  requireApproval: t.Boolean({ description: "Whether a claim waits for your approval (awaiting_approval) before it is sent." }),
});

const REFUND = "Refund";
export const refundComponents = { [REFUND]: RefundObject };
export const Refund = t.Unsafe<Static<typeof RefundObject>>({ $ref: `#/components/schemas/${REFUND}` });

export const RefundList = t.Object({
  data: t.Array(Refund),
  hasMore: t.Boolean(),
  nextCursor: t.Union([t.String(), t.Null()], { description: "Pass as startingAfter to get the next page." }),
});

export const RefundBalance = t.Object({
  chainId: JsonInteger({ examples: [8453] }),
  network: t.String({ examples: ["Base"] }),
  address: t.Union([t.String(), t.Null()], {
    description: "Your refund balance on this network: send any of its stablecoins here to fund refunds (it may not be deployed yet; only the service's relayer can spend from it, only for your refunds). Null where no relayer signs.",
    examples: ["0x5b3a…"],
  }),
  tokens: t.Array(
    t.Object({
      tokenAddress: t.String({ examples: ["0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"] }),
      tokenSymbol: t.String({ examples: ["USDC"] }),
      decimals: JsonInteger({ examples: [6] }),
      balanceBaseUnits: t.Union([t.String(), t.Null()], { description: "What the balance holds, read from the chain now; null when the network did not answer.", examples: ["25000000"] }),
      balance: t.Union([t.String(), t.Null()], { examples: ["25.00"] }),
    }),
  ),
});

export const RefundBalanceList = t.Object({ data: t.Array(RefundBalance) });
