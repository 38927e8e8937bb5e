/**
 * Schema pieces every route file shares (TypeBox, via Elysia's `t`): the error shape, the
 * credential and body error lists, paging, and doc(), which turns a route's summary, body and
 * error codes into its OpenAPI entry. Each resource's own schemas sit beside its routes
 * (`<routes>.schemas.ts`). Request schemas are what validate.ts checks bodies against; all of
 * them feed the OpenAPI document, so the docs and the checks cannot drift apart.
 */
import { t, type DocumentDecoration, type TSchema } from "elysia";
import { Kind, type TLiteral } from "@sinclair/typebox";
import { SESSION_STATUSES } from "../../../shared/status.ts";
import { ERROR_CATALOGUE, ERROR_TYPES, type ErrorCode } from "../errors.ts";
import type { Scope } from "../credentials/scopes.ts";

/** A union of string literals, typed as that union (Static gives "A" | "B", not string). */
export const literals = <const T extends readonly string[]>(values: T) => t.Union(values.map((v) => t.Literal(v)) as unknown as TLiteral<T[number]>[]);

/**
 * A JSON integer. (Elysia's t.Integer also takes "600" as a string, for query strings; bodies are
 * strict.) Of TypeBox's Integer kind, so the compiled body check (validate.ts) knows it; written
 * `type` first, as the document has always shown it.
 */
export const JsonInteger = (opts: { minimum?: number; maximum?: number; description?: string; examples?: number[] } = {}) =>
  t.Unsafe<number>({ type: "integer", ...opts, [Kind]: "Integer" });

export const EmptyBody = t.Object({}, { additionalProperties: false, description: "No parameters; an empty body is fine." });

export const Status = literals(SESSION_STATUSES);

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
  { description: "Every error has this shape; `code` is from the error catalogue (docs/merchant-guide.md, Errors)." },
);

/**
 * How a route is called: with an API key and the one scope a restricted key needs for it, or
 * with a session token, or with nothing. The scope is declared here and nowhere else: the
 * document shows it (`x-scope`, and a line of the description), and http/auth.ts enforces it
 * from the same `detail` (app.ts reads it off the route table).
 */
type RouteAuth = { auth: "apiKey"; scope: Scope } | { auth?: "sessionToken"; scope?: never };

/** An OpenAPI `detail` for a route: summary, auth (and an API key's scope), body, and each response with the codes it may carry. */
export function doc(
  args: {
    tag: string;
    summary: string;
    description?: string;
    body?: TSchema;
    ok: { status: number; schema: TSchema; description: string };
    errors: ErrorCode[];
  } & RouteAuth,
): DocumentDecoration {
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
          // The one error shape (a component), narrowed to the codes this answer may carry.
          schema: {
            allOf: [
              { $ref: "#/components/schemas/Error" },
              { type: "object", properties: { error: { type: "object", properties: { code: { type: "string", enum: codes } } } } },
            ],
          },
          example: { error: { type: ERROR_CATALOGUE[codes[0]!].type, code: codes[0], message: ERROR_CATALOGUE[codes[0]!].message, requestId: "req_4f9KpQ2xYz81LmNoPq7RsTuV" } },
        },
      },
    };
  }
  const scopeLine = args.scope ? `Scope: \`${args.scope}\` (a restricted key without it is refused with \`403 api_key_scope_missing\`).` : undefined;
  const description = [args.description, scopeLine].filter((x) => x !== undefined).join("\n\n");
  return {
    tags: [args.tag],
    summary: args.summary,
    ...(description ? { description } : {}),
    ...(args.auth ? { security: [{ [args.auth]: [] }] } : { security: [] }),
    ...(args.scope ? { [SCOPE_KEY]: args.scope } : {}),
    ...(args.body
      ? { requestBody: { required: false, content: { "application/json": { schema: args.body } } } }
      : {}),
    responses,
  } as DocumentDecoration;
}

/** The OpenAPI extension that names an API-key operation's scope (read back by app.ts for auth.ts). */
export const SCOPE_KEY = "x-scope";

export const AUTH_ERRORS: ErrorCode[] = [
  "credentials_missing",
  "credentials_malformed",
  "api_key_required",
  "api_key_invalid",
  "api_key_revoked",
  "api_key_expired",
  "api_key_scope_missing",
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

export const PageQuery = t.Object({
  limit: t.Optional(t.String({ pattern: "^[0-9]{1,3}$", description: "1 to 100, default 20." })),
  startingAfter: t.Optional(t.String({ description: "An id from the previous page: the page after it." })),
});
