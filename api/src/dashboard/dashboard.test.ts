/**
 * The dashboard over HTTP against a real service and Postgres (the browser suite,
 * dashboard.browser.test.ts, drives the same pages in Chromium): sign-in and its throttle,
 * server-side sessions, CSRF, isolation between merchants and environments, escaping, the
 * security history, API keys and settlement changes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { buildApp } from "../http/app.ts";
import { facesFor } from "../server.ts";
import { changePassword } from "./users.ts";
import { merchantWithUser, signIn, signInAttempt, TEST_PASSWORD, type Browser } from "../../../testing/dashboard.ts";
import { CSP } from "./request.ts";
import { likePrefix } from "./transactions.ts";
import { csvRecords, misreadCells, startsFormula } from "../../../testing/csv.ts";
import { insertAttempts, type NewAttempt } from "../webhooks/attempts.ts";
import { newId } from "../../../shared/ids.ts";
import { col, decodeRows, rowShape } from "../db/rows.ts";

let svc: TestService;
let a: Awaited<ReturnType<typeof merchantWithUser>>;
let b: Awaited<ReturnType<typeof merchantWithUser>>;
let asA: Browser;
const bOwn: { sessionId: string; endpointId: string; keyId: string; eventId: string; refundId: string; linkId: string } = {} as never;

const Count = rowShape("test count", { n: col.int });
const Id = rowShape("test id", { id: col.text });

/** Dashboard routes anyone may reach (the pages of signing in, the assets). */
const PUBLIC = new Set(["GET /dashboard", "GET /dashboard/assets/:file", "GET /dashboard/sign-in", "POST /dashboard/sign-in", "GET /dashboard/sign-up", "POST /dashboard/sign-up", "GET /dashboard/forgot-password", "POST /dashboard/forgot-password", "GET /dashboard/reset-password/:token", "POST /dashboard/reset-password/:token", "GET /dashboard/invitations/:token", "POST /dashboard/invitations/:token"]);

function fill(path: string): string {
  return path
    .replace(":env", "sandbox")
    .replace(/\/transactions\/:id/, `/transactions/${bOwn.sessionId}`)
    .replace(":eventId", bOwn.eventId)
    .replace(":refundId", bOwn.refundId)
    .replace(":tool", "pay")
    .replace(":keyId", bOwn.keyId)
    .replace(/\/webhooks\/:id/, `/webhooks/${bOwn.endpointId}`)
    .replace(/\/payment-links\/:id/, `/payment-links/${bOwn.linkId}`)
    .replace(":op", "delete")
    .replace(":chainId", "31337")
    .replace(":file", "dashboard.css");
}

beforeAll(async () => {
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false" });
  a = await merchantWithUser(svc, "alice@a.example");
  b = await merchantWithUser(svc, "bob@b.example");
  asA = await signIn(svc, "alice@a.example");
  const s = await svc.call("POST", "/payment-sessions", { auth: b.sandboxKey, body: { amount: "3.00", currency: "USD", referenceId: "bob-order" } });
  bOwn.sessionId = s.body.paymentSessionId;
  bOwn.endpointId = (await svc.call("POST", "/webhook-endpoints", { auth: b.sandboxKey, body: { url: "https://93.184.215.14/hooks" } })).body.id;
  bOwn.keyId = (await svc.call("GET", "/payment-sessions?limit=1", { auth: b.sandboxKey })).status === 200 ? (await svc.services.database.sql`select id from app.api_keys where merchant_id = ${b.merchant.id} and environment = 'sandbox'`)[0]!.id : "";
  bOwn.eventId = (await svc.call("GET", `/events?paymentSessionId=${bOwn.sessionId}`, { auth: b.sandboxKey })).body.data[0].id;
  // A payment in B's ledger (as the actor records one) and a refund of part of it: A must reach neither.
  await svc.services.database.sql`
    insert into app.session_funds (session_id, chain_id, direction, tx_hash, log_index, amount, block_timestamp)
    select ${bOwn.sessionId}, chain_id, 'in', ${`0x${"cd".repeat(32)}`}, 0, 3000000, now() from app.session_deposits where session_id = ${bOwn.sessionId} order by chain_id limit 1`;
  bOwn.refundId = (await svc.call("POST", `/payment-sessions/${bOwn.sessionId}/refunds`, { auth: b.sandboxKey, body: { amount: "1.00", reason: "other" } })).body.refundId;
  bOwn.linkId = (await svc.call("POST", "/payment-links", { auth: b.sandboxKey, body: { amount: "4.00", description: "Bob-only link" } })).body.paymentLinkId;
}, 60_000);
afterAll(() => svc.close());

