/**
 * Refund events (`refund.*`, app.refund_events) on the dashboard's Events page, over HTTP against
 * a real service and Postgres: listed with the session events in one order (the read model GET
 * /events uses, webhooks/refund-events.ts), with their deliveries; filtered by type, delivery and
 * session; paged with a refund event as the cursor; redelivered from the page (a delivery outside
 * the session's order). Another merchant's refund events are never shown nor redelivered.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { merchantWithUser, signIn, type Browser } from "../../../testing/dashboard.ts";

let svc: TestService;
let a: Awaited<ReturnType<typeof merchantWithUser>>;
let b: Awaited<ReturnType<typeof merchantWithUser>>;
let asA: Browser;
let n = 0;

beforeAll(async () => {
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false" });
  a = await merchantWithUser(svc, "eve@e.example");
  b = await merchantWithUser(svc, "max@m.example");
  asA = await signIn(svc, "eve@e.example");
  for (const m of [a, b]) expect((await svc.call("POST", "/webhook-endpoints", { auth: m.sandboxKey, body: { url: "https://93.184.215.14/hook" } })).status).toBe(201);
}, 60_000);
afterAll(() => svc.close());

const sql = () => svc.services.database.sql;

async function refunded(key: string): Promise<{ sessionId: string; refundId: string }> {
  const s = await svc.call("POST", "/payment-sessions", { auth: key, body: { amount: "5.00", currency: "USD" } });
  const sessionId = s.body.paymentSessionId as string;
  await sql()`
    insert into app.session_funds (session_id, chain_id, direction, tx_hash, log_index, amount, block_timestamp)
    select ${sessionId}, chain_id, 'in', ${`0x${(0xe0e000 + ++n).toString(16).padStart(64, "0")}`}, 0, 5000000, now()
      from app.session_deposits where session_id = ${sessionId} order by chain_id limit 1`;
  const r = await svc.call("POST", `/payment-sessions/${sessionId}/refunds`, { auth: key, body: { amount: "1.00", reason: "duplicate" } });
  expect(r.status).toBe(201);
  return { sessionId, refundId: r.body.refundId as string };
}
const eventIdsOf = async (key: string, query: string) => ((await svc.call("GET", `/events?${query}`, { auth: key })).body.data as { id: string }[]).map((e) => e.id);
const listed = (page: string) => [...page.matchAll(/<li class="card event" id="(evt_[A-Za-z0-9]+)"/g)].map((m) => m[1]);
const page = async (qs = "") => {
  const res = await asA.get(`/dashboard/sandbox/events${qs}`);
  return { status: res.status, text: await res.text() };
};

test("refund events are listed with the session's, in the API's order, with type, refund, state and deliveries; filters by type, delivery and session", async () => {
  const { sessionId, refundId } = await refunded(a.sandboxKey);
  await svc.call("POST", `/refunds/${refundId}/cancel`, { auth: a.sandboxKey });
  const api = await eventIdsOf(a.sandboxKey, `paymentSessionId=${sessionId}`);
  expect(api.length).toBe(3); // payment_session.created, refund.created, refund.canceled
  const bySession = await page(`?session=${sessionId}`);
  expect(listed(bySession.text)).toEqual(api);
  const [canceledId, createdId] = api;
  const item = new RegExp(`<li class="card event" id="${createdId}">([\\s\\S]*?)</li>`).exec(bySession.text)![1]!;
  expect(item).toContain('<code class="type">refund.created</code>');
  expect(item).toContain("PENDING");
  expect(item).toContain(`refund <a href="/dashboard/sandbox/transactions/${sessionId}#${refundId}" class="mono">${refundId}</a>`);
  expect(item).toContain("1.00 USD");
  // Ordered behind its session's earlier event, which no worker sends here.
  expect(item).toMatch(/hook<\/a>: <strong>waiting<\/strong> <span class="muted">for this session/);
  expect(new RegExp(`<li class="card event" id="${canceledId}">[\\s\\S]*?refund\\.canceled`).test(bySession.text)).toBe(true);

  // The type filter offers the refund types and lists only those.
  const all = await page();
  expect(all.text).toContain('<option value="refund.created">refund.created</option>');
  expect(listed((await page("?type=refund.canceled")).text)).toEqual(await eventIdsOf(a.sandboxKey, "type=refund.canceled"));
  expect(listed((await page(`?type=refund.created&session=${sessionId}`)).text)).toEqual([createdId]);
  expect((await page("?type=refund.created")).text).not.toContain("payment_session.created");
  // Delivery: queued (pending) holds refund events too; delivered holds none here (no worker).
  expect(listed((await page(`?status=pending&session=${sessionId}`)).text)).toEqual(api);
  expect(listed((await page(`?status=delivered&session=${sessionId}`)).text)).toEqual([]);
});

test("paging goes through refund events: a refund event is a valid cursor, each event once", async () => {
  for (let i = 0; i < 13; i++) await refunded(a.sandboxKey);
  const api: string[] = [];
  let cursor: string | undefined;
  for (;;) {
    const p = (await svc.call("GET", `/events?limit=100${cursor ? `&startingAfter=${cursor}` : ""}`, { auth: a.sandboxKey })).body;
    api.push(...(p.data as { id: string }[]).map((e) => e.id));
    if (!p.hasMore) break;
    cursor = p.nextCursor;
  }
  const seen: string[] = [];
  let qs = "";
  for (let i = 0; i < 10; i++) {
    const p = await page(qs);
    expect(p.text).not.toContain("That page link is not valid");
    seen.push(...listed(p.text).map((x) => x!));
    const next = /href="\/dashboard\/sandbox\/events(\?[^"]*after=[^"]+)" rel="next"/.exec(p.text)?.[1];
    if (!next) break;
    qs = next.replace(/&amp;/g, "&");
  }
  expect(seen).toEqual(api);
  expect(seen.length).toBeGreaterThan(25);
});

test("Redeliver a refund event from the page: a delivery outside the session's order, recorded; another merchant's is 404 and unchanged", async () => {
  const { sessionId } = await refunded(a.sandboxKey);
  const [created] = await eventIdsOf(a.sandboxKey, `paymentSessionId=${sessionId}&type=refund.created`);
  const count = async (id: string) => (await sql()`select count(*)::int as n, count(*) filter (where not ordered)::int as extra from app.webhook_deliveries where refund_event_id = ${id}`)[0]!;
  expect(await count(created!)).toEqual({ n: 1, extra: 0 });
  expect((await asA.post(`/dashboard/sandbox/events/${created}/redeliver`, {}, { csrf: null })).status).toBe(403);
  const res = await asA.post(`/dashboard/sandbox/events/${created}/redeliver`, { session: sessionId });
  expect(res.status).toBe(303);
  expect(res.headers.get("location")).toBe(`/dashboard/sandbox/events?session=${sessionId}&notice=redelivered`);
  expect(await count(created!)).toEqual({ n: 2, extra: 1 });
  const line = await sql()`select detail from app.security_events where merchant_id = ${a.merchant.id} and action = 'webhook_event_redelivered' order by created_at desc limit 1`;
  expect(line[0]!.detail.eventId).toBe(created);

  const theirs = await refunded(b.sandboxKey);
  const [their] = await eventIdsOf(b.sandboxKey, `paymentSessionId=${theirs.sessionId}&type=refund.created`);
  expect((await asA.post(`/dashboard/sandbox/events/${their}/redeliver`)).status).toBe(404);
  expect(await count(their!)).toEqual({ n: 1, extra: 0 });
  expect((await page()).text).not.toContain(theirs.refundId);
  expect((await page(`?after=${their}`)).text).toContain("That page link is not valid");
});
