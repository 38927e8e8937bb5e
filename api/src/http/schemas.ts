/**
 * Request and response schemas (TypeBox, via Elysia's `t`). Request schemas are what
 * validate.ts checks bodies against; all of them feed the OpenAPI document, so the docs
 * and the checks cannot drift apart.
 */
import { t, type DocumentDecoration, type TSchema } from "elysia";
import { IndexerLag } from "./indexer-lag.ts";
import { EVENT_REASONS, SESSION_STATUSES, TRANSITION_REASONS } from "../../../shared/status.ts";
import { ENVIRONMENTS } from "../../../shared/environment.ts";
import { ERROR_CATALOGUE, ERROR_TYPES, type ErrorCode } from "../errors.ts";
import { METADATA_LIMITS } from "../sessions/create-input.ts";

const literals = <T extends readonly string[]>(values: T) => t.Union(values.map((v) => t.Literal(v)));
/** A JSON integer. (Elysia's t.Integer also takes "600" as a string, for query strings; bodies are strict.) */
const JsonInteger = (opts: { minimum?: number; maximum?: number; description?: string; examples?: number[] } = {}) =>
  t.Unsafe<number>({ type: "integer", ...opts });

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

export const EmptyBody = t.Object({}, { additionalProperties: false, description: "No parameters; an empty body is fine." });

const Status = literals(SESSION_STATUSES);

const NetworkView = t.Object(
  {
    chainId: JsonInteger({ examples: [8453] }),
    network: t.String({ examples: ["Base"] }),
    tokenAddress: t.String({ examples: ["0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"] }),
    tokenSymbol: t.String({ examples: ["USDC"] }),
    decimals: JsonInteger({ examples: [6] }),
    depositAddress: t.String({ description: "The session's one-time address on this network: pay the amount of the token here.", examples: ["0x5b3a…"] }),
    amountBaseUnits: t.String({ description: "The amount in the token's base units (USDC: 6 decimals).", examples: ["12340000"] }),
    confirmations: JsonInteger({ description: "Blocks after which a payment counts.", examples: [10] }),
    settlementAddress: t.Optional(
      t.String({ description: "Merchant views only: where this session's funds on this network are swept (fixed at creation).", examples: ["0x70997970C51812dc3A010C7d01b50e0d17dc79C8"] }),
    ),
  },
  { description: "Where and how much to pay on one network." },
);

export const FaucetBody = t.Object(
  {
    address: t.String({ maxLength: 64, description: "Who gets the TestUSD.", examples: ["0x70997970C51812dc3A010C7d01b50e0d17dc79C8"] }),
    amount: t.Optional(t.String({ maxLength: 32, description: 'Default "100.00".', examples: ["100.00"] })),
    chainId: t.Optional(JsonInteger({ description: "A sandbox network with a faucet; default the local test network.", examples: [31337] })),
  },
  { additionalProperties: false },
);
export const SandboxPayBody = t.Object(
  {
    amount: t.Optional(t.String({ maxLength: 32, description: "Default: the session amount. More or less to over- or under-pay.", examples: ["12.34"] })),
    chainId: t.Optional(JsonInteger({ description: "One of the session's networks with a faucet; default the first.", examples: [31337] })),
  },
  { additionalProperties: false },
);
export const SandboxTransfer = t.Object({
  chainId: JsonInteger({ examples: [31337] }),
  txHash: t.String({ examples: ["0x9f…"] }),
  amountBaseUnits: t.String({ examples: ["12340000"] }),
});
export const FailNextSweepResult = t.Object({ paymentSessionId: t.String(), failNextSweep: t.Boolean() });

export const SettlementAddressBody = t.Object(
  { address: t.String({ maxLength: 64, description: "0x-prefixed 20-byte address, any case.", examples: ["0x70997970C51812dc3A010C7d01b50e0d17dc79C8"] }) },
  { additionalProperties: false },
);
export const SettlementAddress = t.Object({
  chainId: JsonInteger({ examples: [8453] }),
  network: t.String({ examples: ["Base"] }),
  address: t.Union([t.String(), t.Null()], {
    description: "Where new sessions' funds settle on this network (EIP-55); null on a production network without one.",
    examples: ["0x70997970C51812dc3A010C7d01b50e0d17dc79C8"],
  }),
  isDefault: t.Boolean({ description: "Sandbox: no address of yours is set here; funds settle to the server's default sandbox address." }),
  updatedAt: t.Union([t.String({ format: "date-time" }), t.Null()]),
});
export const SettlementAddressList = t.Object({ data: t.Array(SettlementAddress) });

