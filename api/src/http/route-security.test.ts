/**
 * Per-route security, generated from the app's own route table: every route the Elysia app
 * serves is found at run time (so a route added later is covered without touching this
 * file), classified by its auth scheme, and hit with every wrong credential. A route this
 * suite cannot classify, or whose path parameters it does not know how to fill, fails the
 * test: a new route forces a decision here.
 *
 *   API key routes (declared `apiKey` in their docs): no credential, a malformed one, an
 *   unknown key, a revoked key, a session token, another merchant's key (ids: 404, never 403,
 *   nothing of the owner's shown or changed), the other environment's key.
 *   Session-token routes (under /api/, declared `sessionToken`): no credential, a malformed
 *   one, an API key, an unknown token, an expired token, a token whose environment tag was
 *   altered, another session's token.
 *   Public routes (listed below): answer without any credential, and ignore a bad one.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { mintCredential } from "../credentials/format.ts";
import { listApiKeys, revokeApiKey } from "../credentials/store.ts";
import { buildApp } from "./app.ts";
import { facesFor } from "../server.ts";

/** Routes anyone may call. Adding one here is a decision: it takes no credential at all. */
// GET /metrics holds aggregates only and is public unless SERVICE_METRICS_TOKEN puts it behind a
// bearer token of its own (metrics.test.ts tests that token).
// The API reference (its page, document and assets) is public too.
// The SDK bundles and the hosted checkout page with its assets are static code, the same for everyone:
// the checkout reads the session only with the token it is handed by postMessage.
const PUBLIC_ROUTES = new Set([
  "GET /healthz",
  "GET /readyz",
  "GET /docs",
  "GET /docs/json",
  "GET /docs/assets/:name",
  "GET /metrics",
  "GET /sdk/v1/paysession.js",
  "GET /sdk/v1/paysession.mjs",
  "GET /checkout/v1/",
  "GET /checkout/v1/checkout.js",
  "GET /checkout/v1/checkout.css",
]);

type Scheme = "public" | "apiKey" | "sessionToken" | "dashboard" | "refundLink" | "paymentLink";
interface Route {
  method: string;
  path: string;
  scheme: Scheme | undefined;
  why: string;
}

let svc: TestService;
let routes: Route[];
// Merchant A owns the resources; B is another merchant; C's key is revoked.
let a: Awaited<ReturnType<TestService["merchant"]>>;
let b: Awaited<ReturnType<TestService["merchant"]>>;
let revokedKey: string;
const own: { sessionId: string; token: string; endpointId: string; endpointSecret: string; eventId: string; refundId: string; linkId: string } = {} as never;
let otherToken: string;
let expiredToken: string;

function classify(method: string, path: string, security: unknown): Route {
  const declared = Array.isArray(security) ? security.flatMap((s) => Object.keys(s as object)) : [];
  const key = `${method} ${path}`;
  const browser = path === "/api" || path.startsWith("/api/");
  // The dashboard's pages take a signed-in session cookie (and a CSRF token to change
  // anything); api/src/dashboard/dashboard.test.ts walks the same route table for them.
  if (path === "/dashboard" || path.startsWith("/dashboard/")) {
    return declared.length === 0 ? { method, path, scheme: "dashboard", why: "dashboard page (dashboard.test.ts)" } : { method, path, scheme: undefined, why: `dashboard page documents ${declared}` };
  }
  // The payer's refund-link page: the unguessable link id in its path is its one credential (a
  // guessed one is 404, a claim is origin-checked and rate-limited); refund-links.test.ts covers it.
  if (path === "/refund" || path.startsWith("/refund/")) {
    return declared.length === 0 ? { method, path, scheme: "refundLink", why: "refund-link page (refund-links.test.ts)" } : { method, path, scheme: undefined, why: `refund-link page documents ${declared}` };
  }
  // The payer's payment-link page: public by design (the link id is printed on invoices); a visit is
  // origin-checked and rate-limited per client address; payment-links.test.ts covers it.
  if (path === "/pay" || path.startsWith("/pay/")) {
    return declared.length === 0 ? { method, path, scheme: "paymentLink", why: "payment-link page (payment-links.test.ts)" } : { method, path, scheme: undefined, why: `payment-link page documents ${declared}` };
  }
  if (PUBLIC_ROUTES.has(key)) {
    return declared.length === 0 ? { method, path, scheme: "public", why: "listed public" } : { method, path, scheme: undefined, why: `listed public but documents ${declared}` };
  }
  if (browser) {
    return declared.length === 1 && declared[0] === "sessionToken"
      ? { method, path, scheme: "sessionToken", why: "/api/ and documented sessionToken" }
      : { method, path, scheme: undefined, why: `under /api/ but documents ${JSON.stringify(declared)} (browser routes take session tokens)` };
  }
  if (declared.length === 1 && declared[0] === "apiKey") return { method, path, scheme: "apiKey", why: "documented apiKey" };
  return { method, path, scheme: undefined, why: `documents ${JSON.stringify(declared)}; not a listed public route` };
}

