import { newId } from "../../../shared/ids.ts";
/**
 * Webhook delivery end to end: a real service (its own database, its worker) and real
 * HTTP receivers on 127.0.0.1. Short retry schedule and timeout (settings) keep it fast.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { transitionSession } from "../sessions/repository.ts";
import { insertSession } from "../sessions/create/statement.ts";
import type { SessionStatus, TransitionReason } from "../../../shared/status.ts";
import { eventually } from "../../../testing/eventually.ts";
import { FAST_WEBHOOK_ENV, startReceiver, type Receiver } from "../../../testing/webhook-receiver.ts";

let svc: TestService;
const receivers: Receiver[] = [];
beforeAll(async () => {
  svc = await startTestService({ ...FAST_WEBHOOK_ENV, SERVICE_WEBHOOK_ENDPOINT_CONCURRENCY: "4" });
});
afterAll(async () => {
  await svc.close();
  for (const r of receivers) await r.stop();
});

function receiver(): Receiver {
  const r = startReceiver();
  receivers.push(r);
  return r;
}

async function setup(url: string, env: "sandbox" | "production" = "sandbox") {
  const m = await svc.merchant();
  const key = env === "sandbox" ? m.sandboxKey : m.liveKey;
  const ep = await svc.call("POST", "/webhook-endpoints", { auth: key, body: { url } });
  expect(ep.status).toBe(201);
  return { key, endpoint: ep.body as { id: string; secret: string } };
}

async function newSession(key: string): Promise<string> {
  const r = await svc.call("POST", "/payment-sessions", { auth: key, body: { amount: "10.00", currency: "USD" } });
  expect(r.status).toBe(201);
  return r.body.paymentSessionId;
}

async function move(sessionId: string, from: SessionStatus, to: SessionStatus, reason: TransitionReason) {
  const row = await transitionSession(svc.services.database.sql, { sessionId, from: [from], to, reason });
  expect(row?.status).toBe(to);
}

async function deliveryStates(endpointId: string): Promise<string[]> {
  const rows = await svc.services.database.sql`select state from app.webhook_deliveries where endpoint_id = ${endpointId} order by id`;
  return rows.map((r) => r.state as string);
}

/** For each session: the sequences in the order they first arrived. */
function firstArrivals(received: { json: any }[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const r of received) {
    const d = r.json?.data;
    if (!d?.paymentSessionId) continue;
    const seqs = out.get(d.paymentSessionId) ?? [];
    if (!seqs.includes(d.sequence)) seqs.push(d.sequence);
    out.set(d.paymentSessionId, seqs);
  }
  return out;
}