const HistoryEntry = t.Object({
  sequence: JsonInteger(),
  status: Status,
  previousStatus: t.Union([Status, t.Null()]),
  reason: literals(EVENT_REASONS),
  detail: t.Record(t.String(), t.Unknown()),
  at: t.String({ format: "date-time" }),
});

const sessionFields = {
  paymentSessionId: t.String({ examples: ["ps_V1StGXR8Z5jdHi6BmyT2kq4e"] }),
  status: Status,
  statusReason: literals(TRANSITION_REASONS),
  amount: t.String({ examples: ["12.34"] }),
  currency: t.String({ examples: ["USD"] }),
  environment: literals(ENVIRONMENTS),
  merchantId: t.String({ examples: ["mch_test_4f9KpQ2xYz81LmNoPq7RsTuV"] }),
  referenceId: t.Union([t.String(), t.Null()]),
  metadata: t.Record(t.String(), t.String()),
  expiresAt: t.String({ format: "date-time" }),
  createdAt: t.String({ format: "date-time" }),
  updatedAt: t.String({ format: "date-time" }),
  networks: t.Array(NetworkView),
};

export const MerchantSession = t.Object({ ...sessionFields, history: t.Optional(t.Array(HistoryEntry)) });

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
});

export const PublicQuery = t.Object({
  paymentSessionId: t.Optional(t.String({ description: "Optional: when given, must be the token's own session." })),
});

export const ErrorResponse = t.Object(
  {
    error: t.Object({
      type: literals(ERROR_TYPES),
      code: literals(Object.keys(ERROR_CATALOGUE) as ErrorCode[]),
      message: t.String(),
      param: t.Optional(t.String()),
      requestId: t.String(),
    }),
  },
  { description: "Every error has this shape; `code` is from the catalogue in the README." },
);

export const Health = t.Object({ status: t.String() });
const NullableString = t.Union([t.String(), t.Null()]);
const NullableBool = t.Union([t.Boolean(), t.Null()]);
export const Readiness = t.Object({
  status: t.String({ description: '"ready": the database is migrated and every enabled network is ready; "degraded": some network is not ready (its sessions are not offered), see `networks`' }),
  networks: t.Array(
    t.Object({
      key: t.String(),
      chainId: t.Integer(),
      name: t.String(),
      environment: t.String(),
      ready: t.Boolean({ description: "sessions are offered on it: right chain and stablecoin, deposit factory deployed" }),
      checkedAt: t.String(),
      rpcReachable: t.Boolean(),
      chainIdSeen: t.Union([t.Integer(), t.Null()]),
      headBlock: NullableString,
      factory: t.Object({ address: t.String(), present: NullableBool }),
      stablecoin: t.Object({ symbol: t.String(), address: t.String(), present: NullableBool, decimals: t.Union([t.Integer(), t.Null()]) }),
      relayer: t.Object({ address: NullableString, balance: NullableString, minBalance: t.String(), low: NullableBool }),
      problems: t.Array(t.String()),
      warnings: t.Array(t.String()),
      indexer: IndexerLag,
    }),
  ),
});

/** An OpenAPI `detail` for a route: summary, auth, body, and each response with the codes it may carry. */
export function doc(args: {
  tag: string;
  summary: string;
  description?: string;
  auth?: "apiKey" | "sessionToken";
  body?: TSchema;
  ok: { status: number; schema: TSchema; description: string };
  errors: ErrorCode[];
}): DocumentDecoration {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of args.errors) {
    const status = ERROR_CATALOGUE[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, unknown> = {
    [args.ok.status]: { description: args.ok.description, content: { "application/json": { schema: args.ok.schema } } },
  };
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[status] = {
      description: `Error: ${codes.join(", ")}`,
      content: {
        "application/json": {
          schema: ErrorResponse,
          example: { error: { type: ERROR_CATALOGUE[codes[0]!].type, code: codes[0], message: ERROR_CATALOGUE[codes[0]!].message, requestId: "req_4f9KpQ2xYz81LmNoPq7RsTuV" } },
        },
      },
    };
  }
  return {
    tags: [args.tag],
    summary: args.summary,
    ...(args.description ? { description: args.description } : {}),
    ...(args.auth ? { security: [{ [args.auth]: [] }] } : { security: [] }),
    ...(args.body
      ? { requestBody: { required: false, content: { "application/json": { schema: args.body } } } }
      : {}),
    responses,
  } as DocumentDecoration;
}