describe("signing in", () => {
  test("the right password signs in (a server-side session in an HttpOnly SameSite cookie); a wrong one does not", async () => {
    const ok = await signInAttempt(svc, "ALICE@a.example", TEST_PASSWORD);
    expect(ok.status).toBe(303);
    const cookie = ok.headers.getSetCookie().find((c) => c.startsWith("ps_dashboard="))!;
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Lax");
    expect(cookie).not.toContain("Secure"); // http on localhost only; see logins.test.ts for the rest
    const [row] = await svc.services.database.sql`select count(*)::int as n from app.dashboard_logins where token_hash = encode(sha256(${cookie.split(";")[0]!.split("=")[1]!}::bytea), 'hex')`;
    expect(row!.n).toBe(1);
    const bad = await signInAttempt(svc, "alice@a.example", "not the password");
    expect(bad.status).toBe(401);
    expect(await bad.text()).toContain("Wrong email or password.");
    expect(bad.headers.getSetCookie().some((c) => c.startsWith("ps_dashboard="))).toBe(false);
  });

  test("a sign-in post without the form's own token is refused", async () => {
    const res = await fetch(`${svc.url}/dashboard/sign-in`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ email: "alice@a.example", password: TEST_PASSWORD }),
      redirect: "manual",
    });
    expect(res.status).toBe(403);
  });

  test("a sign-in posted from another origin is refused even with a planted cookie matching its token (login CSRF)", async () => {
    // A page on another port of this host or a sibling subdomain can set the form's cookie here.
    const planted = "P".repeat(40);
    const forged = (headers: Record<string, string>) =>
      fetch(`${svc.url}/dashboard/sign-in`, {
        method: "POST",
        headers: { cookie: `ps_dashboard_pre=${planted}`, "content-type": "application/x-www-form-urlencoded", ...headers },
        body: new URLSearchParams({ _csrf: planted, email: "alice@a.example", password: TEST_PASSWORD }),
        redirect: "manual",
      });
    const sibling = new URL(svc.url);
    sibling.port = String(Number(sibling.port) + 1);
    const tries: Record<string, string>[] = [
      { origin: sibling.origin, "sec-fetch-site": "same-site" },
      { origin: sibling.origin },
      { origin: "https://shop.attacker.example" },
      { origin: "null" }, // a sandboxed frame on the attacker's page
      { origin: "null", "sec-fetch-site": "same-site" },
      { "sec-fetch-site": "same-site" },
      { "sec-fetch-site": "cross-site" },
    ];
    for (const headers of tries) {
      const res = await forged(headers);
      expect({ headers, status: res.status }).toEqual({ headers, status: 403 });
      expect(res.headers.getSetCookie().some((c) => c.startsWith("ps_dashboard="))).toBe(false);
    }
    // The same post from the dashboard's own page signs in.
    expect((await forged({ origin: new URL(svc.url).origin, "sec-fetch-site": "same-origin" })).status).toBe(303);
  });

  test("every signed-in POST is refused from another origin too, whatever the browser says of it", async () => {
    const sibling = new URL(svc.url);
    sibling.port = String(Number(sibling.port) + 1);
    const tries: Record<string, string>[] = [{ origin: sibling.origin }, { "sec-fetch-site": "same-site" }, { origin: "null", "sec-fetch-site": "cross-site" }];
    for (const headers of tries) {
      expect({ headers, status: (await asA.post("/dashboard/sandbox/settings/api-keys", { name: "x" }, { headers })).status }).toEqual({ headers, status: 403 });
    }
    expect((await asA.post("/dashboard/sandbox/settings/api-keys", { name: "null origin" }, { headers: { origin: "null", "sec-fetch-site": "same-origin" } })).status).toBe(303);
  });

  test("repeated failures are throttled with a growing wait, even for the right password, and recorded", async () => {
    const m = await merchantWithUser(svc, "carol@c.example");
    for (let i = 0; i < 5; i++) expect((await signInAttempt(svc, "carol@c.example", `wrong ${i}`)).status).toBe(401);
    const blocked = await signInAttempt(svc, "carol@c.example", TEST_PASSWORD);
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await blocked.text()).toContain("Too many failed sign-ins");
    const [f] = await svc.services.database.sql`select count(*)::int as n from app.security_events where merchant_id = ${m.merchant.id} and action = 'sign_in_failed'`;
    expect(f!.n).toBe(5);
    // Another person's sign-in is not held up by carol's failures.
    expect((await signInAttempt(svc, "alice@a.example", TEST_PASSWORD)).status).toBe(303);
  });

  test("sign-out ends the session on the server; a password change ends every session of the user", async () => {
    await merchantWithUser(svc, "dave@d.example");
    const s1 = await signIn(svc, "dave@d.example");
    const s2 = await signIn(svc, "dave@d.example");
    expect((await s1.post("/dashboard/sign-out")).status).toBe(303);
    expect((await s1.get("/dashboard/sandbox/transactions")).status).toBe(303); // the same cookie is dead
    expect((await s2.get("/dashboard/sandbox/transactions")).status).toBe(200);
    const [u] = decodeRows(Id, await svc.services.database.sql`select id from app.dashboard_users where email = 'dave@d.example'`);
    await changePassword(svc.services.database.db, u!.id, "a brand new password");
    const after = await s2.get("/dashboard/sandbox/transactions");
    expect(after.status).toBe(303);
    expect(after.headers.get("location")).toStartWith("/dashboard/sign-in");
  });
});

