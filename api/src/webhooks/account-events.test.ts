/**
 * Account events (`settlement_address.updated`) through the one outbox and worker: a real
 * service (its own database and worker), real receivers on 127.0.0.1, the API route and the
 * dashboard form. Short retry schedule (settings) keeps it fast.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { eventually } from "../../../testing/eventually.ts";
import { FAST_WEBHOOK_ENV, startReceiver, type Receiver } from "../../../testing/webhook-receiver.ts";
import { merchantWithUser, signIn, TEST_PASSWORD } from "../../../testing/dashboard.ts";
import { changeSettlementAddress } from "./account-announcement.ts";
import { describeError } from "../../../shared/describe-error.ts";

let svc: TestService;
const receivers: Receiver[] = [];
beforeAll(async () => {
  svc = await startTestService({ ...FAST_WEBHOOK_ENV });
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

const ADDR_1 = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const ADDR_2 = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const ADDR_3 = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";

async function endpointFor(key: string, url: string) {
  const ep = await svc.call("POST", "/webhook-endpoints", { auth: key, body: { url } });
  expect(ep.status).toBe(201);
  return ep.body as { id: string; secret: string };
}

const sql = () => svc.services.database.sql;

async function accountEvents(merchantId: string) {
  return sql()`select id, type, data from app.account_events where merchant_id = ${merchantId} order by created_at, id`;
}

async function deliveryStates(endpointId: string): Promise<string[]> {
  const rows = await sql()`select state from app.webhook_deliveries where endpoint_id = ${endpointId} and account_event_id is not null order by id`;
  return rows.map((r) => r.state as string);
}

/** The database's own message of a failure (drizzle wraps it as the cause of its own error). */
async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "no failure";
  } catch (e) {
    return describeError(e, { redact: false });
  }
}