/** The concrete path for a route, its parameters filled with merchant A's resources. */
function fill(path: string): string | undefined {
  let unknown = false;
  const out = path.replace(/:([A-Za-z]+)/g, (_, name: string) => {
    if (name === "chainId") return "31337";
    if (name === "name" && path.startsWith("/docs/assets/")) return "init.js";
    if (name === "id") {
      if (path.startsWith("/payment-sessions/") || path.startsWith("/sandbox/payment-sessions/")) return own.sessionId;
      if (path.startsWith("/webhook-endpoints/")) return own.endpointId;
      if (path.startsWith("/events/")) return own.eventId;
      if (path.startsWith("/refunds/")) return own.refundId;
      if (path.startsWith("/payment-links/")) return own.linkId;
    }
    unknown = true;
    return "?";
  });
  return unknown ? undefined : out;
}

/** A body that passes validation where one is needed to reach the resource lookup. */
function bodyFor(method: string, path: string): unknown {
  if (method === "GET" || method === "DELETE") return undefined;
  if (path.startsWith("/settlement-addresses/")) return { address: "0x00000000000000000000000000000000000000b2" };
  if (path.endsWith("/refunds")) return { amount: "0.10", reason: "other" };
  if (path === "/payment-links") return { amount: "1.00", description: "A link" };
  // A token not ours to mint: refused before any network is asked (this service's never answer).
  if (path === "/sandbox/refund-balances/fund") return { token: "0x00000000000000000000000000000000000000a1" };
  return {};
}

type Call = Awaited<ReturnType<TestService["call"]>>;
async function hit(r: Route, headers: Record<string, string>): Promise<Call> {
  const path = fill(r.path)!;
  return svc.call(r.method, path, { headers, body: bodyFor(r.method, r.path) });
}
const bearerOf = (c: string) => ({ authorization: `Bearer ${c}` });

function expectError(r: Route, what: string, res: Call, status: number, codes: string | string[]) {
  const want = Array.isArray(codes) ? codes : [codes];
  const got = { route: `${r.method} ${r.path}`, what, status: res.status, code: res.body?.error?.code };
  expect(got).toEqual({ route: got.route, what, status, code: want.includes(got.code) ? got.code : want[0] });
  expect(res.body.error.requestId).toMatch(/^req_/);
}

beforeAll(async () => {
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false" });
  routes = buildApp(svc.services, facesFor(svc.services)).routes.map((r) => classify(r.method, r.path, (r as { hooks?: { detail?: { security?: unknown } } }).hooks?.detail?.security));

  a = await svc.merchant("Owner");
  b = await svc.merchant("Other");
  const c = await svc.merchant("Revoked");
  const db = svc.services.database.db;
  const cKey = (await listApiKeys(db, c.merchant.id)).find((k) => k.environment === "sandbox")!;
  await revokeApiKey(db, c.merchant.id, cKey.id);
  revokedKey = c.sandboxKey;

  const s = await svc.call("POST", "/payment-sessions", { auth: a.sandboxKey, body: { amount: "1.00", currency: "USD" } });
  own.sessionId = s.body.paymentSessionId;
  own.token = s.body.paymentSessionToken;
  const ep = await svc.call("POST", "/webhook-endpoints", { auth: a.sandboxKey, body: { url: "https://93.184.215.14/hooks" } });
  own.endpointId = ep.body.id;
  own.endpointSecret = ep.body.secret;
  const events = await svc.call("GET", `/events?paymentSessionId=${own.sessionId}`, { auth: a.sandboxKey });
  own.eventId = events.body.data[0].id;
  // A payment in the session's ledger (as the actor records one), and a refund of part of it.
  await svc.services.database.sql`
    insert into app.session_funds (session_id, chain_id, direction, tx_hash, log_index, amount, block_timestamp)
    select ${own.sessionId}, chain_id, 'in', ${`0x${"ab".repeat(32)}`}, 0, 1000000, now() from app.session_deposits where session_id = ${own.sessionId} order by chain_id limit 1`;
  own.refundId = (await svc.call("POST", `/payment-sessions/${own.sessionId}/refunds`, { auth: a.sandboxKey, body: { amount: "0.50", reason: "other" } })).body.refundId;
  own.linkId = (await svc.call("POST", "/payment-links", { auth: a.sandboxKey, body: { amount: "1.00", description: "Owner's link" } })).body.paymentLinkId;
  otherToken = (await svc.call("POST", "/payment-sessions", { auth: b.sandboxKey, body: { amount: "1.00", currency: "USD" } })).body.paymentSessionToken;
  const e = await svc.call("POST", "/payment-sessions", { auth: a.sandboxKey, body: { amount: "1.00", currency: "USD" } });
  expiredToken = e.body.paymentSessionToken;
  await svc.services.database.sql`update app.payment_sessions set token_expires_at = now() - interval '1 second' where id = ${e.body.paymentSessionId}`;
  for (const v of Object.values(own)) expect(v).toBeTruthy();
});
afterAll(() => svc.close());

