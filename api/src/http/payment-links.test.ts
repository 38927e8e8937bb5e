/**
 * Payment links end to end over HTTP (docs/payment-links.md): the API (create, list, retrieve,
 * deactivate, bad input), and the public page as a browser without script uses it — plain
 * fetch of the HTML, then its form posted — down to the session it starts, its limits and the
 * return from the checkout.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { transitionSession } from "../sessions/repository.ts";

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ SERVICE_PAYMENT_LINK_STARTS_PER_HOUR: "1000" });
});
afterAll(async () => {
  await svc.close();
});

const create = (key: string, body: unknown, headers: Record<string, string> = {}) => svc.call("POST", "/payment-links", { auth: key, body, headers });

/** The page as a browser without script sees it: the HTML, and its form's hidden visit token. */
async function openPage(id: string) {
  const res = await fetch(`${svc.url}/pay/${id}`);
  const html = await res.text();
  const visit = /name="visit" value="([^"]+)"/.exec(html)?.[1];
  return { res, html, visit };
}

/** The form posted as the browser posts it (same origin), not following the redirect. */
function submit(id: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return fetch(`${svc.url}/pay/${id}`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: new URL(svc.url).origin, "sec-fetch-site": "same-origin", ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}

test("create, retrieve, list and deactivate a link; its view says what it is", async () => {
  const m = await svc.merchant("Freelance Studio");
  const made = await create(m.sandboxKey, { amount: "25.00", description: "Logo design", maxUses: 3, metadata: { invoice: "114" } });
  expect(made.status).toBe(201);
  expect(made.body).toMatchObject({
    status: "active",
    amount: "25.00",
    minAmount: null,
    maxAmount: null,
    currency: "USD",
    description: "Logo design",
    maxUses: 3,
    uses: 0,
    expiresAt: null,
    redirectUrl: null,
    metadata: { invoice: "114" },
    environment: "sandbox",
    deactivatedAt: null,
  });
  const id: string = made.body.paymentLinkId;
  expect(id).toMatch(/^plink_[0-9A-Za-z]{24}$/);
  expect(made.body.url).toBe(new URL(`pay/${id}`, svc.config.sandboxPublicUrl).toString());
  expect((await svc.call("GET", `/payment-links/${id}`, { auth: m.sandboxKey })).body).toEqual(made.body);
  // Another environment or merchant sees nothing.
  expect((await svc.call("GET", `/payment-links/${id}`, { auth: m.liveKey })).status).toBe(404);
  const other = await svc.merchant("Other");
  expect((await svc.call("GET", `/payment-links/${id}`, { auth: other.sandboxKey })).body.error.code).toBe("resource_not_found");

  const second = await create(m.sandboxKey, { minAmount: "5.00", maxAmount: "500.00", description: "Tip jar" });
  expect(second.body).toMatchObject({ amount: null, minAmount: "5.00", maxAmount: "500.00", maxUses: null });
  const page1 = await svc.call("GET", "/payment-links?limit=1", { auth: m.sandboxKey });
  expect(page1.body.data.map((l: { paymentLinkId: string }) => l.paymentLinkId)).toEqual([second.body.paymentLinkId]);
  expect(page1.body).toMatchObject({ hasMore: true, nextCursor: second.body.paymentLinkId });
  const page2 = await svc.call("GET", `/payment-links?limit=1&startingAfter=${page1.body.nextCursor}`, { auth: m.sandboxKey });
  expect(page2.body).toMatchObject({ data: [{ paymentLinkId: id }], hasMore: false, nextCursor: null });
  expect((await svc.call("GET", "/payment-links?startingAfter=plink_nope", { auth: m.sandboxKey })).body.error.param).toBe("startingAfter");

  const off = await svc.call("POST", `/payment-links/${id}/deactivate`, { auth: m.sandboxKey, body: {} });
  expect(off.status).toBe(200);
  expect(off.body.status).toBe("inactive");
  expect(off.body.deactivatedAt).not.toBeNull();
  const again = await svc.call("POST", `/payment-links/${id}/deactivate`, { auth: m.sandboxKey, body: {} });
  expect(again.body.deactivatedAt).toBe(off.body.deactivatedAt);
  expect((await svc.call("POST", `/payment-links/plink_000000000000000000000000/deactivate`, { auth: m.sandboxKey, body: {} })).status).toBe(404);
});

test("an Idempotency-Key replays the first create; another body under it is 422", async () => {
  const m = await svc.merchant();
  const body = { amount: "10.00", description: "Once" };
  const a = await create(m.sandboxKey, body, { "idempotency-key": "link-1" });
  const b = await create(m.sandboxKey, body, { "idempotency-key": "link-1" });
  expect(b.status).toBe(201);
  expect(b.headers.get("idempotent-replayed")).toBe("true");
  expect(b.body).toEqual(a.body);
  expect((await create(m.sandboxKey, { ...body, amount: "11.00" }, { "idempotency-key": "link-1" })).body.error.code).toBe("idempotency_key_reused");
  expect((await svc.call("GET", "/payment-links", { auth: m.sandboxKey })).body.data.length).toBe(1);
});

test("bad input is a 4xx naming the parameter, and makes no link", async () => {
  const m = await svc.merchant();
  const future = new Date(Date.now() + 86_400_000).toISOString();
  const cases: [unknown, number, string, string][] = [
    [{ description: "x" }, 400, "parameter_missing", "amount"],
    [{ amount: "10", description: "x" }, 400, "amount_invalid", "amount"],
    [{ amount: "0.10", description: "x" }, 400, "amount_too_small", "amount"],
    [{ amount: "99999999.00", description: "x" }, 400, "amount_too_large", "amount"],
    [{ amount: "10.00", minAmount: "1.00", description: "x" }, 400, "parameter_invalid", "minAmount"],
    [{ minAmount: "5.00", description: "x" }, 400, "parameter_missing", "maxAmount"],
    [{ minAmount: "50.00", maxAmount: "5.00", description: "x" }, 400, "parameter_invalid", "maxAmount"],
    [{ amount: "10.00" }, 400, "parameter_missing", "description"],
    [{ amount: "10.00", description: "   " }, 400, "parameter_invalid", "description"],
    [{ amount: "10.00", description: "x", maxUses: 0 }, 400, "parameter_invalid", "maxUses"],
    [{ amount: "10.00", description: "x", maxUses: 1.5 }, 400, "parameter_invalid", "maxUses"],
    [{ amount: "10.00", description: "x", expiresAt: "tomorrow" }, 400, "parameter_invalid", "expiresAt"],
    [{ amount: "10.00", description: "x", expiresAt: new Date(Date.now() - 1000).toISOString() }, 400, "parameter_invalid", "expiresAt"],
    [{ amount: "10.00", description: "x", redirectUrl: "http://example.com/thanks" }, 400, "redirect_url_invalid", "redirectUrl"],
    [{ amount: "10.00", description: "x", redirectUrl: "https://user:pw@example.com/" }, 400, "redirect_url_invalid", "redirectUrl"],
    [{ amount: "10.00", description: "x", redirectUrl: "javascript:alert(1)" }, 400, "redirect_url_invalid", "redirectUrl"],
    [{ amount: "10.00", description: "x", currency: "EUR" }, 400, "currency_unsupported", "currency"],
    [{ amount: "10.00", description: "x", extra: true }, 400, "parameter_unknown", "extra"],
  ];
  for (const [body, status, code, param] of cases) {
    const r = await create(m.sandboxKey, body);
    expect({ body, status: r.status, code: r.body.error?.code, param: r.body.error?.param }).toEqual({ body, status, code, param });
  }
  // http on this machine is for the sandbox only.
  expect((await create(m.liveKey, { amount: "10.00", description: "x", redirectUrl: "http://localhost:3000/thanks" })).body.error.code).toBe("redirect_url_invalid");
  expect((await create(m.sandboxKey, { amount: "10.00", description: "x", redirectUrl: "http://localhost:3000/thanks", expiresAt: future })).status).toBe(201);
  expect((await svc.call("GET", "/payment-links", { auth: m.sandboxKey })).body.data.length).toBe(1);
});

test("the page works without script: the HTML shows the link, its form starts a session through the checkout, and the session carries the link", async () => {
  const m = await svc.merchant("Ada's <Bakery>");
  const made = await create(m.sandboxKey, { amount: "12.50", description: "Birthday cake", metadata: { order: "cake-7" } });
  const id = made.body.paymentLinkId;
  const { res, html, visit } = await openPage(id);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
  expect(res.headers.get("content-security-policy")).not.toContain("script-src");
  expect(res.headers.get("x-frame-options")).toBe("DENY");
  expect(html).toContain("Ada&#39;s &lt;Bakery&gt;");
  expect(html).toContain("Birthday cake");
  expect(html).toContain("12.50");
  expect(html).toContain("<svg viewBox=");
  expect(html).not.toContain("<script");
  expect(visit).toMatch(/^[0-9A-Za-z]{40}$/);

  const go = await submit(id, { visit: visit! });
  expect(go.status).toBe(303);
  const location = go.headers.get("location")!;
  expect(location.startsWith("/checkout/v1/#")).toBe(true);
  const f = new URLSearchParams(location.split("#")[1]);
  expect(f.get("returnUrl")).toBe(`/pay/${id}/done/${f.get("paymentSessionId")}`);
  // The token is the session's: the payer's API answers with it.
  const payer = await svc.call("GET", "/api/payment-sessions", { auth: f.get("paymentSessionToken")! });
  expect(payer.body).toMatchObject({ paymentSessionId: f.get("paymentSessionId"), amount: "12.50", merchantName: "Ada's <Bakery>" });
  const session = await svc.call("GET", `/payment-sessions/${f.get("paymentSessionId")}`, { auth: m.sandboxKey });
  expect(session.body).toMatchObject({ amount: "12.50", paymentLinkId: id, metadata: { order: "cake-7" }, referenceId: null });
  expect(f.get("merchantId")).toBe(session.body.merchantId);
  // The same form sent twice (a double click) is the same session, not a second one.
  const twice = await submit(id, { visit: visit! });
  expect(new URLSearchParams(twice.headers.get("location")!.split("#")[1]).get("paymentSessionId")).toBe(f.get("paymentSessionId"));
  expect((await svc.call("GET", `/payment-links/${id}`, { auth: m.sandboxKey })).body.uses).toBe(1);
  // The API lists a link's sessions.
  const listed = await svc.call("GET", `/payment-sessions?paymentLinkId=${id}`, { auth: m.sandboxKey });
  expect(listed.body.data.map((x: { paymentSessionId: string }) => x.paymentSessionId)).toEqual([f.get("paymentSessionId")]);
  expect((await svc.call("GET", "/payment-sessions?paymentLinkId=nope", { auth: m.sandboxKey })).body.error.param).toBe("paymentLinkId");
  // Its webhook event carries the link too.
  const events = await svc.call("GET", `/events?paymentSessionId=${f.get("paymentSessionId")}`, { auth: m.sandboxKey });
  expect(events.body.data[0]?.data?.paymentLinkId).toBe(id);
});

test("a payer-chosen amount: within the bounds starts a session of it, outside is refused with a message and starts nothing", async () => {
  const m = await svc.merchant();
  const id = (await create(m.sandboxKey, { minAmount: "5.00", maxAmount: "50.00", description: "Pay what you like" })).body.paymentLinkId;
  const { html, visit } = await openPage(id);
  expect(html).toContain('name="amount"');
  const before = await svc.count("payment_sessions");
  for (const [amount, says] of [
    ["4.99", "at least 5.00"],
    ["50.01", "at most 50.00"],
    ["lots", "from 5.00 to 50.00"],
    ["", "Enter an amount"],
  ] as const) {
    const r = await submit(id, { visit: visit!, amount });
    expect(r.status).toBe(422);
    const body = await r.text();
    expect(body).toContain(says);
    expect(body).toContain('aria-invalid="true"');
  }
  expect(await svc.count("payment_sessions")).toBe(before);
  const ok = await submit(id, { visit: visit!, amount: "20" });
  expect(ok.status).toBe(303);
  const sid = new URLSearchParams(ok.headers.get("location")!.split("#")[1]).get("paymentSessionId");
  expect((await svc.call("GET", `/payment-sessions/${sid}`, { auth: m.sandboxKey })).body.amount).toBe("20.00");
});

test("a deactivated, expired or used-up link shows a clear page and starts no session", async () => {
  const m = await svc.merchant();
  const off = (await create(m.sandboxKey, { amount: "3.00", description: "Off" })).body.paymentLinkId;
  await svc.call("POST", `/payment-links/${off}/deactivate`, { auth: m.sandboxKey, body: {} });
  const soon = (await create(m.sandboxKey, { amount: "3.00", description: "Soon gone", expiresAt: new Date(Date.now() + 120_000).toISOString() })).body.paymentLinkId;
  await svc.services.database.sql`update app.payment_links set expires_at = now() - interval '1 second' where id = ${soon}`;
  const once = (await create(m.sandboxKey, { amount: "3.00", description: "Once", maxUses: 1 })).body.paymentLinkId;
  const first = await openPage(once);
  expect((await submit(once, { visit: first.visit! })).status).toBe(303);

  const before = await svc.count("payment_sessions");
  for (const [id, says] of [
    [off, "no longer active"],
    [soon, "has expired"],
    [once, "has been used"],
  ] as const) {
    const page = await openPage(id);
    expect(page.res.status).toBe(410);
    expect(page.html).toContain(says);
    expect(page.visit).toBeUndefined();
    const post = await submit(id, { visit: "x".repeat(40) });
    expect(post.status).toBe(410);
    expect(await post.text()).toContain(says);
  }
  expect(await svc.count("payment_sessions")).toBe(before);
  expect((await svc.call("GET", `/payment-links/${once}`, { auth: m.sandboxKey })).body).toMatchObject({ status: "used_up", uses: 1 });
  // An unpaid session that ends CANCELED gives its use back.
  const [s] = await svc.services.database.sql`select id from app.payment_sessions where payment_link_id = ${once}`;
  await transitionSession(svc.services.database.sql, { sessionId: s!.id, from: ["PENDING"], to: "CANCELED", reason: "expired" });
  expect((await openPage(once)).res.status).toBe(200);
});

test("N visits at once of a maxUses=1 link start one session", async () => {
  const m = await svc.merchant();
  const id = (await create(m.sandboxKey, { amount: "7.00", description: "One only", maxUses: 1 })).body.paymentLinkId;
  const visits = await Promise.all(Array.from({ length: 10 }, () => openPage(id)));
  const answers = await Promise.all(visits.map((v) => submit(id, { visit: v.visit! })));
  expect(answers.map((a) => a.status).sort()).toEqual([303, ...Array(9).fill(410)]);
  const rows = await svc.services.database.sql`select count(*)::int as n from app.payment_sessions where payment_link_id = ${id}`;
  expect(rows[0]!.n).toBe(1);
});

test("a visit from another site is refused; the return page redirects a paid session to redirectUrl, else shows where it stands", async () => {
  const m = await svc.merchant();
  const id = (await create(m.sandboxKey, { amount: "9.00", description: "Course", redirectUrl: "http://localhost:3000/thanks?x=1" })).body.paymentLinkId;
  const { visit } = await openPage(id);
  expect((await submit(id, { visit: visit! }, { origin: "https://evil.example", "sec-fetch-site": "cross-site" })).status).toBe(403);
  const go = await submit(id, { visit: visit! });
  const sid = new URLSearchParams(go.headers.get("location")!.split("#")[1]).get("paymentSessionId")!;
  const pending = await fetch(`${svc.url}/pay/${id}/done/${sid}`, { redirect: "manual" });
  expect(pending.status).toBe(200);
  expect(await pending.text()).toContain("Waiting for your payment");
  await transitionSession(svc.services.database.sql, { sessionId: sid, from: ["PENDING"], to: "SUCCEEDED", reason: "swept" });
  const paid = await fetch(`${svc.url}/pay/${id}/done/${sid}`, { redirect: "manual" });
  expect(paid.status).toBe(303);
  expect(paid.headers.get("location")).toBe(`http://localhost:3000/thanks?x=1&paymentSessionId=${sid}`);
  // Without a redirectUrl: a receipt.
  const plain = (await create(m.sandboxKey, { amount: "9.00", description: "Course" })).body.paymentLinkId;
  const go2 = await submit(plain, { visit: (await openPage(plain)).visit! });
  const sid2 = new URLSearchParams(go2.headers.get("location")!.split("#")[1]).get("paymentSessionId")!;
  await transitionSession(svc.services.database.sql, { sessionId: sid2, from: ["PENDING"], to: "SUCCEEDED", reason: "swept" });
  const receipt = await fetch(`${svc.url}/pay/${plain}/done/${sid2}`);
  expect(await receipt.text()).toContain("Payment received");
  // A session of another link is not this link's receipt.
  expect((await fetch(`${svc.url}/pay/${plain}/done/${sid}`)).status).toBe(404);
  expect((await fetch(`${svc.url}/pay/plink_000000000000000000000000`)).status).toBe(404);
});

test("visits are counted per client address in a shared bucket: past SERVICE_PAYMENT_LINK_STARTS_PER_HOUR the page answers 429 and starts nothing", async () => {
  const small = await startTestService({ SERVICE_PAYMENT_LINK_STARTS_PER_HOUR: "3" });
  try {
    const m = await small.merchant();
    const id = (await small.call("POST", "/payment-links", { auth: m.sandboxKey, body: { minAmount: "5.00", maxAmount: "9.00", description: "Limited" } })).body.paymentLinkId;
    const post = (amount: string) =>
      fetch(`${small.url}/pay/${id}`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
        body: new URLSearchParams({ amount }).toString(),
      });
    // Refused amounts count too: the bucket is taken before the form is read.
    expect((await post("1.00")).status).toBe(422);
    expect((await post("6.00")).status).toBe(303);
    expect((await post("7.00")).status).toBe(303);
    const limited = await post("8.00");
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited.headers.get("x-frame-options")).toBe("DENY");
    expect(await limited.text()).toContain("Too many payments started");
    expect(await small.count("payment_sessions")).toBe(2);
  } finally {
    await small.close();
  }
});

