/**
 * Every route the app serves — taken from its own route list (the API's routes, which the
 * OpenAPI document must all be among, the dashboard's pages and actions, the checkout, the
 * reference) — sent while a migration holds an ACCESS EXCLUSIVE lock on every table of the app
 * schema, as a slow disk or a long `ALTER TABLE` would leave them — and again on every table but
 * the credentials' (so that each request gets past its key or sign-in check and meets the lock in
 * its own statements). With a short statement timeout ending the wait (Postgres's 57014, which
 * drizzle hands on wrapped in a DrizzleQueryError, the code on its `cause`), and with the
 * request's deadline ending it first (the HTTP front's 503).
 * Each answer is 503 with Retry-After, never a 500, and an answer under a page's path carries
 * the same security headers as the page itself.
 *
 * A route added later is sent without touching this file: one whose path parameter this file
 * cannot fill, or that answers anything but 503 while not listed as needing no database,
 * fails it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { csrfIn, TEST_PASSWORD } from "../../../testing/dashboard.ts";
import { cookieName, LOGIN_COOKIE, secureCookies, signIn } from "../dashboard/logins.ts";
import { insertUser, prepareUser, type NewUser } from "../dashboard/users.ts";
import { createApiKey } from "../credentials/store.ts";
import { buildApp } from "./app.ts";
import { facesFor } from "../server.ts";
import { messageOf } from "../../../shared/describe-error.ts";

/** Routes that answer without the app's tables, and why: any answer but a 5xx. */
const WITHOUT_DATABASE = new Map([
  ["GET /healthz", "liveness: the process answers"],
  ["GET /metrics", "a scrape never fails: paysession_database_up 0 instead"],
  ["GET /sdk/v1/paysession.js", "a static asset"],
  ["GET /sdk/v1/paysession.mjs", "a static asset"],
  ["GET /checkout/v1/", "a static page (its data comes from /api/)"],
  ["GET /checkout/v1/checkout.js", "a static asset"],
  ["GET /checkout/v1/checkout.css", "a static asset"],
  ["GET /dashboard/assets/:file", "a static asset"],
  ["GET /refund/assets/:file", "a static asset"],
  ["GET /pay/assets/:file", "a static asset"],
  ["GET /dashboard/sign-up", "a form; its post reads the database"],
  ["GET /dashboard/forgot-password", "a form; its post reads the database"],
  ["GET /docs", "a static page"],
  ["GET /docs/json", "the document, built from the routes"],
  ["GET /docs/assets/:name", "a static asset"],
]);

/** The headers that make a page safe to show; an error answer under a page's path carries the page's. */
const SECURITY_HEADER_NAMES = [
  "content-security-policy",
  "x-frame-options",
  "x-content-type-options",
  "referrer-policy",
  "cross-origin-opener-policy",
  "cross-origin-resource-policy",
  "permissions-policy",
];

/** The page whose headers stand for each family of pages. */
const FAMILY_PAGES: Record<string, string> = { "/dashboard": "/dashboard/sign-in", "/checkout/v1": "/checkout/v1/", "/docs": "/docs", "/pay": "/pay/assets/pay.css" };
const familyOf = (path: string) => Object.keys(FAMILY_PAGES).find((p) => path === p || path.startsWith(`${p}/`));

interface Service {
  svc: TestService;
  doc: { paths: Record<string, Record<string, any>> };
  familyHeaders: Record<string, Record<string, string | null>>;
  /** Sign-in's and sign-up's own CSRF cookie and token (there is no session yet to hold one). */
  pre: { cookie: string; csrf: string };
  /** One password hash for every pass's user (argon2 is slow on purpose). */
  user: NewUser;
  passes: number;
}

