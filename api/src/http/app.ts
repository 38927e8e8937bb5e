/**
 * The Elysia application: request ids, CORS for the session-token routes only, the error
 * mapping to the one error shape (`answerError`, which the HTTP front uses too, so that an
 * error answered under a page's path carries that page's security headers: page-families.ts),
 * Swagger, and the resource routes.
 */
import { Elysia } from "elysia";
import { ApiError, ERROR_CATALOGUE, errorBody } from "../errors.ts";
import { newId } from "../../../shared/ids.ts";
import { healthRoutes } from "./health.ts";
import { metricsRoutes } from "./metrics.ts";
import { isDatabaseUnavailable, isRetryableConflict, Outage } from "../db/outage.ts";
import { findInChain } from "../../../shared/error-chain.ts";
import { describeError } from "../../../shared/describe-error.ts";
import { familyOf, type PageFamily } from "./page-families.ts";
import { paymentSessionRoutes } from "./payment-sessions.ts";
import { paymentLinkRoutes } from "./payment-links.ts";
import { refundRoutes } from "./refunds.ts";
import { maskLinkIds } from "../refunds/links.ts";
import { autoReturnRoutes } from "./auto-returns.ts";
import { publicSessionRoutes } from "./public-sessions.ts";
import { settlementAddressRoutes } from "./settlement-addresses.ts";
import { sandboxRoutes } from "./sandbox.ts";
import { webhookEndpointRoutes } from "./webhook-endpoints.ts";
import { eventRoutes } from "./events.ts";
import { payerSandboxRoutes } from "./payer-sandbox.ts";
import { authorizationRoutes } from "./authorizations.ts";
import { x402Routes } from "./x402.ts";
import { x402Components } from "./x402.schemas.ts";
import { CHECKOUT_PAGES, checkoutRoutes } from "../checkout/routes.ts";
import type { Services } from "./services.ts";
import { apiReferenceRoutes, REFERENCE_PAGES, REFERENCE_PATH } from "./api-reference/routes.ts";
import { buildOpenApi } from "./api-reference/openapi.ts";
import { ErrorResponse, SCOPE_KEY } from "./schemas.ts";
import { noteRouteScope } from "./auth.ts";
import { isScope, type Scope } from "../credentials/scopes.ts";
import { eventComponents } from "./payment-sessions.schemas.ts";
import { refundComponents } from "./refunds.schemas.ts";
import { webhookComponents, webhookHeaderComponents, WEBHOOKS } from "./webhooks.schemas.ts";
import { autoReturnComponents } from "./auto-returns.schemas.ts";
import type { AnyElysia } from "elysia";


const requestIds = new WeakMap<Request, string>();
function requestIdOf(request: Request): string {
  let id = requestIds.get(request);
  if (!id) {
    id = newId("request");
    requestIds.set(request, id);
  }
  return id;
}

/** Browsers may call only the session-token routes (docs/decisions.md, "CORS only for the browser routes"). */
const CORS_HEADERS: Record<string, string> = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, POST, OPTIONS",
  "access-control-allow-headers": "authorization, content-type",
  "access-control-expose-headers": "request-id",
  "access-control-max-age": "600",
};
const isBrowserRoute = (path: string) => path === "/api" || path.startsWith("/api/");

function pathOf(request: Request): string {
  return new URL(request.url).pathname;
}

/**
 * Elysia's router hands a handler `null` for a path parameter that is not valid
 * percent-encoding (`%`, `%ZZ`, `%FF%FE`, overlong UTF-8, a lone surrogate's `%ED%A0%80`), and
 * `null` is no id; `%00` decodes to a NUL, which Postgres refuses in any text. Such a parameter
 * keeps its raw text instead: it names nothing, so every route answers as it does for any id
 * that does not exist (after its credential check; the dashboard with its own 404 page).
 */
const undecodable = (v: string | null | undefined) => v === null || (v !== undefined && v.includes("\0"));

/** Pure: `route` is the matched pattern, `path` the raw path; changes `params` in place. */
export function rawParamsWhereUndecodable(params: Record<string, string | null | undefined>, route: string, path: string): void {
  const names = route.split("/");
  const raw = path.split("/");
  names.forEach((name, i) => {
    if (name === "*" && undecodable(params["*"])) params["*"] = raw.slice(i).join("/");
    else if (name.startsWith(":") && undecodable(params[name.slice(1)])) params[name.slice(1)] = raw[i] ?? "";
  });
}