test("a production link of a merchant without a settlement address: the page says payments are not available, and starts nothing", async () => {
  const m = await svc.merchant("Unsettled");
  const id = (await create(m.liveKey, { amount: "5.00", description: "Live" })).body.paymentLinkId;
  await svc.services.database.sql`delete from app.merchant_settlements where merchant_id = ${m.merchant.id} and environment = 'production'`;
  const { visit } = await openPage(id);
  const r = await submit(id, { visit: visit! });
  expect(r.status).toBe(503);
  expect(await r.text()).toContain("cannot take payments here right now");
  const rows = await svc.services.database.sql`select count(*)::int as n from app.payment_sessions where payment_link_id = ${id}`;
  expect(rows[0]!.n).toBe(0);
});

test("two base addresses: a sandbox link's page opened on the production host sends the payer to the sandbox base's checkout, which its CSP allows", async () => {
  const two = await startTestService({ SERVICE_PUBLIC_URL: "http://live.example", SERVICE_SANDBOX_PUBLIC_URL: "http://sandbox.example" });
  try {
    const m = await two.merchant();
    const made = await two.call("POST", "/payment-links", { auth: m.sandboxKey, body: { amount: "5.00", description: "Two hosts" }, headers: { host: "sandbox.example" } });
    expect(made.body.url).toBe(`http://sandbox.example/pay/${made.body.paymentLinkId}`);
    const page = await fetch(`${two.url}/pay/${made.body.paymentLinkId}`, { headers: { host: "live.example" } });
    expect(page.headers.get("content-security-policy")).toContain("form-action 'self' http://live.example http://sandbox.example");
    const post = (host: string) =>
      fetch(`${two.url}/pay/${made.body.paymentLinkId}`, {
        method: "POST",
        redirect: "manual",
        headers: { host, "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
        body: "",
      });
    expect((await post("live.example")).headers.get("location")).toStartWith("http://sandbox.example/checkout/v1/#");
    expect((await post("sandbox.example")).headers.get("location")).toStartWith("/checkout/v1/#");
  } finally {
    await two.close();
  }
});