describe("every dashboard route", () => {
  test("without a session: pages redirect to sign-in, actions are 401, and nothing changes", async () => {
    const routes = buildApp(svc.services, facesFor(svc.services)).routes.filter((r) => r.path.startsWith("/dashboard"));
    expect(routes.length).toBeGreaterThan(20);
    for (const r of routes) {
      const key = `${r.method} ${r.path}`;
      if (PUBLIC.has(key)) continue;
      const res = await fetch(`${svc.url}${fill(r.path)}`, {
        method: r.method,
        headers: r.method === "POST" ? { "content-type": "application/x-www-form-urlencoded" } : {},
        body: r.method === "POST" ? "_csrf=x" : undefined,
        redirect: "manual",
      });
      if (r.method === "GET") {
        expect({ key, status: res.status, to: res.headers.get("location")?.split("?")[0] }).toEqual({ key, status: 303, to: "/dashboard/sign-in" });
      } else {
        expect({ key, status: res.status }).toEqual({ key, status: 401 });
      }
    }
    expect((await svc.call("GET", `/webhook-endpoints/${bOwn.endpointId}`, { auth: b.sandboxKey })).status).toBe(200);
  });

  test("signed in as merchant A: merchant B's data is neither shown nor changed through direct URLs or forged posts", async () => {
    for (const r of buildApp(svc.services, facesFor(svc.services)).routes.filter((x) => x.path.startsWith("/dashboard") && !PUBLIC.has(`${x.method} ${x.path}`) && x.path !== "/dashboard/sign-out")) {
      const key = `${r.method} ${r.path}`;
      const path = fill(r.path);
      if (process.env.DEBUG_ROUTES) console.log(key);
      const res = r.method === "GET" ? await asA.get(path) : await asA.post(path, { name: "x", url: "https://93.184.215.14/x", password: TEST_PASSWORD, address: "0x00000000000000000000000000000000000000b2" });
      const text = await res.text();
      // Funding the refund balance mints on a network, and this service's networks never answer: the page says 503.
      const reachesChain = key === "POST /dashboard/:env/refund-balance/fund" && res.status === 503;
      expect({ key, server: res.status < 500 || reachesChain }).toEqual({ key, server: true });
      for (const id of [bOwn.sessionId, bOwn.endpointId, bOwn.keyId, bOwn.eventId, bOwn.refundId, bOwn.linkId, "bob-order", "Bob-only link", b.merchant.sandboxPublicId]) {
        expect({ key, leaked: text.includes(id) && !path.includes(id) ? id : null }).toEqual({ key, leaked: null });
      }
      if (/:id|:keyId|:eventId|:refundId/.test(r.path)) expect({ key, status: res.status }).toEqual({ key, status: 404 });
    }
    // B's things are as they were.
    expect((await svc.call("GET", `/payment-sessions/${bOwn.sessionId}`, { auth: b.sandboxKey })).body.status).toBe("PENDING");
    expect((await svc.call("GET", `/payment-sessions/${bOwn.sessionId}/refunds`, { auth: b.sandboxKey })).body.data.map((r: { refundId: string; status: string }) => [r.refundId, r.status])).toEqual([[bOwn.refundId, "PENDING"]]);
    expect((await svc.call("GET", `/webhook-endpoints/${bOwn.endpointId}`, { auth: b.sandboxKey })).status).toBe(200);
    expect((await svc.call("GET", `/payment-links/${bOwn.linkId}`, { auth: b.sandboxKey })).body.status).toBe("active");
    expect((await svc.call("GET", "/payment-sessions?limit=1", { auth: b.sandboxKey })).status).toBe(200);
    const [bs] = await svc.services.database.sql`select count(*)::int as n from app.merchant_settlements where merchant_id = ${b.merchant.id} and chain_id = 31337`;
    expect(bs!.n).toBe(0);
  });

  test("a page cursor naming merchant B's event or session is refused with a notice, not used to page A's rows", async () => {
    const own = await svc.call("POST", "/payment-sessions", { auth: a.sandboxKey, body: { amount: "1.00", currency: "USD", referenceId: "cursor-own" } });
    expect(own.status).toBe(201);
    for (const path of [`/dashboard/sandbox/events?after=${bOwn.eventId}`, `/dashboard/sandbox/transactions?after=${bOwn.sessionId}`, `/dashboard/sandbox/transactions?before=${bOwn.sessionId}`, `/dashboard/sandbox/transactions?after=ps_${"A".repeat(24)}`]) {
      const res = await asA.get(path);
      const text = await res.text();
      expect({ path, status: res.status, notice: text.includes("That page link is not valid") }).toEqual({ path, status: 200, notice: true });
      expect(text).not.toContain(bOwn.sessionId);
    }
    // The newest rows are shown instead.
    expect(await (await asA.get(`/dashboard/sandbox/transactions?after=${bOwn.sessionId}`)).text()).toContain(own.body.paymentSessionId);
  });

  test("a post without the CSRF token, with a wrong one, or from another site is refused and changes nothing", async () => {
    const keys = async () => (await svc.services.database.sql`select count(*)::int as n from app.api_keys where merchant_id = ${a.merchant.id}`)[0]!.n;
    const before = await keys();
    expect((await asA.post("/dashboard/sandbox/settings/api-keys", { name: "csrf" }, { csrf: null })).status).toBe(403);
    expect((await asA.post("/dashboard/sandbox/settings/api-keys", { name: "csrf" }, { csrf: "x".repeat(40) })).status).toBe(403);
    expect((await asA.post("/dashboard/sandbox/settings/api-keys", { name: "csrf" }, { headers: { origin: "https://evil.example" } })).status).toBe(403);
    expect(await keys()).toBe(before);
    expect((await asA.post("/dashboard/sandbox/settings/api-keys", { name: "csrf" })).status).toBe(303);
    expect(await keys()).toBe(before + 1);
  });

  test("pages carry a strict CSP, refuse to be framed, and are not cached", async () => {
    const res = await asA.get("/dashboard/sandbox/transactions");
    expect(res.headers.get("content-security-policy")).toBe(CSP);
    expect(CSP).toContain("frame-ancestors 'none'");
    expect(CSP).toContain("script-src 'self'");
    expect(CSP).not.toContain("unsafe-inline");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("cache-control")).toBe("no-store");
    const html = await res.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)/); // no inline script
    expect(html).not.toMatch(/ on[a-z]+="/); // no inline handlers
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)="(https?:)?\/\//); // nothing from another origin
  });
});

