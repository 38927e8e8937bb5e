/**
 * Request and response schemas (TypeBox, via Elysia's `t`). Request schemas are what
 * validate.ts checks bodies against; all of them feed the OpenAPI document, so the docs
 * and the checks cannot drift apart.
 */
import { t, type DocumentDecoration, type TSchema } from "elysia";
import { SESSION_STATUSES, TRANSITION_REASONS } from "../../../shared/status.ts";
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

const HistoryEntry = t.Object({
  sequence: JsonInteger(),
  status: Status,
  previousStatus: t.Union([Status, t.Null()]),
  reason: literals(TRANSITION_REASONS),
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
