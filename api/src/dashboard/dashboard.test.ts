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

let svc: TestService;
let a: Awaited<ReturnType<typeof merchantWithUser>>;
let b: Awaited<ReturnType<typeof merchantWithUser>>;
let asA: Browser;
const bOwn: { sessionId: string; endpointId: string; keyId: string; eventId: string } = {} as never;

/** Dashboard routes anyone may reach (the pages of signing in, the assets). */
const PUBLIC = new Set(["GET /dashboard", "GET /dashboard/assets/:file", "GET /dashboard/sign-in", "POST /dashboard/sign-in", "GET /dashboard/sign-up", "POST /dashboard/sign-up"]);

function fill(path: string): string {
  return path
    .replace(":env", "sandbox")
    .replace(/\/transactions\/:id/, `/transactions/${bOwn.sessionId}`)
    .replace(":eventId", bOwn.eventId)
    .replace(":tool", "pay")
    .replace(":keyId", bOwn.keyId)
    .replace(/\/webhooks\/:id/, `/webhooks/${bOwn.endpointId}`)
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
    const [u] = await svc.services.database.sql`select id from app.dashboard_users where email = 'dave@d.example'`;
    await changePassword(svc.services.database.db, u!.id as string, "a brand new password");
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
      expect({ key, server: res.status < 500 }).toEqual({ key, server: true });
      for (const id of [bOwn.sessionId, bOwn.endpointId, bOwn.keyId, bOwn.eventId, "bob-order", b.merchant.sandboxPublicId]) {
        expect({ key, leaked: text.includes(id) && !path.includes(id) ? id : null }).toEqual({ key, leaked: null });
      }
      if (/:id|:keyId|:eventId/.test(r.path)) expect({ key, status: res.status }).toEqual({ key, status: 404 });
    }
    // B's things are as they were.
    expect((await svc.call("GET", `/payment-sessions/${bOwn.sessionId}`, { auth: b.sandboxKey })).body.status).toBe("PENDING");
    expect((await svc.call("GET", `/webhook-endpoints/${bOwn.endpointId}`, { auth: b.sandboxKey })).status).toBe(200);
    expect((await svc.call("GET", "/payment-sessions?limit=1", { auth: b.sandboxKey })).status).toBe(200);
    const [bs] = await svc.services.database.sql`select count(*)::int as n from app.merchant_settlements where merchant_id = ${b.merchant.id} and chain_id = 31337`;
    expect(bs!.n).toBe(0);
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
    expect(idsIn(await page(`?q=${ids[12]}`))).toEqual([ids[12]]);
    const dep = (await svc.call("GET", `/payment-sessions/${ids[20]}`, { auth: m.sandboxKey })).body.networks[0].depositAddress;
    expect(idsIn(await page(`?q=${dep}`))).toEqual([ids[20]]);
    expect(idsIn(await page("?status=CANCELED"))).toEqual([ids[3]]);
    expect(idsIn(await page("?status=SUCCEEDED"))).toEqual([]);
    expect(await page("?from=not-a-date")).toContain("must be a date");
    const csv = await (await me.get("/dashboard/sandbox/transactions.csv?status=CANCELED")).text();
    expect(csv.trim().split("\n")).toEqual(["session_id,status,status_reason,amount,currency,network_chain_id,reference_id,created_at", expect.stringContaining(`${ids[3]},CANCELED,canceled_by_merchant,4.00,USD,,order-3,`)]);
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
    const [{ n }] = (await svc.services.database.sql`select count(*)::int as n from app.webhook_endpoints where url = 'https://93.184.215.14/prg-hooks'`) as unknown as [{ n: number }];
    expect(n).toBe(1);

    const id = /href="\/dashboard\/sandbox\/settings\/webhooks\/(whe_[A-Za-z0-9]+)">https:\/\/93\.184\.215\.14\/prg-hooks</.exec(page)![1]!;
    const revealed = await asA.post(`/dashboard/sandbox/settings/webhooks/${id}/reveal`);
    expect(revealed.status).toBe(303);
    expect(revealed.headers.get("location")).toBe(`/dashboard/sandbox/settings/webhooks/${id}`);
    expect(await (await asA.follow(revealed)).text()).toContain(secret!);
    expect(await (await asA.get(`/dashboard/sandbox/settings/webhooks/${id}`)).text()).not.toContain(secret!);
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
