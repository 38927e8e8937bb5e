/**
 * A session event's webhook body is built from what the event stored when it was written (its
 * snapshot: the session as of the event and its deposits), so every attempt sends the same bytes
 * and its signature covers them, however the session row moves on between attempts. A real
 * service with its worker, and a real receiving HTTP server on 127.0.0.1.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { newId } from "../../../shared/ids.ts";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { FAST_WEBHOOK_ENV, startReceiver, type Received, type Receiver } from "../../../testing/webhook-receiver.ts";
import { eventually } from "../../../testing/eventually.ts";
import { transitionSession } from "../sessions/repository.ts";
import { insertSession } from "../sessions/create/statement.ts";

let svc: TestService;
let rcv: Receiver;
beforeAll(async () => {
  svc = await startTestService(FAST_WEBHOOK_ENV);
  rcv = startReceiver();
});
afterAll(async () => {
  await svc.close();
  await rcv.stop();
});

async function endpoint(path: string) {
  const m = await svc.merchant();
  const ep = await svc.call("POST", "/webhook-endpoints", { auth: m.sandboxKey, body: { url: `${rcv.url}${path}` } });
  expect(ep.status).toBe(201);
  return { key: m.sandboxKey, merchantId: m.merchant.id, secret: (ep.body as { secret: string }).secret };
}

/** What came to `path`, in order. */
const at = (path: string) => rcv.received.filter((r) => r.path === path);

/** The first attempt of each event is refused with a 500; while it is being answered, `meanwhile` runs. */
function refuseFirstAttempts(path: string, meanwhile: (r: Received) => Promise<void>) {
  const seen = new Set<string>();
  rcv.behave(async (r) => {
    if (r.path !== path || seen.has(r.id)) return new Response("ok");
    seen.add(r.id);
    await meanwhile(r);
    return new Response("not now", { status: 500 });
  });
}

test("a retry of an event sends the same bytes after the session row moved on (metadata, expiry, status), and GET /events/{id} is that body", async () => {
  const path = "/same-bytes";
  const { key, secret } = await endpoint(path);
  const sql = svc.services.database.sql;
  const created = await svc.call("POST", "/payment-sessions", { auth: key, body: { amount: "10.00", currency: "USD", metadata: { order: "A-1" } } });
  expect(created.status).toBe(201);
  const id = created.body.paymentSessionId as string;
  refuseFirstAttempts(path, async (r) => {
    if (r.json?.data?.sequence !== 1) return;
    // Between the first attempt and its retry: the row changes under the event.
    await sql`update app.payment_sessions set metadata = '{"order":"B-2"}'::jsonb, expires_at = expires_at - interval '1 minute' where id = ${id}`;
    expect((await transitionSession(sql, { sessionId: id, from: ["PENDING"], to: "CANCELED", reason: "canceled_by_merchant" }))?.status).toBe("CANCELED");
  });

  // created: refused, then retried; canceled: refused, then retried.
  await eventually(() => at(path).length >= 4, "both events retried", 10_000);
  const created1 = at(path).filter((r) => r.json.data.sequence === 1);
  expect(created1.length).toBeGreaterThanOrEqual(2);
  const [first, retry] = created1;
  expect(retry!.id).toBe(first!.id);
  expect(retry!.body).toBe(first!.body);
  expect(first!.json.data.metadata).toEqual({ order: "A-1" });
  expect(first!.json.data.status).toBe("PENDING");
  const wh = new Webhook(secret);
  for (const r of created1) expect(wh.verify(r.body, r.headers)).toEqual(first!.json);

  // The later event is as of its own moment: the new metadata, and the same bytes again on its retry.
  const canceled = at(path).filter((r) => r.json.data.sequence === 2);
  expect(canceled.length).toBeGreaterThanOrEqual(2);
  expect(canceled[1]!.body).toBe(canceled[0]!.body);
  expect(canceled[0]!.json.data.metadata).toEqual({ order: "B-2" });

  // GET /events/{id}: the body that was sent, not the session as it stands.
  const got = await svc.call("GET", `/events/${first!.id}`, { auth: key });
  expect(got.status).toBe(200);
  const { deliveries: _deliveries, ...event } = got.body;
  expect(event).toEqual(first!.json);
  rcv.behave(undefined);
});

test("an event written without a snapshot (an older build's) still delivers, and takes its snapshot at the first claim: its retry is the same bytes", async () => {
  const path = "/legacy";
  const { merchantId } = await endpoint(path);
  const sql = svc.services.database.sql;
  const id = newId("paymentSession");
  const input = { amountMinor: 500n, currency: "USD" as const, metadata: { v: "1" }, referenceId: null, expiresInSeconds: 600 };
  // The session and its event committed together with the snapshot taken away, as an older build writes them.
  await sql.begin(async (tx) => {
    await insertSession(tx, { id, deposits: [], merchantId, environment: "sandbox", input, tokenGraceSeconds: 60 });
    await tx`update app.session_events set snapshot = null where session_id = ${id}`;
  });
  refuseFirstAttempts(path, async () => {
    await sql`update app.payment_sessions set metadata = '{"v":"2"}'::jsonb where id = ${id}`;
  });
  await eventually(() => at(path).length >= 2, "the legacy event retried", 10_000);
  const [first, retry] = at(path);
  expect(first!.json.data.paymentSessionId).toBe(id);
  expect(first!.json.data.metadata).toEqual({ v: "1" });
  expect(retry!.body).toBe(first!.body);
  const [row] = await sql`select snapshot is not null as has from app.session_events where session_id = ${id}`;
  expect(row!.has).toBe(true);
  rcv.behave(undefined);
});

test("the create statement's snapshot and a status change's are app.session_event_snapshot of the session at that moment", async () => {
  const { key } = await endpoint("/contract");
  const sql = svc.services.database.sql;
  const created = await svc.call("POST", "/payment-sessions", { auth: key, body: { amount: "12.34", currency: "USD", metadata: { k: "v" } } });
  expect(created.status).toBe(201);
  const id = created.body.paymentSessionId as string;
  // The create builds its snapshot from its own rows; the function reads the tables: the same object.
  const [atCreate] = await sql`
    select e.snapshot = app.session_event_snapshot(${id}) as same, e.snapshot from app.session_events e where e.session_id = ${id} and e.sequence = 1`;
  expect(atCreate!.snapshot.session.id).toBe(id);
  expect(atCreate!.snapshot.session.token_hash).toBeUndefined();
  expect(typeof atCreate!.snapshot.session.amount_minor).toBe("string");
  expect(atCreate!.snapshot.deposits.length).toBeGreaterThan(0);
  expect(typeof atCreate!.snapshot.deposits[0].required_base_units).toBe("string");
  expect(atCreate!.same).toBe(true);

  // A status change's event is written after its session's update: its snapshot has the new status.
  expect((await transitionSession(sql, { sessionId: id, from: ["PENDING"], to: "CANCELED", reason: "canceled_by_merchant" }))?.status).toBe("CANCELED");
  const [atCancel] = await sql`
    select e.snapshot = app.session_event_snapshot(${id}) as same, e.snapshot->'session'->>'status' as status
      from app.session_events e where e.session_id = ${id} and e.sequence = 2`;
  expect(atCancel!.status).toBe("CANCELED");
  expect(atCancel!.same).toBe(true);
  // …and the first event's snapshot stayed as it was.
  const [still] = await sql`select snapshot->'session'->>'status' as status from app.session_events where session_id = ${id} and sequence = 1`;
  expect(still!.status).toBe("PENDING");
});