describe("delivery", () => {
  test("each status change arrives signed; standardwebhooks verifies it; GET /events/{id} is the same body", async () => {
    const rcv = receiver();
    const { key, endpoint } = await setup(`${rcv.url}/hooks`);
    const id = await newSession(key);
    await move(id, "PENDING", "FUNDED", "paid");
    await move(id, "FUNDED", "SUCCEEDED", "swept");
    const got = await rcv.waitFor(3);
    await eventually(async () => (await deliveryStates(endpoint.id)).join() === "succeeded,succeeded,succeeded", "recorded", 3000);
    const wh = new Webhook(endpoint.secret);
    expect(got.map((g) => g.json.type)).toEqual(["payment_session.pending", "payment_session.funded", "payment_session.succeeded"]);
    expect(got.map((g) => [g.json.data.status, g.json.data.previousStatus, g.json.data.reason, g.json.data.sequence])).toEqual([
      ["PENDING", null, "created", 1],
      ["FUNDED", "PENDING", "paid", 2],
      ["SUCCEEDED", "FUNDED", "swept", 3],
    ]);
    for (const g of got) {
      expect(g.path).toBe("/hooks");
      expect(g.id).toBe(g.json.id);
      expect(wh.verify(g.body, g.headers)).toEqual(g.json);
      expect(Math.abs(Number(g.timestamp) - Date.now() / 1000)).toBeLessThan(30);
      // tampering is caught
      expect(() => wh.verify(g.body.replace('"10.00"', '"99.00"'), g.headers)).toThrow();
      expect(() => wh.verify(g.body, { ...g.headers, "webhook-id": g.id + "x" })).toThrow();
      expect(() => wh.verify(g.body, { ...g.headers, "webhook-timestamp": String(Number(g.timestamp) - 1) })).toThrow();
      const ev = await svc.call("GET", `/events/${g.id}`, { auth: key });
      const { deliveries, ...event } = ev.body;
      expect(JSON.stringify(event)).toBe(g.body);
      expect(deliveries).toEqual([expect.objectContaining({ webhookEndpointId: endpoint.id, state: "succeeded", attempts: 1, lastStatusCode: 200 })]);
    }
    expect(got[0]!.json.data).toMatchObject({ paymentSessionId: id, amount: "10.00", currency: "USD", environment: "sandbox" });
  });

  test("receiver down for a while, then up: everything arrives, in order per session", async () => {
    const rcv = receiver();
    await rcv.stop();
    const { key, endpoint } = await setup(`${rcv.url}/down-then-up`);
    const sessions: string[] = [];
    for (let i = 0; i < 6; i++) {
      const id = await newSession(key);
      sessions.push(id);
      if (i % 2 === 0) {
        await move(id, "PENDING", "FUNDED", "paid");
        await move(id, "FUNDED", "SUCCEEDED", "swept");
      } else {
        const c = await svc.call("POST", `/payment-sessions/${id}/cancel`, { auth: key });
        expect(c.status).toBe(200);
      }
    }
    // while down: first events fail and are retried; later ones wait behind them
    await eventually(async () => {
      const [r] = await svc.services.database.sql`select count(*)::int as n from app.webhook_attempts where endpoint_id = ${endpoint.id} and not succeeded`;
      return r!.n >= 6;
    }, "failed attempts while down", 5000);
    const states = await deliveryStates(endpoint.id);
    expect(states.filter((s) => s === "waiting").length).toBe(3 * 2 + 3 * 1);
    rcv.start();
    const total = 3 * 3 + 3 * 2;
    await eventually(async () => (await deliveryStates(endpoint.id)).every((s) => s === "succeeded"), "all delivered", 8000);
    const arrivals = firstArrivals(rcv.received);
    expect(arrivals.size).toBe(6);
    for (const [i, id] of sessions.entries()) expect(arrivals.get(id)).toEqual(i % 2 === 0 ? [1, 2, 3] : [1, 2]);
    expect(new Set(rcv.received.map((r) => r.id)).size).toBe(total);
    const att = await svc.call("GET", `/webhook-endpoints/${endpoint.id}/attempts?limit=100`, { auth: key });
    expect(att.body.data.some((a: any) => !a.succeeded && a.statusCode === null && /connection failed/.test(a.error))).toBe(true);
  });

  test("500 twice, then 200: retried, and every attempt is logged with its status, latency and answer", async () => {
    const rcv = receiver();
    const tries = new Map<string, number>();
    rcv.behave((r) => {
      const n = (tries.get(r.id) ?? 0) + 1;
      tries.set(r.id, n);
      return n <= 2 ? new Response("boom " + "x".repeat(3000), { status: 500 }) : new Response("thanks");
    });
    const { key, endpoint } = await setup(rcv.url);
    await newSession(key);
    await eventually(async () => (await deliveryStates(endpoint.id))[0] === "succeeded", "success after retries", 5000);
    const eventId = rcv.received[0]!.id;
    const att = await svc.call("GET", `/events/${eventId}/attempts`, { auth: key });
    expect(att.status).toBe(200);
    const list = att.body.data as any[];
    expect(list.map((a) => [a.attemptNumber, a.statusCode, a.succeeded, a.kind])).toEqual([
      [3, 200, true, "event"],
      [2, 500, false, "event"],
      [1, 500, false, "event"],
    ]);
    // The receiver is on 127.0.0.1: its answers are never kept (docs/webhooks.md, "Where webhooks may go").
    expect(list[1].responseBody).toBeNull();
    expect(list[1].error).toBe("HTTP 500");
    expect(list[0].responseBody).toBeNull();
    for (const a of list) {
      expect(a.webhookEndpointId).toBe(endpoint.id);
      expect(typeof a.latencyMs).toBe("number");
    }
    // retried after ~100 ms then ~200 ms (± 20 %), not at once
    const t = rcv.received.map((r) => r.at);
    expect(t[1]! - t[0]!).toBeGreaterThanOrEqual(70);
    expect(t[2]! - t[1]!).toBeGreaterThanOrEqual(150);
    // pagination over attempts
    const p1 = await svc.call("GET", `/events/${eventId}/attempts?limit=2`, { auth: key });
    expect(p1.body.hasMore).toBe(true);
    const p2 = await svc.call("GET", `/events/${eventId}/attempts?limit=2&startingAfter=${p1.body.nextCursor}`, { auth: key });
    expect(p2.body.data.map((a: any) => a.attemptNumber)).toEqual([1]);
    expect(p2.body.hasMore).toBe(false);
  });

  test("an endpoint hanging past the timeout: the attempt times out and is retried", async () => {
    const rcv = receiver();
    let first = true;
    rcv.behave(async () => {
      if (first) {
        first = false;
        await Bun.sleep(1500);
      }
      return new Response("ok");
    });
    const { key, endpoint } = await setup(rcv.url);
    await newSession(key);
    await eventually(async () => (await deliveryStates(endpoint.id))[0] === "succeeded", "success after a timeout", 5000);
    const att = await svc.call("GET", `/webhook-endpoints/${endpoint.id}/attempts`, { auth: key });
    const [ok, timedOut] = att.body.data;
    expect(ok.succeeded).toBe(true);
    expect(timedOut.succeeded).toBe(false);
    expect(timedOut.statusCode).toBeNull();
    expect(timedOut.error).toContain("timeout");
    expect(timedOut.latencyMs).toBeGreaterThanOrEqual(380);
    expect(timedOut.latencyMs).toBeLessThan(1200);
  });

  test("redirects are not followed: the delivery fails after its retries, then the session's next event goes", async () => {
    const rcv = receiver();
    rcv.behave((r) => (r.path === "/elsewhere" ? new Response("followed!") : r.json?.type === "payment_session.pending" ? Response.redirect(`${rcv.url}/elsewhere`, 302) : undefined));
    const { key, endpoint } = await setup(`${rcv.url}/start`);
    const id = await newSession(key);
    await svc.call("POST", `/payment-sessions/${id}/cancel`, { auth: key });
    await eventually(async () => (await deliveryStates(endpoint.id)).join() === "failed,succeeded", "failed head, then the next", 8000);
    expect(rcv.received.some((r) => r.path === "/elsewhere")).toBe(false);
    const types = rcv.received.map((r) => r.json.type);
    expect(types).toEqual([...Array(5).fill("payment_session.pending"), "payment_session.canceled"]);
    const ev = await svc.call("GET", `/events/${rcv.received[0]!.id}`, { auth: key });
    expect(ev.body.deliveries[0]).toMatchObject({ state: "failed", attempts: 5, lastStatusCode: 302 });
    expect(ev.body.deliveries[0].lastError).toContain("redirect not followed");
  });

  test("410 Gone disables the endpoint: nothing more is sent to it", async () => {
    const rcv = receiver();
    rcv.behave(() => new Response("gone", { status: 410 }));
    const { key, endpoint } = await setup(rcv.url);
    const id = await newSession(key);
    await svc.call("POST", `/payment-sessions/${id}/cancel`, { auth: key });
    await eventually(async () => (await svc.call("GET", `/webhook-endpoints/${endpoint.id}`, { auth: key })).body.enabled === false, "disabled", 5000);
    const ep = await svc.call("GET", `/webhook-endpoints/${endpoint.id}`, { auth: key });
    expect(ep.body.disabledReason).toBe("gone");
    // the cancel's delivery was either queued and then canceled, or (endpoint already off) never queued
    const after = (await deliveryStates(endpoint.id)).join();
    expect(["failed,canceled", "failed"]).toContain(after);
    await newSession(key);
    await Bun.sleep(300);
    expect(rcv.received.length).toBe(1);
    expect((await deliveryStates(endpoint.id)).join()).toBe(after);
    // the merchant turns it back on: new events flow again
    rcv.behave(undefined);
    const on = await svc.call("POST", `/webhook-endpoints/${endpoint.id}`, { auth: key, body: { enabled: true } });
    expect([on.body.enabled, on.body.disabledReason]).toEqual([true, null]);
    await newSession(key);
    await rcv.waitFor(2, 3000);
  });

  test("one endpoint hanging does not slow another merchant's deliveries", async () => {
    const slowFrom = performance.now();
    const slow = receiver();
    slow.behave(async () => {
      await Bun.sleep(3000);
      return new Response("late");
    });
    const fast = receiver();
    const a = await setup(slow.url);
    const b = await setup(fast.url);
    // A backlog for the hanging endpoint larger than one claim's look-ahead (4 × 200 rows).
    const [row] = await svc.services.database.sql`select merchant_id from app.webhook_endpoints where id = ${a.endpoint.id}`;
    const merchantA = row!.merchant_id as string;
    const input = { amountMinor: 100n, currency: "USD" as const, metadata: {}, referenceId: null, expiresInSeconds: 600 };
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        for (let i = 0; i < 100; i++) await insertSession(svc.services.database.sql, { id: newId("paymentSession"), deposits: [], merchantId: merchantA, environment: "sandbox", input, tokenGraceSeconds: 60 });
      }),
    );
    await slow.waitFor(4, 3000); // the slow endpoint holds its slots now
    const commits: number[] = [];
    for (let i = 0; i < 10; i++) {
      await newSession(b.key);
      commits.push(performance.now());
      await Bun.sleep(20);
    }
    await fast.waitFor(10, 3000);
    const lag = fast.received.map((r, i) => r.at - commits[i]!);
    expect(Math.max(...lag)).toBeLessThan(250);
    // and the slow one never had more than its 4 slots at once: each attempt holds one for the
    // 400 ms timeout, so at most 4 attempts start per 400 ms however long this test took
    const windows = Math.ceil((performance.now() - slowFrom) / 400) + 1;
    expect(slow.received.length).toBeLessThanOrEqual(4 * windows);
    // Its own set-up (a thousand inserted sessions, the slow endpoint filling its slots) takes
    // seconds on a loaded machine; what it measures is the lag above, not its total time.
  }, 30_000);

  test("secret rotation: during the overlap both signatures are sent and each secret verifies; after it only the new", async () => {
    const rcv = receiver();
    const { key, endpoint } = await setup(rcv.url);
    const rot = await svc.call("POST", `/webhook-endpoints/${endpoint.id}/rotate-secret`, { auth: key, body: { overlapSeconds: 3600 } });
    expect(rot.status).toBe(200);
    expect(rot.body.secret).toMatch(/^whsec_/);
    expect(rot.body.secret).not.toBe(endpoint.secret);
    expect(Date.parse(rot.body.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(3500_000);
    const shown = await svc.call("GET", `/webhook-endpoints/${endpoint.id}/secret`, { auth: key });
    expect(shown.body.secret).toBe(rot.body.secret);
    await newSession(key);
    const [g] = await rcv.waitFor(1);
    expect(g!.signature.split(" ").length).toBe(2);
    expect(new Webhook(rot.body.secret).verify(g!.body, g!.headers)).toBeTruthy();
    expect(new Webhook(endpoint.secret).verify(g!.body, g!.headers)).toBeTruthy();
    // rotate again without overlap: one signature, the newest secret only
    const rot2 = await svc.call("POST", `/webhook-endpoints/${endpoint.id}/rotate-secret`, { auth: key, body: { overlapSeconds: 0 } });
    expect(rot2.body.previousSecretExpiresAt).toBeNull();
    await newSession(key);
    const [, g2] = await rcv.waitFor(2);
    expect(g2!.signature.split(" ").length).toBe(1);
    expect(new Webhook(rot2.body.secret).verify(g2!.body, g2!.headers)).toBeTruthy();
    expect(() => new Webhook(rot.body.secret).verify(g2!.body, g2!.headers)).toThrow();
    expect(() => new Webhook(endpoint.secret).verify(g2!.body, g2!.headers)).toThrow();
  });

  test("redeliver an event now, and send a test event", async () => {
    const rcv = receiver();
    const { key, endpoint } = await setup(rcv.url);
    await newSession(key);
    const [first] = await rcv.waitFor(1);
    const r = await svc.call("POST", `/events/${first!.id}/redeliver`, { auth: key, body: {} });
    expect(r.status).toBe(202);
    expect(r.body.deliveries).toEqual([expect.objectContaining({ webhookEndpointId: endpoint.id, ordered: false })]);
    const [, again] = await rcv.waitFor(2);
    expect(again!.id).toBe(first!.id);
    expect(again!.body).toBe(first!.body);
    expect(new Webhook(endpoint.secret).verify(again!.body, again!.headers)).toBeTruthy();
    await eventually(async () => (await svc.call("GET", `/events/${first!.id}/attempts`, { auth: key })).body.data.length === 2, "logged", 3000);
    const att = await svc.call("GET", `/events/${first!.id}/attempts`, { auth: key });
    expect(att.body.data.map((a: any) => a.kind).sort()).toEqual(["event", "redelivery"]);

    const t = await svc.call("POST", `/webhook-endpoints/${endpoint.id}/test`, { auth: key });
    expect(t.status).toBe(200);
    expect(t.body.event.type).toBe("webhook.test");
    expect(t.body.attempt).toMatchObject({ kind: "test", succeeded: true, statusCode: 200, responseBody: null, webhookEndpointId: endpoint.id });
    const got = rcv.received.at(-1)!;
    expect(got.json.type).toBe("webhook.test");
    expect(new Webhook(endpoint.secret).verify(got.body, got.headers)).toEqual(t.body.event);
    const list = await svc.call("GET", `/webhook-endpoints/${endpoint.id}/attempts`, { auth: key });
    expect(list.body.data[0]).toEqual(t.body.attempt);

    // a test to an endpoint that fails says how it failed
    rcv.behave(() => new Response("nope", { status: 503 }));
    const bad = await svc.call("POST", `/webhook-endpoints/${endpoint.id}/test`, { auth: key });
    expect(bad.body.attempt).toMatchObject({ succeeded: false, statusCode: 503, responseBody: null, error: "HTTP 503" });
    rcv.behave(undefined);
  });
});