export const AUTH_ERRORS: ErrorCode[] = [
  "credentials_missing",
  "credentials_malformed",
  "api_key_required",
  "api_key_invalid",
  "api_key_revoked",
  "environment_mismatch",
  "rate_limited",
];
export const TOKEN_ERRORS: ErrorCode[] = [
  "credentials_missing",
  "credentials_malformed",
  "session_token_required",
  "session_token_invalid",
  "session_token_expired",
  "environment_mismatch",
  "rate_limited",
];
export const BODY_ERRORS: ErrorCode[] = [
  "body_malformed",
  "body_not_object",
  "body_too_large",
  "content_type_unsupported",
  "parameter_missing",
  "parameter_invalid",
  "parameter_unknown",
];

// ---------------------------------------------------------------- webhooks

export const CreateWebhookEndpointBody = t.Object(
  {
    url: t.String({
      maxLength: 2048,
      description: "Where events are POSTed. Production: https:// to a public address. Sandbox: http:// and localhost allowed too.",
      examples: ["https://example.com/webhooks/paysession"],
    }),
    description: t.Optional(t.String({ maxLength: 256, description: "Your note about this endpoint.", examples: ["Orders service"] })),
    enabled: t.Optional(t.Boolean({ description: "Default true." })),
  },
  { additionalProperties: false },
);

export const UpdateWebhookEndpointBody = t.Object(
  {
    url: t.Optional(t.String({ maxLength: 2048, description: "A new URL; checked like on creation." })),
    description: t.Optional(t.String({ maxLength: 256, description: "A new description; an empty string clears it." })),
    enabled: t.Optional(
      t.Boolean({ description: "false stops deliveries (queued ones are canceled); true resumes with the next event and clears disabledReason." }),
    ),
  },
  { additionalProperties: false },
);

export const RotateSecretBody = t.Object(
  {
    overlapSeconds: t.Optional(
      JsonInteger({
        minimum: 0,
        maximum: 604800,
        description: "How long the old secret stays valid (deliveries carry both signatures meanwhile). Default 86400 (24 h); 0 drops it at once.",
        examples: [86400],
      }),
    ),
  },
  { additionalProperties: false },
);

export const RedeliverBody = t.Object(
  {
    webhookEndpointId: t.Optional(t.String({ maxLength: 64, description: "Only to this endpoint. Default: every enabled endpoint of this environment." })),
  },
  { additionalProperties: false },
);

const endpointFields = {
  id: t.String({ examples: ["whe_V1StGXR8Z5jdHi6BmyT2kq4e"] }),
  url: t.String({ examples: ["https://example.com/webhooks/paysession"] }),
  description: t.Union([t.String(), t.Null()]),
  enabled: t.Boolean(),
  disabledReason: t.Union([t.Literal("gone"), t.Null()], { description: '"gone": disabled because it answered 410 Gone.' }),
  environment: literals(ENVIRONMENTS),
  previousSecretExpiresAt: t.Union([t.String({ format: "date-time" }), t.Null()], {
    description: "While a rotated-out secret is still valid: until when. Deliveries carry a signature with each.",
  }),
  createdAt: t.String({ format: "date-time" }),
  updatedAt: t.String({ format: "date-time" }),
  networks: t.Array(NetworkView),
};