describe("route table", () => {
  test("every route is classified and its parameters can be filled (a new route must be decided here)", () => {
    expect(routes.length).toBeGreaterThan(20);
    const undecided = routes.filter((r) => r.scheme === undefined).map((r) => `${r.method} ${r.path}: ${r.why}`);
    expect(undecided).toEqual([]);
    const unfillable = routes.filter((r) => r.scheme !== "dashboard" && r.scheme !== "refundLink" && r.scheme !== "paymentLink" && fill(r.path) === undefined).map((r) => `${r.method} ${r.path}`);
    expect(unfillable).toEqual([]);
  });

  test("the suite's own classifier refuses what it does not know", () => {
    expect(classify("GET", "/new-thing", undefined).scheme).toBeUndefined();
    expect(classify("GET", "/api/new-thing", [{ apiKey: [] }]).scheme).toBeUndefined();
    expect(classify("GET", "/healthz", [{ apiKey: [] }]).scheme).toBeUndefined();
    expect(fill("/things/:thingId")).toBeUndefined();
  });
});

describe("public routes", () => {
  test("answer without a credential, and a bad credential changes nothing", async () => {
    for (const r of routes.filter((x) => x.scheme === "public")) {
      for (const headers of [{}, { authorization: "Bearer nope" }, bearerOf(revokedKey)]) {
        const res = await hit(r, headers);
        expect({ route: r.path, status: res.status }).toEqual({ route: r.path, status: 200 });
      }
    }
  });
});