/** The error response of the one shape (also used by the HTTP front in serve.ts). */
export function errorResponse(err: ApiError, request: Request, extra: Record<string, string> = {}): Response {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "request-id": requestIdOf(request),
    // A 503 always says when to come back.
    ...(err.code === "service_unavailable" ? { "retry-after": "1" } : {}),
    ...(err.headers ?? {}),
    ...extra,
    ...(isBrowserRoute(pathOf(request)) ? CORS_HEADERS : {}),
  };
  return new Response(JSON.stringify(errorBody(err, requestIdOf(request))), { status: err.status, headers });
}

const errorCatalogueMarkdown = [
  "| HTTP | type | code | meaning |",
  "|---|---|---|---|",
  ...Object.entries(ERROR_CATALOGUE).map(([code, e]) => `| ${e.status} | ${e.type} | \`${code}\` | ${e.message} |`),
].join("\n");

const startedAt = new WeakMap<Request, number>();

/** Logged once per outage, not per request. */
export const requestsOutage = new Outage("API requests", (line) => console.error(JSON.stringify({ level: "error", msg: line })));

/** What the OpenAPI document says besides the routes. */
const REFERENCE_META = {
  exclude: [REFERENCE_PATH, `${REFERENCE_PATH}/json`, "/metrics"],
  info: {
    title: "Paysession API",
    version: "0.1.0",
    description: [
      "Accept dollar-stablecoin payments. A merchant server creates a payment session with its secret API key; the payer's browser opens the checkout with the session's id and token.",
      "",
      "**Auth.** Server endpoints take `Authorization: Bearer sk_test_…` (sandbox) or `sk_live_…` (production). Browser endpoints under `/api/` take `Authorization: Bearer <paymentSessionToken>` and answer CORS.",
      "",
      "**Errors.** Every error is `{ \"error\": { \"type\", \"code\", \"message\", \"param\"?, \"requestId\" } }` with a code from this catalogue:",
      "",
      errorCatalogueMarkdown,
    ].join("\n"),
  },
  webhooks: WEBHOOKS,
  components: {
    schemas: { Error: ErrorResponse, ...eventComponents, ...refundComponents, ...autoReturnComponents, ...webhookComponents, ...x402Components },
    parameters: webhookHeaderComponents,
    securitySchemes: {
      apiKey: { type: "http", scheme: "bearer", bearerFormat: "sk_test_… / sk_live_…", description: "Secret API key (server side only)." },
      sessionToken: { type: "http", scheme: "bearer", bearerFormat: "pst_test_… / pst_live_…", description: "paymentSessionToken of one session." },
    },
  },
};

/**
 * A face served beside the API (the dashboard): its routes, and its pages' family (the path
 * they live under and the security headers each of its answers carries, errors included). The
 * faces sit above the HTTP layer and are passed in by server.ts, so this file never imports them.
 */
export interface Face {
  routes: () => AnyElysia;
  pages: PageFamily;
}