/** What one pass's requests act on: its own merchant, so that what one pass changed (a key revoked, a session canceled) never shapes the next. */
interface Setup extends Service {
  key: string;
  token: string;
  sessionId: string;
  endpointId: string;
  eventId: string;
  /** A key of its own for the revoke action, so that the pass's other requests keep theirs. */
  keyId: string;
  /** A signed-in person's cookie and CSRF token (signed in directly: the form's password check would race a short deadline). */
  browser: { cookie: string; csrf: string };
  /** A second login of the same person, for sign-out. */
  leaving: { cookie: string; csrf: string };
}

const services: Service[] = [];
// Each close drains requests still out from the last pass and stops every loop: a loaded machine
// took longer than the 5 s default once (seen with the suite running beside others).
afterAll(async () => {
  await Promise.all(services.map((s) => s.svc.close()));
}, 60_000);

async function startService(env: Record<string, string>): Promise<Service> {
  const svc = await startTestService(
    // Mail set (to a port where nothing listens: sends fail and wait), so forgot-password's post reads the database as it does where mail is set.
    { SERVICE_WEBHOOK_WORKER: "false", SERVICE_DASHBOARD_SIGNUP: "true", SERVICE_SMTP_URL: "smtp://127.0.0.1:9", ...env },
    { resolver: async () => ["93.184.215.14"] },
  );
  const form = await fetch(`${svc.url}/dashboard/sign-in`);
  const pre = { cookie: form.headers.getSetCookie()[0]!.split(";")[0]!, csrf: csrfIn(await form.text())! };
  const familyHeaders: Service["familyHeaders"] = {};
  for (const [family, path] of Object.entries(FAMILY_PAGES)) {
    const res = await fetch(`${svc.url}${path}`);
    await res.arrayBuffer();
    expect(res.status).toBe(200);
    familyHeaders[family] = Object.fromEntries(SECURITY_HEADER_NAMES.map((h) => [h, res.headers.get(h)]));
  }
  expect(familyHeaders["/dashboard"]!["content-security-policy"]).toContain("frame-ancestors 'none'");
  const service: Service = { svc, doc: (await svc.call("GET", "/docs/json")).body, familyHeaders, pre, user: await prepareUser("nobody@example.com", TEST_PASSWORD), passes: 0 };
  services.push(service);
  return service;
}

async function fixtures(service: Service): Promise<Setup> {
  const { svc } = service;
  const db = svc.services.database.db;
  const n = ++service.passes;
  const { merchant, sandboxKey } = await svc.merchant(`Locked ${n}`);
  const user = await insertUser(db, merchant.id, { ...service.user, email: `locked-${n}@example.com` });
  const spare = await createApiKey(db, merchant.id, "sandbox", "to revoke");
  const s = await svc.call("POST", "/payment-sessions", { auth: sandboxKey, body: { amount: "10.00", currency: "USD" } });
  const endpoint = await svc.call("POST", "/webhook-endpoints", { auth: sandboxKey, body: { url: "http://localhost:9/h" } });
  const events = await svc.call("GET", "/events", { auth: sandboxKey });
  if (s.status !== 201 || endpoint.status !== 201 || !events.body?.data?.[0]) throw new Error(`pass ${n}'s fixtures: ${s.status} ${endpoint.status} ${JSON.stringify(events.body).slice(0, 200)}`);
  const cookie = cookieName(LOGIN_COOKIE, secureCookies(svc.config.publicUrl));
  const signedIn = async () => {
    const login = await signIn(db, user, null);
    return { cookie: `${cookie}=${login.token}`, csrf: login.csrfToken };
  };
  return {
    ...service,
    key: sandboxKey,
    token: s.body.paymentSessionToken,
    sessionId: s.body.paymentSessionId,
    endpointId: endpoint.body.id,
    eventId: events.body.data[0].id,
    keyId: spare.key.id,
    browser: await signedIn(),
    leaving: await signedIn(),
  };
}