describe("API key routes", () => {
  const apiRoutes = () => routes.filter((x) => x.scheme === "apiKey");

  test("no credential, a malformed one, an unknown key, a revoked key, a session token: each its own 401", async () => {
    for (const r of apiRoutes()) {
      expectError(r, "none", await hit(r, {}), 401, "credentials_missing");
      expectError(r, "basic", await hit(r, { authorization: `Basic ${btoa("sk:x")}` }), 401, "credentials_malformed");
      expectError(r, "garbage", await hit(r, { authorization: "Bearer sk_test_short" }), 401, "credentials_malformed");
      expectError(r, "unknown key", await hit(r, bearerOf(mintCredential("api_key", "sandbox"))), 401, "api_key_invalid");
      expectError(r, "revoked key", await hit(r, bearerOf(revokedKey)), 401, "api_key_revoked");
      expectError(r, "session token", await hit(r, bearerOf(own.token)), 401, "api_key_required");
    }
  });

  test("another merchant's key: the owner's ids are 404 (not 403), and nothing of the owner's is shown", async () => {
    const ownIds = Object.values(own);
    for (const r of apiRoutes()) {
      const res = await hit(r, bearerOf(b.sandboxKey));
      expect({ route: `${r.method} ${r.path}`, server: res.status < 500 }).toEqual({ route: `${r.method} ${r.path}`, server: true });
      if (/:id\b/.test(r.path)) expectError(r, "other merchant", res, 404, "resource_not_found");
      else expect({ route: r.path, leaked: ownIds.filter((id) => JSON.stringify(res.body).includes(id)) }).toEqual({ route: r.path, leaked: [] });
    }
  });

  test("the other environment's key: the owner's sandbox ids are 404, sandbox tools do not exist, nothing is shown", async () => {
    const ownIds = Object.values(own);
    for (const r of apiRoutes()) {
      const res = await hit(r, bearerOf(a.liveKey));
      const route = `${r.method} ${r.path}`;
      expect({ route, server: res.status < 500 }).toEqual({ route, server: true });
      if (r.path.startsWith("/sandbox/")) expectError(r, "production key on a sandbox tool", res, 404, "route_not_found");
      else if (/:id\b/.test(r.path)) expectError(r, "production key", res, 404, "resource_not_found");
      else if (r.path.includes(":chainId")) expectError(r, "production key, sandbox chain", res, 400, "parameter_invalid");
      else expect({ route, leaked: ownIds.filter((id) => JSON.stringify(res.body).includes(id)) }).toEqual({ route, leaked: [] });
    }
  });

  test("after all that, the owner's resources are as they were", async () => {
    const s = await svc.call("GET", `/payment-sessions/${own.sessionId}`, { auth: a.sandboxKey });
    expect(s.body.status).toBe("PENDING");
    const ep = await svc.call("GET", `/webhook-endpoints/${own.endpointId}`, { auth: a.sandboxKey });
    expect(ep.body).toMatchObject({ id: own.endpointId, enabled: true, previousSecretExpiresAt: null });
    expect((await svc.call("GET", `/webhook-endpoints/${own.endpointId}/secret`, { auth: a.sandboxKey })).body.secret).toBe(own.endpointSecret);
    const settlements = await svc.call("GET", "/settlement-addresses", { auth: a.sandboxKey });
    expect(JSON.stringify(settlements.body).toLowerCase()).not.toContain("00000000000000000000000000000000000000b2");
    const [row] = await svc.services.database.sql`select force_sweep_failure from app.payment_sessions where id = ${own.sessionId}`;
    expect(row!.force_sweep_failure).toBe(false);
    const refunds = await svc.call("GET", `/payment-sessions/${own.sessionId}/refunds`, { auth: a.sandboxKey });
    expect(refunds.body.data.map((r: { refundId: string; status: string }) => [r.refundId, r.status])).toEqual([[own.refundId, "PENDING"]]);
  });
});

describe("session-token routes", () => {
  const tokenRoutes = () => routes.filter((x) => x.scheme === "sessionToken");

  test("no credential, a malformed one, an API key, an unknown, expired or re-tagged token: each its documented error", async () => {
    expect(tokenRoutes().length).toBeGreaterThan(0);
    for (const r of tokenRoutes()) {
      expectError(r, "none", await hit(r, {}), 401, "credentials_missing");
      expectError(r, "garbage", await hit(r, { authorization: "Bearer pst_test_short" }), 401, "credentials_malformed");
      expectError(r, "api key", await hit(r, bearerOf(a.sandboxKey)), 401, "session_token_required");
      expectError(r, "revoked api key", await hit(r, bearerOf(revokedKey)), 401, "session_token_required");
      expectError(r, "unknown token", await hit(r, bearerOf(mintCredential("session_token", "sandbox"))), 401, "session_token_invalid");
      expectError(r, "expired token", await hit(r, bearerOf(expiredToken)), 401, "session_token_expired");
      expectError(r, "re-tagged token", await hit(r, bearerOf(own.token.replace("pst_test_", "pst_live_"))), 401, "session_token_invalid");
      // Errors on browser routes are readable by the page (CORS).
      expect((await hit(r, {})).headers.get("access-control-allow-origin")).toBe("*");
    }
  });

  test("another session's token never reaches this session", async () => {
    for (const r of tokenRoutes()) {
      const named = r.method === "GET" ? `${fill(r.path)}?paymentSessionId=${own.sessionId}` : fill(r.path)!;
      const res = await svc.call(r.method, named, { auth: otherToken, body: bodyFor(r.method, r.path) });
      expect(res.status).toBeLessThan(500);
      if (r.method === "GET") expectError(r, "other session's token", res, 403, "session_token_mismatch");
      expect(JSON.stringify(res.body)).not.toContain(own.sessionId);
    }
    expect((await svc.call("GET", `/payment-sessions/${own.sessionId}`, { auth: a.sandboxKey })).body.status).toBe("PENDING");
  });
});