describe("settlement_address.updated", () => {
  test("the change and its event commit together: a change that fails writes no event, an event that cannot be written undoes the change", async () => {
    const m = await svc.merchant("Atomic");
    await endpointFor(m.sandboxKey, `${receiver().url}/atomic`);
    const request = (address: string) => ({
      merchant: m.merchant,
      environment: "sandbox" as const,
      chainId: 31337,
      network: "Local test network (anvil)",
      address,
      actor: { merchantId: m.merchant.id, userId: null, email: null, ip: null },
      changedBy: "test",
    });
    const state = async () => ({
      address: (await sql()`select address from app.merchant_settlements where merchant_id = ${m.merchant.id} and chain_id = 31337`)[0]?.address ?? null,
      events: (await accountEvents(m.merchant.id)).length,
      deliveries: (await sql()`select count(*)::int as n from app.webhook_deliveries d join app.account_events a on a.id = d.account_event_id where a.merchant_id = ${m.merchant.id}`)[0]!.n,
      history: (await sql()`select count(*)::int as n from app.security_events where merchant_id = ${m.merchant.id} and action = 'settlement_address_changed'`)[0]!.n,
    });
    const fail = (table: string) => `
      create or replace function app.test_refuse() returns trigger language plpgsql as $$
      begin if new.merchant_id = '${m.merchant.id}' then raise exception 'refused by test'; end if; return new; end $$;
      create trigger test_refuse before insert or update on app.${table} for each row execute function app.test_refuse();`;
    const unfail = (table: string) => `drop trigger test_refuse on app.${table}; drop function app.test_refuse();`;

    // The change itself fails (the settlement write is refused): no event, no delivery, no history.
    await sql().unsafe(fail("merchant_settlements"));
    try {
      expect(await refusal(changeSettlementAddress(svc.services.database, request(ADDR_1)))).toContain("refused by test");
    } finally {
      await sql().unsafe(unfail("merchant_settlements"));
    }
    expect(await state()).toEqual({ address: null, events: 0, deliveries: 0, history: 0 });

    // The event cannot be written: the change is undone with it.
    await sql().unsafe(fail("account_events"));
    try {
      expect(await refusal(changeSettlementAddress(svc.services.database, request(ADDR_1)))).toContain("refused by test");
    } finally {
      await sql().unsafe(unfail("account_events"));
    }
    expect(await state()).toEqual({ address: null, events: 0, deliveries: 0, history: 0 });

    // Nothing in the way: all four, together.
    const done = await changeSettlementAddress(svc.services.database, request(ADDR_1));
    expect(done.deliveries).toBe(1);
    expect(await state()).toEqual({ address: ADDR_1.toLowerCase(), events: 1, deliveries: 1, history: 1 });
  });

  test("a receiver down for a while gets the event after retries, signed so standardwebhooks verifies it; GET /events/{id} is the same body", async () => {
    const rcv = receiver();
    await rcv.stop();
    const m = await svc.merchant("Patient");
    const endpoint = await endpointFor(m.sandboxKey, `${rcv.url}/down-then-up`);
    const put = await svc.call("PUT", "/settlement-addresses/31337", { auth: m.sandboxKey, body: { address: ADDR_2 } });
    expect(put.status).toBe(200);
    // While down: attempts fail and are retried on the schedule, the delivery stays open.
    await eventually(async () => {
      const [r] = await sql()`select count(*)::int as n from app.webhook_attempts where endpoint_id = ${endpoint.id} and not succeeded`;
      return r!.n >= 2;
    }, "failed attempts while down", 5000);
    expect(await deliveryStates(endpoint.id)).toEqual([expect.stringMatching(/^(pending|sending)$/)]);
    rcv.start();
    await eventually(async () => (await deliveryStates(endpoint.id)).join() === "succeeded", "delivered once up", 5000);

    expect(rcv.received.length).toBe(1);
    const got = rcv.received[0]!;
    const [event] = await accountEvents(m.merchant.id);
    expect(got.id).toBe(event!.id);
    expect(got.json).toEqual({
      id: event!.id,
      type: "settlement_address.updated",
      createdAt: expect.any(String),
      data: {
        environment: "sandbox",
        merchantId: m.merchant.sandboxPublicId,
        chainId: 31337,
        network: "Local test network (anvil)",
        address: ADDR_2,
        previousAddress: null,
        changedBy: expect.stringMatching(/^API key sk_test_.*…$/),
      },
    });
    const wh = new Webhook(endpoint.secret);
    expect(wh.verify(got.body, got.headers)).toEqual(got.json);
    expect(() => wh.verify(got.body.replace(ADDR_2, ADDR_3), got.headers)).toThrow();

    // Every attempt is in the log, as an account event's.
    const att = await svc.call("GET", `/events/${got.id}/attempts`, { auth: m.sandboxKey });
    expect(att.status).toBe(200);
    const attempts = att.body.data as { attemptNumber: number; succeeded: boolean; kind: string }[];
    expect(attempts.length).toBeGreaterThanOrEqual(3);
    expect(attempts[0]).toMatchObject({ succeeded: true, kind: "account", attemptNumber: attempts.length });
    expect(attempts.slice(1).every((a) => !a.succeeded && a.kind === "account")).toBe(true);

    // Retrievable by id (the exact body), with its delivery; not in the sessions' list.
    const ev = await svc.call("GET", `/events/${got.id}`, { auth: m.sandboxKey });
    expect(ev.status).toBe(200);
    const { deliveries, ...body } = ev.body;
    expect(JSON.stringify(body)).toBe(got.body);
    expect(deliveries).toEqual([expect.objectContaining({ webhookEndpointId: endpoint.id, state: "succeeded", ordered: true, attempts: attempts.length })]);
    const list = await svc.call("GET", "/events?limit=100", { auth: m.sandboxKey });
    expect(list.body.data.map((e: { id: string }) => e.id)).not.toContain(got.id);
    // Another merchant cannot see it.
    const other = await svc.merchant("Nosy");
    expect((await svc.call("GET", `/events/${got.id}`, { auth: other.sandboxKey })).status).toBe(404);
  });

  test("redelivered on request with the same body; a 410 disables the endpoint like any event's", async () => {
    const rcv = receiver();
    const m = await svc.merchant("Redo");
    const endpoint = await endpointFor(m.sandboxKey, `${rcv.url}/redo`);
    expect((await svc.call("PUT", "/settlement-addresses/31337", { auth: m.sandboxKey, body: { address: ADDR_3 } })).status).toBe(200);
    await rcv.waitFor(1);
    const id = rcv.received[0]!.id;
    const again = await svc.call("POST", `/events/${id}/redeliver`, { auth: m.sandboxKey, body: {} });
    expect(again.status).toBe(202);
    expect(again.body.deliveries).toEqual([expect.objectContaining({ webhookEndpointId: endpoint.id, ordered: false })]);
    await rcv.waitFor(2);
    expect(rcv.received[1]!.id).toBe(id);
    expect(rcv.received[1]!.body).toBe(rcv.received[0]!.body);
    await eventually(async () => (await deliveryStates(endpoint.id)).join() === "succeeded,succeeded", "both recorded", 3000);
    const kinds = (await svc.call("GET", `/events/${id}/attempts`, { auth: m.sandboxKey })).body.data.map((a: { kind: string }) => a.kind);
    expect(kinds).toEqual(["redelivery", "account"]);

    // 410 Gone: the delivery fails for good and the endpoint is disabled (reason "gone").
    rcv.behave(() => new Response("gone", { status: 410 }));
    expect((await svc.call("PUT", "/settlement-addresses/31337", { auth: m.sandboxKey, body: { address: ADDR_1 } })).status).toBe(200);
    await eventually(async () => (await deliveryStates(endpoint.id)).join() === "succeeded,succeeded,failed", "failed on 410", 3000);
    const ep = await svc.call("GET", `/webhook-endpoints/${endpoint.id}`, { auth: m.sandboxKey });
    expect(ep.body).toMatchObject({ enabled: false, disabledReason: "gone" });
    // A disabled endpoint gets no delivery of the next change.
    expect((await svc.call("PUT", "/settlement-addresses/31337", { auth: m.sandboxKey, body: { address: ADDR_2 } })).status).toBe(200);
    expect((await accountEvents(m.merchant.id)).length).toBe(3);
    expect(await deliveryStates(endpoint.id)).toEqual(["succeeded", "succeeded", "failed"]);
  });

  test("not held behind a session's events: sent while that session's deliveries are still being retried", async () => {
    const rcv = receiver();
    rcv.behave((r) => (r.json?.type?.startsWith("payment_session.") ? new Response("not now", { status: 503 }) : undefined));
    const m = await svc.merchant("Busy");
    const endpoint = await endpointFor(m.sandboxKey, `${rcv.url}/busy`);
    const s = await svc.call("POST", "/payment-sessions", { auth: m.sandboxKey, body: { amount: "1.00", currency: "USD" } });
    expect(s.status).toBe(201);
    expect((await svc.call("PUT", "/settlement-addresses/31337", { auth: m.sandboxKey, body: { address: ADDR_1 } })).status).toBe(200);
    await eventually(async () => rcv.received.some((r) => r.json?.type === "settlement_address.updated"), "account event arrived", 3000);
    const [open] = await sql()`select state from app.webhook_deliveries where endpoint_id = ${endpoint.id} and event_id is not null`;
    expect(open!.state).toMatch(/^(pending|sending)$/);
  });

  test("exactly one durable event per change, from the dashboard and from the API; a refused change makes none", async () => {
    const a = await merchantWithUser(svc, "carol@c.example");
    const rcv = receiver();
    const endpoint = await endpointFor(a.sandboxKey, `${rcv.url}/both`);
    const user = await signIn(svc, "carol@c.example");

    // Refused in the dashboard (wrong password, wrong checksum): no event.
    expect((await user.post("/dashboard/sandbox/settings/settlement/31337", { address: ADDR_1, password: "wrong wrong wrong" })).status).toBe(403);
    expect((await user.post("/dashboard/sandbox/settings/settlement/31337", { address: ADDR_1.replace(/C8$/, "c8"), password: TEST_PASSWORD })).status).toBe(400);
    expect((await accountEvents(a.merchant.id)).length).toBe(0);

    const viaDashboard = await user.post("/dashboard/sandbox/settings/settlement/31337", { address: ADDR_1, password: TEST_PASSWORD });
    expect(viaDashboard.status).toBe(303);
    const viaApi = await svc.call("PUT", "/settlement-addresses/31337", { auth: a.sandboxKey, body: { address: ADDR_2 } });
    expect(viaApi.status).toBe(200);

    const events = await accountEvents(a.merchant.id);
    expect(events.map((e) => [e.type, (e.data as any).address, (e.data as any).previousAddress])).toEqual([
      ["settlement_address.updated", ADDR_1, null],
      ["settlement_address.updated", ADDR_2, ADDR_1],
    ]);
    expect((events[0]!.data as any).changedBy).toBe("carol@c.example");
    expect((events[1]!.data as any).changedBy).toMatch(/^API key sk_test_/);
    // One delivery each, each delivered once; one security-history line each, naming who.
    await eventually(async () => (await deliveryStates(endpoint.id)).join() === "succeeded,succeeded", "both delivered", 3000);
    expect(rcv.received.map((r) => r.id)).toEqual(events.map((e) => e.id));
    const history = await sql()`
      select email, detail->>'via' as via from app.security_events
       where merchant_id = ${a.merchant.id} and action = 'settlement_address_changed' order by created_at, id`;
    expect(history.map((h) => [h.email, h.via])).toEqual([
      ["carol@c.example", "dashboard"],
      [null, "api"],
    ]);
  });
});