export function buildApp(services: Services, faces: Face[] = []) {
  const routeMatchers: { method: string; re: RegExp }[] = [];
  /** Each route's scope ("GET /refunds/:id" → "refunds:read"), read off its docs once all routes are mounted. */
  const routeScopes = new Map<string, Scope>();
  const families: PageFamily[] = [CHECKOUT_PAGES, REFERENCE_PAGES, ...faces.map((f) => f.pages)];
  /**
   * An error in the one shape, with the security headers of the page family the path is in
   * (none for the API's own routes). `extra` goes last but for those headers, which nothing
   * may weaken.
   */
  // A refund link's id is a bearer secret wherever it stands in a path (a mistyped or doubled
  // slash, another case, a trailing segment): the log shows that there was one, never which.
  const loggedPathOf = (path: string) => maskLinkIds(familyOf(families, path)?.loggedPath?.(path) ?? path);
  const answerError = (err: ApiError, request: Request, extra: Record<string, string> = {}): Response =>
    errorResponse(err, request, { ...extra, ...(familyOf(families, pathOf(request))?.headers ?? {}) });
  // Elysia finds the path in request.url by skipping 11 characters unless told the host may be
  // short: with a Host of under 4 characters ("api", a proxy's name for this service) it cut
  // into the path and no route matched. The server speaks plain http:// (TLS ends at a proxy),
  // so the path starts at the first "/" after "http://".
  const app = new Elysia({ handler: { standardHostname: false } })
    .onRequest(({ request, set }) => {
      if (services.config.logRequests) startedAt.set(request, performance.now());
      set.headers["request-id"] = requestIdOf(request);
      const path = pathOf(request);
      if (isBrowserRoute(path)) {
        Object.assign(set.headers, CORS_HEADERS);
        if (request.method === "OPTIONS") return new Response(null, { status: 204, headers: { ...CORS_HEADERS } });
      }
    })
    .onTransform({ as: "global" }, ({ params, route, request }) => {
      // The route's scope, declared in its docs (schemas.ts doc()), for http/auth.ts to hold a restricted key to.
      noteRouteScope(request, routeScopes.get(`${request.method} ${route}`) ?? null);
      for (const k in params) if (undecodable(params[k])) return rawParamsWhereUndecodable(params, route, pathOf(request));
    })
    .onAfterResponse(({ request, set, responseValue }) => {
      if (!services.config.logRequests) return;
      // Method, path, status and time only: never headers (credentials) or bodies, nor a secret a page's path holds.
      const t0 = startedAt.get(request);
      console.log(
        JSON.stringify({
          level: "info",
          msg: "request",
          requestId: requestIdOf(request),
          method: request.method,
          path: loggedPathOf(pathOf(request)),
          // A handler that returns its own Response (pages, redirects) leaves set.status as it was.
          status: responseValue instanceof Response ? responseValue.status : set.status,
          ms: t0 === undefined ? undefined : Math.round((performance.now() - t0) * 10) / 10,
        }),
      );
    })
    .onError(({ code, error, request }) => {
      const refusal = findInChain(error, (e) => e instanceof ApiError);
      if (refusal) return answerError(refusal, request);
      if (code === "NOT_FOUND") {
        const path = pathOf(request);
        const other = routeMatchers.some((r) => r.re.test(path) && r.method !== request.method);
        return answerError(
          other
            ? new ApiError("method_not_allowed", `${request.method} is not allowed on ${path}.`)
            : new ApiError("route_not_found", `No endpoint ${request.method} ${path}.`),
          request,
        );
      }
      if (code === "VALIDATION") {
        // Only query strings reach Elysia's validator (bodies are checked by validate.ts).
        const first = (error as { all?: { path?: string }[] }).all?.[0];
        const param = first?.path?.replace(/^\//, "").replace(/\//g, ".") || undefined;
        return answerError(new ApiError("parameter_invalid", `${param ?? "A query parameter"} has an invalid value.`, param), request);
      }
      if (code === "PARSE") return answerError(new ApiError("body_malformed"), request);
      // The database is away, slow past the statement timeout, or the request's deadline cut its
      // transaction: 503, never 500. The code may sit on the error's cause (drizzle wraps
      // postgres.js's error in its own), so it is looked for along the chain.
      if (isDatabaseUnavailable(error)) {
        requestsOutage.failed(error);
        return answerError(new ApiError("service_unavailable", "The database is not answering. Retry shortly.", undefined, undefined, { cause: error }), request);
      }
      // A deadlock or serialization failure rolled the transaction back whole: tried again, it goes through.
      if (isRetryableConflict(error)) return answerError(new ApiError("service_unavailable", "The request met a concurrent change and changed nothing. Retry it.", undefined, undefined, { cause: error }), request);
      // Anything else is our bug: log it server-side, with what it wraps (never request headers;
      // RPC and webhook URLs often carry provider keys, so describeError redacts every URL), answer 500.
      console.error(JSON.stringify({ level: "error", msg: "unhandled", requestId: requestIdOf(request), path: pathOf(request), error: describeError(error, { stack: true }) }));
      return answerError(new ApiError("internal_error"), request);
    })
    .use(healthRoutes(services))
    .use(metricsRoutes(services))
    .use(paymentSessionRoutes(services))
    .use(refundRoutes(services))
    .use(paymentLinkRoutes(services))
    .use(autoReturnRoutes(services))
    .use(publicSessionRoutes(services))
    .use(webhookEndpointRoutes(services))
    .use(eventRoutes(services))
    .use(settlementAddressRoutes(services))
    .use(sandboxRoutes(services))
    .use(payerSandboxRoutes(services))
    .use(authorizationRoutes(services))
    .use(x402Routes(services))
    .use(checkoutRoutes());
  // The faces (the merchant dashboard: pages hidden from the API reference). Their actions call
  // the same domain functions as the routes above.
  for (const face of faces) app.use(face.routes());

  app.use(apiReferenceRoutes(() => buildOpenApi(app, REFERENCE_META)));

  for (const r of app.routes) {
    const scope = (r.hooks as { detail?: Record<string, unknown> } | undefined)?.detail?.[SCOPE_KEY];
    if (typeof scope === "string" && isScope(scope)) routeScopes.set(`${r.method} ${r.path}`, scope);
    const re = new RegExp(`^${r.path.replace(/:[^/]+/g, "[^/]+").replace(/\*/g, ".*")}$`);
    routeMatchers.push({ method: r.method, re });
  }
  return Object.assign(app, { answerError });
}

export type App = ReturnType<typeof buildApp>;