describe("pages", () => {
  test("a reference or metadata holding <script> is shown as text", async () => {
    const evil = `<script>alert(1)</script>`;
    const s = await svc.call("POST", "/payment-sessions", { auth: a.sandboxKey, body: { amount: "1.00", currency: "USD", referenceId: evil, metadata: { note: `"><img src=x onerror=alert(2)>` } } });
    expect(s.status).toBe(201);
    for (const path of [`/dashboard/sandbox/transactions`, `/dashboard/sandbox/transactions/${s.body.paymentSessionId}`]) {
      const html = await (await asA.get(path)).text();
      expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
      expect(html).not.toContain(evil);
      expect(html).not.toContain("<img src=x");
    }
  });

  test("the CSV export: a reference or metadata made to run a formula reads back intact and starts none, whatever the reader's separator", async () => {
    const m = await merchantWithUser(svc, "csv@e.example");
    const references = ["=1+1", "order;=1+1", "order\n@SUM(A1)", "a\r\nb, =2", 'q";-3'];
    for (const referenceId of references) {
      const r = await svc.call("POST", "/payment-sessions", { auth: m.sandboxKey, body: { amount: "1.00", currency: "USD", referenceId, metadata: { note: `x;=HYPERLINK("a")` } } });
      expect(r.status).toBe(201);
    }
    const me = await signIn(svc, "csv@e.example");
    const csv = await (await me.get("/dashboard/sandbox/transactions.csv")).text();
    const records = csvRecords(csv);
    expect(records.map((r) => r.reference_id!.replace(/(^|[,;\t\r\n])'(?=[ ]*[=+\-@\t\r])/g, "$1")).sort()).toEqual([...references].sort());
    expect(records.map((r) => JSON.parse(r.metadata!.replace(";'=", ";=")))).toEqual(references.map(() => ({ note: `x;=HYPERLINK("a")` })));
    expect(misreadCells(csv).filter(startsFormula)).toEqual([]);
  });

  test("transactions: search by reference, session id and deposit address, filter by status, keyset pages", async () => {
    const m = await merchantWithUser(svc, "erin@e.example");
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      const r = await svc.call("POST", "/payment-sessions", { auth: m.sandboxKey, body: { amount: `${i + 1}.00`, currency: "USD", referenceId: `order-${i}` } });
      ids.push(r.body.paymentSessionId);
    }
    await svc.call("POST", `/payment-sessions/${ids[3]}/cancel`, { auth: m.sandboxKey });
    const me = await signIn(svc, "erin@e.example");
    const page = async (qs: string) => await (await me.get(`/dashboard/sandbox/transactions${qs}`)).text();
    const idsIn = (html: string) => [...html.matchAll(/href="\/dashboard\/sandbox\/transactions\/(ps_[A-Za-z0-9]+)"/g)].map((x) => x[1]);
    const first = idsIn(await page(""));
    expect(first).toEqual(ids.slice().reverse().slice(0, 25));
    const next = /href="([^"]*after=[^"]+)"/.exec(await page(""))![1]!.replace(/&amp;/g, "&");
    expect(idsIn(await (await me.get(next)).text())).toEqual(ids.slice().reverse().slice(25));
    expect(idsIn(await page("?q=order-7"))).toEqual([ids[7]]);
    // A reference matches by prefix, newest first.
    expect(idsIn(await page("?q=order-1"))).toEqual([...ids.slice(10, 20).reverse(), ids[1]]);
    expect(idsIn(await page(`?q=${ids[12]}`))).toEqual([ids[12]]);
    const dep = (await svc.call("GET", `/payment-sessions/${ids[20]}`, { auth: m.sandboxKey })).body.networks[0].depositAddress;
    expect(idsIn(await page(`?q=${dep}`))).toEqual([ids[20]]);
    expect(idsIn(await page("?status=CANCELED"))).toEqual([ids[3]]);
    expect(idsIn(await page("?status=SUCCEEDED"))).toEqual([]);
    expect(await page("?from=not-a-date")).toContain("must be a date");
    const csv = await (await me.get("/dashboard/sandbox/transactions.csv?status=CANCELED")).text();
    const dep3 = (await svc.call("GET", `/payment-sessions/${ids[3]}`, { auth: m.sandboxKey })).body.networks[0].depositAddress;
    expect(csv.trim().split("\n")).toEqual([
      "session_id,status,status_reason,amount,currency,network_chain_id,reference_id,created_at,deposit_address,payer_address,payment_tx_hash,paid_at,settlement_tx_hash,settled_at,metadata,payment_method,payment_token,kind,refund_id,refund_destination,refund_tx_hash,refund_sent_at,refund_finished_at",
      // Unpaid: the deposit address it offered, and nothing paid or settled; every value quoted.
      expect.stringMatching(new RegExp(`^"${ids[3]}","CANCELED","canceled_by_merchant","4\\.00","USD",,"order-3","[0-9TZ:.-]+","${dep3}",,,,,,,,,"payment",,,,,$`)),
    ]);
    // The other environment shows none of it.
    expect(idsIn((await (await me.get("/dashboard/production/transactions")).text()).replaceAll("/production/", "/sandbox/"))).toEqual([]);
  });

  test("API keys: created and shown once, revoked with immediate effect, both in the security history", async () => {
    const count = async () => (await svc.services.database.sql`select count(*)::int as n from app.api_keys where merchant_id = ${a.merchant.id}`)[0]!.n;
    const before = await count();
    const created = await asA.post("/dashboard/sandbox/settings/api-keys", { name: "ci server" });
    // POST, then redirect: a reload shows the page again instead of making a second key.
    expect(created.status).toBe(303);
    expect(created.headers.get("location")).toBe("/dashboard/sandbox/settings/api-keys");
    expect(await created.text()).not.toContain("sk_test_");
    const shown = await asA.follow(created);
    expect(shown.status).toBe(200);
    const secret = /id="new-key" class="secret">(sk_test_[A-Za-z0-9]+)</.exec(await shown.text())![1]!;
    expect((await svc.call("GET", "/payment-sessions?limit=1", { auth: secret })).status).toBe(200);
    // Shown once: the reload shows the key no more, and made none.
    expect(await (await asA.get("/dashboard/sandbox/settings/api-keys")).text()).not.toContain(secret);
    expect(await count()).toBe(before + 1);
    const [k] = await svc.services.database.sql`select id from app.api_keys where name = 'ci server'`;
    const revoked = await asA.post(`/dashboard/sandbox/settings/api-keys/${k!.id}/revoke`);
    expect(revoked.status).toBe(303);
    const refused = await svc.call("GET", "/payment-sessions?limit=1", { auth: secret });
    expect(refused.body.error.code).toBe("api_key_revoked");
    const history = await (await asA.get("/dashboard/sandbox/settings/security")).text();
    expect(history).toContain("Created an API key");
    expect(history).toContain("Revoked an API key");
    expect(history).toContain("alice@a.example");
    // Append-only: the database itself refuses to rewrite history.
    expect(svc.services.database.sql`update app.security_events set action = 'x'`.then(() => "updated")).rejects.toThrow(/append-only/);
  });

  test("API keys with scopes and an expiry: chosen on the form, listed, held to by the API; a muddled choice is refused and makes nothing", async () => {
    const count = async () => (await svc.services.database.sql`select count(*)::int as n from app.api_keys where merchant_id = ${a.merchant.id}`)[0]!.n;
    const form = await (await asA.get("/dashboard/sandbox/settings/api-keys")).text();
    // Full access is the choice the form starts with; every scope of the catalogue has its box.
    expect(form).toMatch(/id="access-full" name="access" value="full" checked/);
    for (const s of ["sessions:read", "sessions:write", "refunds:write", "webhooks:write", "settlement:write", "sandbox:write"]) expect(form).toContain(`name="scope" value="${s}"`);
    const before = await count();
    for (const [fields, says] of [
      [[["name", "muddled"], ["access", "full"], ["scope", "sessions:read"]], "Scopes are ticked"],
      [[["name", "empty"], ["access", "scoped"]], "Tick at least one scope"],
      [[["name", "unknown"], ["access", "scoped"], ["scope", "sessions:delete"]], "sessions:delete"],
      [[["name", "forever"], ["access", "full"], ["expiresInDays", "0"]], "whole number of days"],
    ] as [[string, string][], string][]) {
      const r = await asA.post("/dashboard/sandbox/settings/api-keys", fields);
      expect({ name: fields[0]![1], status: r.status }).toEqual({ name: fields[0]![1], status: 400 });
      expect(await r.text()).toContain(says);
    }
    expect(await count()).toBe(before);

    const created = await asA.post("/dashboard/sandbox/settings/api-keys", [["name", "reports"], ["access", "scoped"], ["scope", "sessions:read"], ["scope", "events:read"], ["expiresInDays", "30"]]);
    expect(created.status).toBe(303);
    const page = await (await asA.follow(created)).text();
    const secret = /id="new-key" class="secret">(sk_test_[A-Za-z0-9]+)</.exec(page)![1]!;
    const row = page.split("<tr>").find((r) => r.includes("<td>reports</td>"))!;
    expect(row).toContain("<code>sessions:read</code>, <code>events:read</code>");
    expect(row).not.toContain("never</td><td><time"); // its expiry is shown, not "never"
    const [stored] = await svc.services.database.sql`select scopes, expires_at from app.api_keys where name = 'reports' and merchant_id = ${a.merchant.id}`;
    expect(stored!.scopes).toEqual(["sessions:read", "events:read"]);
    expect((new Date(stored!.expires_at).getTime() - Date.now()) / 86_400_000).toBeGreaterThan(29.9);
    expect((await svc.call("GET", "/payment-sessions?limit=1", { auth: secret })).status).toBe(200);
    const refused = await svc.call("POST", "/payment-sessions", { auth: secret, body: { amount: "1.00", currency: "USD" } });
    expect({ status: refused.status, code: refused.body.error.code }).toEqual({ status: 403, code: "api_key_scope_missing" });
    // A key left as the form starts has full access and no expiry, as every key before scopes.
    await asA.post("/dashboard/sandbox/settings/api-keys", [["name", "everything"], ["access", "full"], ["expiresInDays", ""]]);
    const listed = await (await asA.get("/dashboard/sandbox/settings/api-keys")).text();
    expect(listed.split("<tr>").find((r) => r.includes("<td>everything</td>"))).toContain("<td>full access</td><td>never</td>");
    // The history says what each key may do.
    const history = await (await asA.get("/dashboard/sandbox/settings/security")).text();
    expect(history).toContain("scopes: [&quot;sessions:read&quot;,&quot;events:read&quot;]");
    expect(history).toContain("scopes: full access");
  });

  test("webhook endpoints: adding and revealing redirect, the secret shown once on the page after; a flash opens for its own session and page only", async () => {
    const added = await asA.post("/dashboard/sandbox/settings/webhooks", { url: "https://93.184.215.14/prg-hooks" });
    expect(added.status).toBe(303);
    expect(added.headers.get("location")).toBe("/dashboard/sandbox/settings/webhooks");
    const flash = added.headers.getSetCookie().find((c) => c.startsWith("ps_flash="))!;
    expect(flash).toContain("HttpOnly");
    expect(flash).toContain("SameSite=Strict");
    expect(flash).not.toContain("whsec_"); // sealed, not the secret in clear
    // Another signed-in session of the same person cannot open it, nor can any page but its own.
    const other = await signIn(svc, "alice@a.example");
    const stolen = await fetch(`${svc.url}/dashboard/sandbox/settings/webhooks`, { headers: { cookie: `${other.cookie}; ${flash.split(";")[0]}` } });
    expect(await stolen.text()).not.toContain("whsec_");
    const elsewhere = await asA.get("/dashboard/sandbox/settings/api-keys");
    expect(await elsewhere.text()).not.toContain("whsec_");
    expect(elsewhere.headers.getSetCookie().some((c) => c.startsWith("ps_flash="))).toBe(false); // still waiting for its page
    const page = await (await asA.follow(added)).text();
    const secret = /id="new-secret"[^>]*>(whsec_[A-Za-z0-9+/=_-]+)</.exec(page)?.[1];
    expect(secret).toMatch(/^whsec_/);
    expect(await (await asA.get("/dashboard/sandbox/settings/webhooks")).text()).not.toContain(secret!);
    const [endpoints] = decodeRows(Count, await svc.services.database.sql`select count(*)::int as n from app.webhook_endpoints where url = 'https://93.184.215.14/prg-hooks'`);
    expect(endpoints!.n).toBe(1);

    const id = /href="\/dashboard\/sandbox\/settings\/webhooks\/(whe_[A-Za-z0-9]+)">https:\/\/93\.184\.215\.14\/prg-hooks</.exec(page)![1]!;
    const revealed = await asA.post(`/dashboard/sandbox/settings/webhooks/${id}/reveal`);
    expect(revealed.status).toBe(303);
    expect(revealed.headers.get("location")).toBe(`/dashboard/sandbox/settings/webhooks/${id}`);
    expect(await (await asA.follow(revealed)).text()).toContain(secret!);
    expect(await (await asA.get(`/dashboard/sandbox/settings/webhooks/${id}`)).text()).not.toContain(secret!);
  });

  test("a form the API would refuse shows the API's own message, and changes nothing", async () => {
    const long = "d".repeat(257);
    const api = await svc.call("POST", "/webhook-endpoints", { auth: a.sandboxKey, body: { url: "https://93.184.215.14/too-long", description: long } });
    expect(api.status).toBe(400);
    const page = await asA.post("/dashboard/sandbox/settings/webhooks", { url: "https://93.184.215.14/too-long", description: long });
    expect(page.status).toBe(400);
    expect(await page.text()).toContain(api.body.error.message); // "description must be at most 256 characters."
    const unknownChain = await svc.call("PUT", "/settlement-addresses/999", { auth: a.sandboxKey, body: { address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" } });
    const onPage = await asA.post("/dashboard/sandbox/settings/settlement/999", { address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", password: TEST_PASSWORD });
    expect(onPage.status).toBe(400);
    expect(await onPage.text()).toContain(unknownChain.body.error.message); // "chainId must be a network enabled for sandbox: …"
    const [made] = decodeRows(Count, await svc.services.database.sql`select count(*)::int as n from app.webhook_endpoints where url = 'https://93.184.215.14/too-long'`);
    expect(made!.n).toBe(0);
  });

  test("settlement: a wrong password or checksum is refused and changes nothing; a right change is recorded", async () => {
    const current = async () => (await svc.services.database.sql`select address from app.merchant_settlements where merchant_id = ${a.merchant.id} and chain_id = 31337`)[0]?.address;
    const good = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
    const typo = "0x70997970C51812dc3A010C7d01b50e0d17dc79c8";
    const before = await current();
    expect(before).not.toBe(good.toLowerCase());
    const wrongPw = await asA.post("/dashboard/sandbox/settings/settlement/31337", { address: good, password: "nope nope nope" });
    expect(wrongPw.status).toBe(403);
    expect(await wrongPw.text()).toContain("Wrong password");
    const badSum = await asA.post("/dashboard/sandbox/settings/settlement/31337", { address: typo, password: TEST_PASSWORD });
    expect(badSum.status).toBe(400);
    expect(await badSum.text()).toContain("checksum is wrong");
    expect(await current()).toBe(before);
    const ok = await asA.post("/dashboard/sandbox/settings/settlement/31337", { address: good, password: TEST_PASSWORD });
    expect(ok.status).toBe(303);
    expect(await current()).toBe(good.toLowerCase());
    const [e] = await svc.services.database.sql`select detail from app.security_events where merchant_id = ${a.merchant.id} and action = 'settlement_address_changed'`;
    expect(e!.detail).toMatchObject({ chainId: 31337, address: good });
    const refused = await svc.services.database.sql`select count(*)::int as n from app.security_events where merchant_id = ${a.merchant.id} and action = 'settlement_address_change_refused'`;
    expect(refused[0]!.n).toBe(1);
  });
});

describe("the settlement API route", () => {
  test("stays, and a change through it is recorded in the security history (with the key) like one in the dashboard", async () => {
    const res = await svc.call("PUT", "/settlement-addresses/31337", { auth: a.sandboxKey, body: { address: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC" } });
    expect(res.status).toBe(200);
    const [e] = await svc.services.database.sql`
      select detail, email from app.security_events where merchant_id = ${a.merchant.id} and action = 'settlement_address_changed' and detail->>'via' = 'api'`;
    expect(e!.detail).toMatchObject({ chainId: 31337, address: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", via: "api" });
    expect(String(e!.detail.keyPrefix)).toStartWith("sk_test_");
    expect(await (await asA.get("/dashboard/sandbox/settings/security")).text()).toContain(`API key ${e!.detail.keyPrefix}…`);
  });
});

describe("sign-up", () => {
  test("is off by default; SERVICE_DASHBOARD_SIGNUP=true makes a merchant and its first user, signed in", async () => {
    expect((await fetch(`${svc.url}/dashboard/sign-up`)).status).toBe(404);
    const open = await startTestService({ SERVICE_WEBHOOK_WORKER: "false", SERVICE_DASHBOARD_SIGNUP: "true" });
    try {
      const form = await fetch(`${open.url}/dashboard/sign-up`);
      expect(form.status).toBe(200);
      const pre = form.headers.getSetCookie().find((c) => c.startsWith("ps_dashboard_pre="))!.split(";")[0]!;
      const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
      const post = (fields: Record<string, string>) =>
        fetch(`${open.url}/dashboard/sign-up`, {
          method: "POST",
          headers: { cookie: pre, "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ _csrf: csrf, ...fields }),
          redirect: "manual",
        });
      expect((await post({ name: "New Shop", email: "new@shop.example", password: "short" })).status).toBe(400);
      const made = await post({ name: "New Shop", email: "new@shop.example", password: "a good long password" });
      expect(made.status).toBe(303);
      expect(made.headers.getSetCookie().some((c) => c.startsWith("ps_dashboard=dsh_"))).toBe(true);
      const [m] = await open.services.database.sql`select m.name from app.dashboard_users u join app.merchants m on m.id = u.merchant_id where u.email = 'new@shop.example'`;
      expect(m!.name).toBe("New Shop");
      expect((await post({ name: "Again", email: "new@shop.example", password: "a good long password" })).status).toBe(409);
    } finally {
      await open.close();
    }
  });
});

describe("reference search", () => {
  test("matches a prefix with % and _ taken literally, on the reference index (text_pattern_ops)", async () => {
    const m = await merchantWithUser(svc, "gil@g.example");
    const make = async (referenceId: string) => (await svc.call("POST", "/payment-sessions", { auth: m.sandboxKey, body: { amount: "1.00", currency: "USD", referenceId } })).body.paymentSessionId as string;
    const pct = await make("50%off-a");
    await make("50xoff-b");
    const under = await make("5_x");
    await make("5ax");
    const me = await signIn(svc, "gil@g.example");
    const idsIn = async (q: string) => [...(await (await me.get(`/dashboard/sandbox/transactions?q=${encodeURIComponent(q)}`)).text()).matchAll(/href="\/dashboard\/sandbox\/transactions\/(ps_[A-Za-z0-9]+)"/g)].map((x) => x[1]);
    expect(await idsIn("50%")).toEqual([pct]);
    expect(await idsIn("5_")).toEqual([under]);
    expect(await idsIn("50%off-a")).toEqual([pct]);
    expect(await idsIn("nothing-like-it")).toEqual([]);
    // The plan: the prefix is an index range on payment_sessions_reference_idx (text_pattern_ops's ~>=~ ~<~).
    const sql = svc.services.database.sql;
    const plan = await sql.begin(async (tx) => {
      await tx`set local enable_seqscan = off`;
      const rows = await tx`explain select id from app.payment_sessions s where s.merchant_id = ${m.merchant.id} and s.environment = 'sandbox' and s.reference_id like ${likePrefix("50%")}`;
      return rows.map((r) => r["QUERY PLAN"]).join("\n");
    });
    expect(plan).toContain("payment_sessions_reference_idx");
    expect(plan).toMatch(/Index Cond:.*\(reference_id ~>=~ '50%'::text\) AND \(reference_id ~<~ '50&'::text\)/);
  });
});

describe("events", () => {
  let m: Awaited<ReturnType<typeof merchantWithUser>>;
  let me: Browser;
  let endpointId: string;
  const sessions: string[] = [];
  let unsent: string;
  const eventOf = async (sessionId: string, reason = "created") =>
    decodeRows(Id, await svc.services.database.sql`select id from app.session_events where session_id = ${sessionId} and reason = ${reason}`)[0]!.id;
  const eventIdsIn = (html: string) => [...html.matchAll(/<li class="card event" id="(evt_[A-Za-z0-9]+)"/g)].map((x) => x[1]);
  const attempt = (eventId: string, i: number, fields: Partial<NewAttempt> = {}): NewAttempt => ({
    id: newId("webhookAttempt"),
    endpointId,
    merchantId: m.merchant.id,
    environment: "sandbox",
    eventId,
    kind: "event",
    attemptNumber: i + 1,
    url: "https://93.184.215.14/fay",
    succeeded: true,
    statusCode: 200,
    latencyMs: 12,
    responseExcerpt: "ok",
    error: null,
    atMs: Date.now() - 3_600_000 + i * 1000,
    ...fields,
  });

  beforeAll(async () => {
    m = await merchantWithUser(svc, "fay@f.example");
    me = await signIn(svc, "fay@f.example");
    // One event from before any endpoint: nothing was sent.
    unsent = (await svc.call("POST", "/payment-sessions", { auth: m.sandboxKey, body: { amount: "9.00", currency: "USD" } })).body.paymentSessionId;
    endpointId = (await svc.call("POST", "/webhook-endpoints", { auth: m.sandboxKey, body: { url: "https://93.184.215.14/fay" } })).body.id;
    for (let i = 0; i < 30; i++) sessions.push((await svc.call("POST", "/payment-sessions", { auth: m.sandboxKey, body: { amount: "1.00", currency: "USD", referenceId: `fay-${i}` } })).body.paymentSessionId);
    await svc.call("POST", `/payment-sessions/${sessions[0]}/cancel`, { auth: m.sandboxKey });
  });

  test("every event, newest first, keyset pages; filters by type, delivery status and session", async () => {
    const all = decodeRows(Id, await svc.services.database.sql`select id from app.session_events where merchant_id = ${m.merchant.id} and environment = 'sandbox' order by created_at desc, id desc`).map((r) => r.id);
    expect(all.length).toBe(32);
    const first = await (await me.get("/dashboard/sandbox/events")).text();
    expect(eventIdsIn(first)).toEqual(all.slice(0, 25));
    expect(first).toContain("payment_session.canceled");
    const older = /href="([^"]*events\?after=[^"]+)"/.exec(first)![1]!.replace(/&amp;/g, "&");
    expect(eventIdsIn(await (await me.get(older)).text())).toEqual(all.slice(25));

    const ids = async (qs: string) => eventIdsIn(await (await me.get(`/dashboard/sandbox/events${qs}`)).text());
    expect(await ids("?type=payment_session.canceled")).toEqual([await eventOf(sessions[0]!, "canceled_by_merchant")]);
    expect(await ids(`?session=${sessions[4]}`)).toEqual([await eventOf(sessions[4]!)]);
    expect(await ids("?status=none")).toEqual([await eventOf(unsent)]);
    await svc.services.database.sql`update app.webhook_deliveries set state = 'failed' where event_id = ${await eventOf(sessions[7]!)}`;
    expect(await ids("?status=failed")).toEqual([await eventOf(sessions[7]!)]);
    expect(await ids(`?status=failed&session=${sessions[8]}`)).toEqual([]);
    expect(await ids(`?type=payment_session.pending&session=${sessions[9]}`)).toEqual([await eventOf(sessions[9]!)]);
  });

  test("bad filters are said on the page, never a 500", async () => {
    const res = await me.get("/dashboard/sandbox/events?type=payment_session.paid&status=lost&session=order-1&after=evt_nope");
    expect(res.status).toBe(200);
    const html = await res.text();
    for (const said of ["Unknown event type", "Unknown delivery status", "must be a payment session id", "page link is not valid"]) expect(html).toContain(said);
    expect(eventIdsIn(html).length).toBe(25);
    const long = await me.get(`/dashboard/sandbox/events?session=${"x".repeat(5000)}&type=%00`);
    expect(long.status).toBe(200);
  });

  test("each event shows its attempts to each endpoint: which, result, time, response excerpt", async () => {
    const evt = await eventOf(sessions[5]!);
    await insertAttempts(svc.services.database.sql, [
      attempt(evt, 0, { succeeded: false, statusCode: 500, responseExcerpt: "upstream exploded" }),
      attempt(evt, 1, { succeeded: false, statusCode: null, error: "timeout after 10s", responseExcerpt: null }),
      attempt(evt, 2, { responseExcerpt: `{"received":true,"note":"${"long ".repeat(40)}"}` }),
    ]);
    const html = await (await me.get(`/dashboard/sandbox/events?session=${sessions[5]}`)).text();
    const rows = [...html.matchAll(/<tr><td class="nowrap">(.*?)<\/tr>/gs)].map((x) => x[1]!);
    expect(rows.length).toBe(3);
    expect(rows[0]).toContain("✓ HTTP 200");
    expect(rows[0]).toContain("<details class=\"excerpt\">"); // a long answer is folded
    expect(rows[1]).toContain("✗ timeout after 10s");
    expect(rows[2]).toContain("✗ HTTP 500");
    expect(rows[2]).toContain("upstream exploded");
    for (const r of rows) expect(r).toContain(`href="/dashboard/sandbox/settings/webhooks/${endpointId}"`);
    // The payment's page names the endpoint of each attempt too.
    const detail = await (await me.get(`/dashboard/sandbox/transactions/${sessions[5]}`)).text();
    expect([...detail.matchAll(/<div class="attempt">.*?<\/div>/g)].every((x) => x[0].includes(`/settings/webhooks/${endpointId}`))).toBe(true);
    expect([...detail.matchAll(/<div class="attempt">/g)].length).toBe(3);
  });

  test("Redeliver: queued (to every enabled endpoint or one), recorded, back to the same filtered page; refused with a message otherwise", async () => {
    const evt = await eventOf(sessions[6]!);
    const unordered = async () => decodeRows(Count, await svc.services.database.sql`select count(*)::int as n from app.webhook_deliveries where event_id = ${evt} and not ordered`)[0]!.n;
    const recorded = async () => decodeRows(Count, await svc.services.database.sql`select count(*)::int as n from app.security_events where merchant_id = ${m.merchant.id} and action = 'webhook_event_redelivered' and detail->>'eventId' = ${evt}`)[0]!.n;
    expect((await me.post(`/dashboard/sandbox/events/${evt}/redeliver`, { type: "payment_session.pending" }, { csrf: null })).status).toBe(403);
    expect(await unordered()).toBe(0);
    const res = await me.post(`/dashboard/sandbox/events/${evt}/redeliver`, { type: "payment_session.pending", status: "bogus", endpoint: "" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/dashboard/sandbox/events?type=payment_session.pending&notice=redelivered");
    expect(await unordered()).toBe(1);
    expect(await recorded()).toBe(1);
    expect(await (await me.get(res.headers.get("location")!)).text()).toContain("The event is queued for delivery again.");
    const one = await me.post(`/dashboard/sandbox/events/${evt}/redeliver`, { endpoint: endpointId });
    expect(one.status).toBe(303);
    expect(await unordered()).toBe(2);
    const wrong = await me.post(`/dashboard/sandbox/events/${evt}/redeliver`, { endpoint: "whe_nope" });
    expect(wrong.status).toBe(404);
    expect(await wrong.text()).toContain("No such webhook endpoint");
    expect(await unordered()).toBe(2);
    expect(await recorded()).toBe(2);
    expect(await (await me.get("/dashboard/sandbox/settings/security")).text()).toContain("Redelivered an event");
    // Another environment's event is not found from here.
    expect((await me.post(`/dashboard/production/events/${evt}/redeliver`, {})).status).toBe(404);
  });

  test("an endpoint's page pages through all of its attempts", async () => {
    const evt = await eventOf(sessions[11]!);
    await insertAttempts(svc.services.database.sql, Array.from({ length: 60 }, (_, i) => attempt(evt, i, { responseExcerpt: `reply-${String(i).padStart(2, "0")}`, atMs: Date.now() - 60_000 + i * 100 })));
    const seen: string[] = [];
    let path: string | undefined = `/dashboard/sandbox/settings/webhooks/${endpointId}`;
    let pages = 0;
    while (path && pages < 10) {
      const html = await (await me.get(path)).text();
      seen.push(...[...html.matchAll(/<code class="excerpt">(reply-\d\d)<\/code>/g)].map((x) => x[1]!));
      path = /href="([^"]*\?after=wha_[A-Za-z0-9]+)#attempts"/.exec(html)?.[1];
      pages++;
    }
    expect(pages).toBe(3); // 60 + the 3 of the test above, 25 a page
    expect(seen).toEqual(Array.from({ length: 60 }, (_, i) => `reply-${String(59 - i).padStart(2, "0")}`));
    const bad = await me.get(`/dashboard/sandbox/settings/webhooks/${endpointId}?after=nope`);
    expect(bad.status).toBe(200);
    expect(await bad.text()).toContain("page link is not valid");
  });
});

describe("cancel from the dashboard", () => {
  let m: Awaited<ReturnType<typeof merchantWithUser>>;
  let me: Browser;
  beforeAll(async () => {
    m = await merchantWithUser(svc, "hal@h.example");
    me = await signIn(svc, "hal@h.example");
  });
  const status = async (id: string, key = m.sandboxKey) => (await svc.call("GET", `/payment-sessions/${id}`, { auth: key })).body;
  const cancels = async () =>
    await svc.services.database.sql`select email, environment, detail, created_at from app.security_events where merchant_id = ${m.merchant.id} and action = 'payment_session_canceled' order by created_at`;

  test("behind a confirmation step; the cancel and its security-history line commit together; refused once it is not PENDING", async () => {
    const id = (await svc.call("POST", "/payment-sessions", { auth: m.sandboxKey, body: { amount: "5.00", currency: "USD", referenceId: "hal-1" } })).body.paymentSessionId as string;
    const page = await (await me.get(`/dashboard/sandbox/transactions/${id}`)).text();
    expect(page).toContain(`href="/dashboard/sandbox/transactions/${id}/cancel"`);
    const confirm = await (await me.get(`/dashboard/sandbox/transactions/${id}/cancel`)).text();
    expect(confirm).toContain("Cancel this payment?");
    expect(confirm).toContain(`action="/dashboard/sandbox/transactions/${id}/cancel"`);
    expect(confirm).not.toMatch(/data-confirm|<script(?![^>]*\bsrc=)/);
    // Without the form's token nothing happens.
    expect((await me.post(`/dashboard/sandbox/transactions/${id}/cancel`, {}, { csrf: null })).status).toBe(403);
    expect((await status(id)).status).toBe("PENDING");

    const res = await me.post(`/dashboard/sandbox/transactions/${id}/cancel`);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/dashboard/sandbox/transactions/${id}?notice=canceled`);
    expect(await (await me.get(res.headers.get("location")!)).text()).toContain("The payment is canceled");
    expect(await status(id)).toMatchObject({ status: "CANCELED", statusReason: "canceled_by_merchant" });
    const [line] = await cancels();
    expect(line).toMatchObject({ email: "hal@h.example", environment: "sandbox", detail: { paymentSessionId: id } });
    // One transaction: the line carries the very now() of the cancel's event.
    const [evt] = await svc.services.database.sql`select created_at from app.session_events where session_id = ${id} and reason = 'canceled_by_merchant'`;
    expect(new Date(line!.created_at).getTime()).toBe(new Date(evt!.created_at).getTime());
    expect(await (await me.get("/dashboard/sandbox/settings/security")).text()).toContain("Canceled a payment");

    // Again: refused with the reason, nothing recorded.
    const again = await me.post(`/dashboard/sandbox/transactions/${id}/cancel`);
    expect(again.status).toBe(409);
    expect(await again.text()).toContain("The payment session is CANCELED; only a PENDING session can be canceled.");
    const confirmAgain = await (await me.get(`/dashboard/sandbox/transactions/${id}/cancel`)).text();
    expect(confirmAgain).toContain("only a payment still waiting for its payer (PENDING) can be canceled");
    expect(confirmAgain).not.toContain(`action="/dashboard/sandbox/transactions/${id}/cancel"`);
    expect((await cancels()).length).toBe(1);

    // Canceled with an API key: the API's business, not a person's act; not in the security history.
    const byKey = (await svc.call("POST", "/payment-sessions", { auth: m.sandboxKey, body: { amount: "5.00", currency: "USD" } })).body.paymentSessionId;
    expect((await svc.call("POST", `/payment-sessions/${byKey}/cancel`, { auth: m.sandboxKey })).status).toBe(200);
    expect((await cancels()).length).toBe(1);
    // Unknown or malformed ids: 404.
    expect((await me.post("/dashboard/sandbox/transactions/ps_nope/cancel")).status).toBe(404);
    expect((await me.get("/dashboard/sandbox/transactions/ps_nope/cancel")).status).toBe(404);
  });

  test("works in production", async () => {
    const id = (await svc.call("POST", "/payment-sessions", { auth: m.liveKey, body: { amount: "7.00", currency: "USD" } })).body.paymentSessionId as string;
    expect(await (await me.get(`/dashboard/production/transactions/${id}/cancel`)).text()).toContain("this is a production payment");
    expect((await me.post(`/dashboard/sandbox/transactions/${id}/cancel`)).status).toBe(404); // not a sandbox session
    const res = await me.post(`/dashboard/production/transactions/${id}/cancel`);
    expect(res.status).toBe(303);
    expect((await status(id, m.liveKey)).status).toBe("CANCELED");
    expect((await cancels()).at(-1)).toMatchObject({ environment: "production", detail: { paymentSessionId: id } });
  });
});