/** Each path parameter of every route; a route with one not here fails the test, naming it. */
function fill(s: Setup, path: string): string {
  const byName: Record<string, () => string> = {
    env: () => "sandbox",
    chainId: () => "31337",
    eventId: () => s.eventId,
    keyId: () => s.keyId,
    tool: () => "expire",
    op: () => "rotate",
    file: () => (path.startsWith("/refund/") ? "refund.css" : path.startsWith("/pay/") ? "pay.css" : "dashboard.css"),
    name: () => "init.js",
    // No refund exists here: under the locks its routes must answer 503 all the same.
    refundId: () => "rf_000000000000000000000000",
    // A link id of the right form, so that its page reaches the database.
    linkId: () => (path.startsWith("/pay/") ? `plink_${"0".repeat(24)}` : `rl_${"0".repeat(40)}`),
    sessionId: () => s.sessionId,
    token: () => (path.includes("/invitations/") ? `inv_${"0".repeat(40)}` : `rst_${"0".repeat(40)}`),
    // No such member: under the locks the team's routes must answer 503 all the same.
    userId: () => `usr_${"0".repeat(24)}`,
    invitationId: () => `inv_${"0".repeat(24)}`,
    passkeyId: () => "AAAA",
    id: () => (/\/events\//.test(path) ? s.eventId : /webhook/.test(path) ? s.endpointId : /payment-links\//.test(path) ? `plink_${"0".repeat(24)}` : s.sessionId),
  };
  return path.replace(/:([A-Za-z]+)/g, (_, name: string) => {
    const value = byName[name];
    if (!value) throw new Error(`${path}: this test cannot fill the path parameter :${name}; add it to fill()`);
    return value();
  });
}

/** A body the route takes, from the examples of its document's required fields. */
function jsonBody(s: Setup, method: string, path: string): string | undefined {
  const op = s.doc.paths[path.replace(/:([A-Za-z]+)/g, "{$1}")]?.[method.toLowerCase()];
  const schema = op?.requestBody?.content?.["application/json"]?.schema;
  if (!schema) return method === "GET" || method === "DELETE" ? undefined : "{}";
  const body: Record<string, unknown> = {};
  for (const field of schema.required ?? []) {
    const prop = schema.properties?.[field] ?? {};
    body[field] = prop.examples?.[0] ?? prop.example ?? (prop.type === "integer" ? 1 : "0x" + "ab".repeat(field === "signature" ? 65 : 32));
  }
  return JSON.stringify(body);
}

function requestFor(s: Setup, method: string, route: string): { url: string; init: RequestInit } {
  const path = fill(s, route);
  const headers: Record<string, string> = {};
  let body: string | undefined;
  if (route.startsWith("/dashboard")) {
    const preSession = ["/dashboard/sign-in", "/dashboard/sign-up", "/dashboard/forgot-password", "/dashboard/reset-password/:token", "/dashboard/invitations/:token"].includes(route);
    if (method === "POST") {
      headers["content-type"] = "application/x-www-form-urlencoded";
      const fields: Record<string, string> = preSession
        ? { _csrf: s.pre.csrf, email: `new-${s.passes}@example.com`, password: "a password of some length", name: "Locked" }
        : { _csrf: route === "/dashboard/sign-out" ? s.leaving.csrf : s.browser.csrf };
      body = new URLSearchParams(fields).toString();
    }
    headers.cookie = method === "POST" && preSession ? s.pre.cookie : route === "/dashboard/sign-out" ? s.leaving.cookie : s.browser.cookie;
  } else if (!["/healthz", "/readyz", "/metrics"].includes(route) && !/^\/(sdk|checkout|docs)\b/.test(route)) {
    headers.authorization = `Bearer ${route.startsWith("/api/") ? s.token : s.key}`;
    body = jsonBody(s, method, route);
    if (body !== undefined) headers["content-type"] = "application/json";
  }
  return { url: `${s.svc.url}${path}`, init: { method, headers, body, redirect: "manual" } };
}

/** Holds ACCESS EXCLUSIVE on these tables of the app schema, on a connection of its own, until released. */
async function lockTables(url: string, tables: string[]): Promise<{ release(): Promise<void> }> {
  const sql = postgres(url, { max: 1, onnotice: () => {}, connection: { statement_timeout: 0, idle_in_transaction_session_timeout: 0 } });
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let locked!: () => void;
  const held = new Promise<void>((r) => (locked = r));
  const tx = sql.begin(async (t) => {
    await t.unsafe(`lock table ${tables.map((name) => `app."${name}"`).join(", ")} in access exclusive mode`);
    locked();
    await released;
  });
  await Promise.race([held, tx]);
  return {
    async release() {
      release();
      await tx;
      await sql.end();
    },
  };
}

async function appTables(service: Service): Promise<string[]> {
  const rows = await service.svc.services.database.sql<{ name: string }[]>`select tablename as name from pg_tables where schemaname = 'app' order by tablename`;
  expect(rows.length).toBeGreaterThan(10);
  return rows.map((r) => r.name);
}

/** The app's own route list, checked against the document and against WITHOUT_DATABASE. */
function routeTable(service: Service): { method: string; path: string }[] {
  const routes = buildApp(service.svc.services, facesFor(service.svc.services)).routes.map((r) => ({ method: r.method, path: r.path }));
  const names = new Set(routes.map((r) => `${r.method} ${r.path}`));
  // The document's operations are all among the routes, and the list names no route gone.
  const documented = Object.entries(service.doc.paths).flatMap(([p, ms]) => Object.keys(ms).map((m) => `${m.toUpperCase()} ${p.replace(/\{([A-Za-z]+)\}/g, ":$1")}`));
  expect(documented.length).toBeGreaterThan(30);
  expect(documented.filter((d) => !names.has(d))).toEqual([]);
  expect([...WITHOUT_DATABASE.keys()].filter((w) => !names.has(w))).toEqual([]);
  expect(routes.filter((r) => r.path.startsWith("/dashboard")).length).toBeGreaterThan(25);
  return routes;
}

/** One route's answer judged: `strict` (every table locked) wants 503 + Retry-After of each route that needs the database; otherwise no 5xx but such a 503. */
function judge(s: Setup, r: { method: string; path: string; url: string }, res: Response, text: string, label: string, strict: boolean): string[] {
  const failures: string[] = [];
  const route = `${r.method} ${r.path}`;
  const name = `${route} (${label})`;
  const family = familyOf(new URL(r.url).pathname);
  // An error answer under a page's path stands for that page: its security headers.
  if (family && res.status >= 400) {
    for (const h of SECURITY_HEADER_NAMES) {
      const want = s.familyHeaders[family]![h];
      if (res.headers.get(h) !== want) failures.push(`${name} ${res.status}: ${h} is ${res.headers.get(h)}, the page's is ${want}`);
    }
  }
  const retryable = res.status === 503 && !!res.headers.get("retry-after");
  const what = `${res.status} (Retry-After ${res.headers.get("retry-after")}) ${text.slice(0, 120).replace(/\s+/g, " ")}`;
  if (WITHOUT_DATABASE.has(route)) {
    if (res.status >= 500) failures.push(`${name}: ${what}, without the database`);
  } else if (strict ? !retryable : res.status >= 500 && !retryable) {
    failures.push(`${name}: ${what}`);
  } else if (res.status === 503 && !family && JSON.parse(text)?.error?.code !== "service_unavailable") {
    failures.push(`${name}: 503 but ${text.slice(0, 120)}`);
  }
  return failures;
}

interface Pass {
  failures: string[];
  /** Answers that were 503 with Retry-After. */
  unavailable: number;
}

/**
 * Every route, sent at once on the pass's own fixtures while `tables` are locked. The lock is
 * held until every answer is in, or for `holdMs` at most: what is still out then (a sandbox route
 * waiting on a network that is not there, a password hash) is judged when it comes (`rest`).
 * Resolves once the lock is released.
 */
async function sendEveryRoute(s: Setup, tables: string[], strict: boolean, holdMs = 60_000): Promise<{ pass: Pass; rest: Promise<void> }> {
  const requests = routeTable(s).map((r) => ({ ...r, ...requestFor(s, r.method, r.path) }));
  const label = strict ? "every table locked" : `${tables.join(", ")} locked`;
  const pass: Pass = { failures: [], unavailable: 0 };
  const lock = await lockTables(s.svc.databaseUrl, tables);
  let answers: Promise<void>;
  try {
    answers = Promise.all(
      requests.map(async (r) => {
        let res: Response;
        let text: string;
        try {
          res = await fetch(r.url, r.init);
          text = await res.text();
        } catch (e) {
          pass.failures.push(`${r.method} ${r.path} (${label}): no whole answer (${messageOf(e)})`);
          return;
        }
        if (res.status === 503 && res.headers.get("retry-after")) pass.unavailable++;
        pass.failures.push(...judge(s, r, res, text, label, strict));
      }),
    ).then(() => {});
    await Promise.race([answers, Bun.sleep(holdMs)]);
  } finally {
    await lock.release();
  }
  return { pass, rest: answers };
}

async function sendEveryRouteAndWait(s: Setup, tables: string[], strict: boolean): Promise<Pass> {
  const { pass, rest } = await sendEveryRoute(s, tables, strict);
  await rest;
  return pass;
}

let byStatementTimeout: Service;
let byDeadline: Service;
beforeAll(async () => {
  [byStatementTimeout, byDeadline] = await Promise.all([
    // The statement timeout ends the wait, well inside the request's deadline (which ends the
    // sandbox routes' calls to a network that is not there: they do not wait for the lock).
    startService({ SERVICE_DB_STATEMENT_TIMEOUT_MS: "100", SERVICE_REQUEST_TIMEOUT_MS: "1000" }),
    // The request's deadline ends it, long before the statement timeout would.
    startService({ SERVICE_DB_STATEMENT_TIMEOUT_MS: "20000", SERVICE_REQUEST_TIMEOUT_MS: "1500" }),
  ]);
}, 60_000);

const report = (failures: string[]) => {
  if (failures.length) console.error(failures.join("\n"));
  expect(failures).toEqual([]);
};

test("every route with every table locked, the statement timeout ending the wait: 503 with Retry-After, never a 500; error pages keep their page's security headers", async () => {
  const s = await fixtures(byStatementTimeout);
  report((await sendEveryRouteAndWait(s, await appTables(byStatementTimeout), true)).failures);
  // And once the lock is gone, the service answers again.
  expect((await s.svc.call("GET", `/payment-sessions/${s.sessionId}`, { auth: s.key })).status).toBe(200);
}, 60_000);

test("every route with one table locked, for each table in turn (a migration's lock): never a 500, a 503 always with Retry-After", async () => {
  const tables = await appTables(byStatementTimeout);
  // Each pass on fixtures of its own, made before any lock.
  const sets: Setup[] = [];
  for (let i = 0; i < tables.length; i += 6) sets.push(...(await Promise.all(tables.slice(i, i + 6).map(() => fixtures(byStatementTimeout)))));
  // Held long enough for a few statements to meet the lock and time out; stragglers are judged as they come.
  const done: Pass[] = [];
  const stragglers: Promise<void>[] = [];
  for (const [i, table] of tables.entries()) {
    const { pass, rest } = await sendEveryRoute(sets[i]!, [table], false, 400);
    done.push(pass);
    stragglers.push(rest);
  }
  await Promise.all(stragglers);
  report(done.flatMap((p) => p.failures));
  // The passes met the locks (a table no route reads leaves every answer as it was).
  expect(done.reduce((n, p) => n + p.unavailable, 0)).toBeGreaterThan(50);
}, 120_000);

test("every route with every table locked, the request's deadline ending the wait: 503 with Retry-After; error pages keep their page's security headers", async () => {
  report((await sendEveryRouteAndWait(await fixtures(byDeadline), await appTables(byDeadline), true)).failures);
}, 60_000);