export const WebhookEndpoint = t.Object(endpointFields);
export const CreatedWebhookEndpoint = t.Object({
  ...endpointFields,
  secret: t.String({ description: "The signing secret (Standard Webhooks). Also at GET /webhook-endpoints/{id}/secret.", examples: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"] }),
});
export const WebhookEndpointList = t.Object({ data: t.Array(WebhookEndpoint) });
export const DeletedWebhookEndpoint = t.Object({ id: t.String(), deleted: t.Literal(true) });
export const WebhookSecret = t.Object({
  secret: t.String({ examples: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"] }),
  previousSecretExpiresAt: t.Union([t.String({ format: "date-time" }), t.Null()]),
});

const EventType = t.Union(
  ["payment_session.pending", "payment_session.funded", "payment_session.succeeded", "payment_session.canceled", "payment_session.error"].map((v) => t.Literal(v)),
);

export const SessionEvent = t.Object({
  id: t.String({ examples: ["evt_4f9KpQ2xYz81LmNoPq7RsTuV"] }),
  type: EventType,
  createdAt: t.String({ format: "date-time" }),
  data: t.Object({
    ...sessionFields,
    previousStatus: t.Union([Status, t.Null()]),
    reason: literals(EVENT_REASONS),
    sequence: JsonInteger({ description: "Per session, 1 on creation, +1 per status change or money event (funds_received, funds_settled)." }),
    detail: t.Record(t.String(), t.Unknown()),
  }),
});

const Delivery = t.Object({
  webhookEndpointId: t.String(),
  state: literals(["waiting", "pending", "sending", "succeeded", "failed", "canceled"] as const),
  ordered: t.Boolean({ description: "false for redeliveries you asked for (outside the per-session order)." }),
  attempts: JsonInteger(),
  nextAttemptAt: t.Union([t.String({ format: "date-time" }), t.Null()]),
  lastAttemptAt: t.Union([t.String({ format: "date-time" }), t.Null()]),
  lastStatusCode: t.Union([JsonInteger(), t.Null()]),
  lastError: t.Union([t.String(), t.Null()]),
});

export const SessionEventWithDeliveries = t.Object({ ...SessionEvent.properties, deliveries: t.Array(Delivery) });

export const EventList = t.Object({
  data: t.Array(SessionEvent),
  hasMore: t.Boolean(),
  nextCursor: t.Union([t.String(), t.Null()], { description: "Pass as startingAfter to get the next page." }),
});

export const EventListQuery = t.Object({
  limit: t.Optional(t.String({ pattern: "^[0-9]{1,3}$", description: "1 to 100, default 20." })),
  startingAfter: t.Optional(t.String({ description: "An event id: the page after it." })),
  paymentSessionId: t.Optional(t.String({ description: "Only this session's events." })),
  type: t.Optional(EventType),
});

export const PageQuery = t.Object({
  limit: t.Optional(t.String({ pattern: "^[0-9]{1,3}$", description: "1 to 100, default 20." })),
  startingAfter: t.Optional(t.String({ description: "An id from the previous page: the page after it." })),
});

export const WebhookAttempt = t.Object({
  id: t.String({ examples: ["wha_4f9KpQ2xYz81LmNoPq7RsTuV"] }),
  eventId: t.String(),
  webhookEndpointId: t.String(),
  kind: literals(["event", "redelivery", "test"] as const),
  attemptNumber: JsonInteger(),
  url: t.String(),
  succeeded: t.Boolean(),
  statusCode: t.Union([JsonInteger(), t.Null()], { description: "null when no HTTP answer came (timeout, refused, connection error)." }),
  latencyMs: JsonInteger(),
  responseBody: t.Union([t.String(), t.Null()], { description: "The first 1 KB of the answer." }),
  error: t.Union([t.String(), t.Null()]),
  createdAt: t.String({ format: "date-time" }),
});

export const AttemptList = t.Object({
  data: t.Array(WebhookAttempt),
  hasMore: t.Boolean(),
  nextCursor: t.Union([t.String(), t.Null()]),
});

export const RedeliverResult = t.Object({
  eventId: t.String(),
  deliveries: t.Array(Delivery),
});

export const TestEventResult = t.Object({
  event: t.Object({
    id: t.String(),
    type: t.Literal("webhook.test"),
    createdAt: t.String({ format: "date-time" }),
    data: t.Object({ webhookEndpointId: t.String(), environment: literals(ENVIRONMENTS), message: t.String() }),
  }),
  attempt: WebhookAttempt,
});
