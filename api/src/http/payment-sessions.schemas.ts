/**
 * Payment session schemas: the create body, the merchant's view (with networks and history),
 * lists, and the payer's view the browser routes answer (public-sessions.ts).
 */
import { t } from "elysia";
import { TRANSITION_REASONS } from "../../../shared/status.ts";
import { ENVIRONMENTS } from "../../../shared/environment.ts";
import { METADATA_LIMITS } from "../sessions/create/input.ts";
import { ReasonAndDetailSchema, type ReasonAndDetail as ReasonAndDetailType } from "../sessions/event-detail.ts";
import { literals, JsonInteger, Status } from "./schemas.ts";

export const CreateSessionBody = t.Object(
  {
    amount: t.String({
      description: 'Decimal amount with exactly two places, greater than zero. Bounds: SERVICE_MIN_AMOUNT..SERVICE_MAX_AMOUNT (default "0.50".."1000000.00").',
      examples: ["12.34"],
      maxLength: 32,
    }),
    currency: t.String({ description: "Currency code. Supported: USD.", examples: ["USD"], maxLength: 16 }),
    metadata: t.Optional(
      t.Record(t.String(), t.String({ maxLength: METADATA_LIMITS.valueLength }), {
        description: `Your own key/value strings, returned to you and in webhooks; never shown to the payer. At most ${METADATA_LIMITS.keys} keys of ${METADATA_LIMITS.keyLength} characters, values of ${METADATA_LIMITS.valueLength}.`,
        examples: [{ orderId: "1042" }],
      }),
    ),
    referenceId: t.Optional(t.String({ minLength: 1, maxLength: 128, description: "Your reference (e.g. an order id).", examples: ["order_1042"] })),
    expiresInSeconds: t.Optional(
      JsonInteger({ minimum: 60, maximum: 86400, description: "Seconds until the session expires unpaid. Default 1800 (30 min).", examples: [1800] }),
    ),
  },
  { additionalProperties: false },
);

/** One stablecoin a session accepts on a network, with the amount in its own base units. */
export const NetworkToken = t.Object(
  {
    tokenAddress: t.String({ examples: ["0xdAC17F958D2ee523a2206206994597C13D831ec7"] }),
    tokenSymbol: t.String({ examples: ["USDT"] }),
    decimals: JsonInteger({ examples: [6] }),
    amountBaseUnits: t.String({ description: "The session's amount in this token's base units (every accepted stablecoin at par).", examples: ["12340000"] }),
  },
  { description: "A stablecoin accepted on the network: any of them pays, and payments in several add up." },
);

export const NetworkView = t.Object(
  {
    chainId: JsonInteger({ examples: [8453] }),
    network: t.String({ examples: ["Base"] }),
    tokenAddress: t.String({ description: "The network's main stablecoin (the first of `tokens`).", examples: ["0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"] }),
    tokenSymbol: t.String({ examples: ["USDC"] }),
    decimals: JsonInteger({ description: "The session's unit on this network: the most decimals among its stablecoins (6 for USDC and USDT).", examples: [6] }),
    depositAddress: t.String({ description: "The session's one-time address on this network: pay the amount of the token here.", examples: ["0x5b3a…"] }),
    amountBaseUnits: t.String({ description: "The amount in the token's base units (USDC: 6 decimals).", examples: ["12340000"] }),
    confirmations: JsonInteger({ description: "Blocks after which a payment counts.", examples: [10] }),
    tokens: t.Array(NetworkToken, {
      description:
        "Every stablecoin the session accepts on this network, the main one (`tokenAddress` above) first. Amounts in events are counted in `decimals` above, the most decimals among them.",
    }),
    settlementAddress: t.Optional(
      t.String({ description: "Merchant views only: where this session's funds on this network are swept (fixed at creation).", examples: ["0x70997970C51812dc3A010C7d01b50e0d17dc79C8"] }),
    ),
  },
  { description: "Where and how much to pay on one network." },
);

/**
 * An event's `reason` with its `detail`, one variant per reason (sessions/event-detail.ts): in the
 * document once, as a component (app.ts adds these), referenced from history entries and events.
 */
const REASON_AND_DETAIL = "ReasonAndDetail";
export const eventComponents = { [REASON_AND_DETAIL]: ReasonAndDetailSchema };
export const ReasonAndDetail = t.Unsafe<ReasonAndDetailType>({ $ref: `#/components/schemas/${REASON_AND_DETAIL}` });

export const HistoryEntry = t.Intersect([
  t.Object({
    sequence: JsonInteger(),
    status: Status,
    previousStatus: t.Union([Status, t.Null()]),
    at: t.String({ format: "date-time" }),
  }),
  ReasonAndDetail,
]);

export const sessionFields = {
  paymentSessionId: t.String({ examples: ["ps_V1StGXR8Z5jdHi6BmyT2kq4e"] }),
  status: Status,
  statusReason: literals(TRANSITION_REASONS),
  amount: t.String({ examples: ["12.34"] }),
  currency: t.String({ examples: ["USD"] }),
  environment: literals(ENVIRONMENTS),
  merchantId: t.String({ examples: ["mch_test_4f9KpQ2xYz81LmNoPq7RsTuV"] }),
  referenceId: t.Union([t.String(), t.Null()]),
  metadata: t.Record(t.String(), t.String()),
  paymentLinkId: t.Union([t.String(), t.Null()], { description: "The payment link that started it; else null." }),
  expiresAt: t.String({ format: "date-time" }),
  createdAt: t.String({ format: "date-time" }),
  updatedAt: t.String({ format: "date-time" }),
  networks: t.Array(NetworkView),
};

export const MerchantSession = t.Object({
  ...sessionFields,
  amountRefunded: t.Optional(
    t.String({ description: "What the session's refunds that are not CANCELED or FAILED hold, in its currency (docs/refunds.md). In retrieve, list and cancel answers.", examples: ["0.00"] }),
  ),
  history: t.Optional(t.Array(HistoryEntry)),
});

export const CreatedSession = t.Object({
  ...sessionFields,
  paymentSessionToken: t.String({
    description: "Short-lived token for this one session: pass it to sdk.open. Valid until expiresAt + 1 h (SERVICE_SESSION_TOKEN_GRACE_SECONDS).",
    examples: ["pst_test_9aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789abcd"],
  }),
  tokenExpiresAt: t.String({ format: "date-time" }),
});

export const SessionList = t.Object({
  data: t.Array(MerchantSession),
  hasMore: t.Boolean(),
  nextCursor: t.Union([t.String(), t.Null()], { description: "Pass as startingAfter to get the next page." }),
});

export const PublicSession = t.Object({
  paymentSessionId: t.String(),
  status: Status,
  amount: t.String({ examples: ["12.34"] }),
  currency: t.String({ examples: ["USD"] }),
  environment: literals(ENVIRONMENTS),
  merchantName: t.String(),
  expiresAt: t.String({ format: "date-time" }),
  createdAt: t.String({ format: "date-time" }),
  networks: t.Array(NetworkView),
});

export const ListQuery = t.Object({
  limit: t.Optional(t.String({ pattern: "^[0-9]{1,3}$", description: "1 to 100, default 20." })),
  startingAfter: t.Optional(t.String({ description: "A paymentSessionId: the page after it." })),
  status: t.Optional(Status),
  paymentLinkId: t.Optional(t.String({ description: "Only the sessions this payment link started." })),
});

export const PublicQuery = t.Object({
  paymentSessionId: t.Optional(t.String({ description: "Optional: when given, must be the token's own session." })),
});
