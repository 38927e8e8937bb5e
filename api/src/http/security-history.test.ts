/**
 * The security history through both doors: every change that has a line writes it in the
 * change's own transaction (a line that cannot be written undoes the change; a change that
 * fails writes no line), naming the signed-in person (dashboard) or the key (API).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { merchantWithUser, signIn, type Browser } from "../../../testing/dashboard.ts";
import { displayPrefix } from "../credentials/format.ts";

let svc: TestService;
let m: Awaited<ReturnType<typeof merchantWithUser>>;
let me: Browser;
let keyId: string;
let keyPrefix: string;
let eventId: string;
const sql = () => svc.services.database.sql;

beforeAll(async () => {
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false" });
  m = await merchantWithUser(svc, "sec@s.example");
  me = await signIn(svc, "sec@s.example");
  keyPrefix = displayPrefix(m.sandboxKey);
  keyId = (await sql()`select id from app.api_keys where merchant_id = ${m.merchant.id} and environment = 'sandbox' and prefix = ${keyPrefix}`)[0]!.id;
  const s = await svc.call("POST", "/payment-sessions", { auth: m.sandboxKey, body: { amount: "2.00", currency: "USD", referenceId: "sec-order" } });
  eventId = (await svc.call("GET", `/events?paymentSessionId=${s.body.paymentSessionId}`, { auth: m.sandboxKey })).body.data[0].id;
}, 60_000);
afterAll(() => svc.close());

type Line = { action: string; email: string | null; user_id: string | null; environment: string | null; detail: Record<string, unknown> };
/** This merchant's lines written since `mark` (a row count), oldest first. */
const linesSince = async (mark: number): Promise<Line[]> =>
  (await sql()`select action, email, user_id, environment, detail from app.security_events where merchant_id = ${m.merchant.id} order by created_at, id offset ${mark}`) as unknown as Line[];
const lineCount = async () => (await sql()`select count(*)::int as n from app.security_events where merchant_id = ${m.merchant.id}`)[0]!.n as number;
const endpointCount = async () => (await sql()`select count(*)::int as n from app.webhook_endpoints where merchant_id = ${m.merchant.id} and deleted_at is null`)[0]!.n as number;
const endpointRow = async (id: string) => (await sql()`select url, enabled, secret_sealed, deleted_at from app.webhook_endpoints where id = ${id}`)[0]!;
const redeliveries = async () => (await sql()`select count(*)::int as n from app.webhook_deliveries where event_id = ${eventId} and not ordered`)[0]!.n as number;
const endpointIdIn = (location: string | null) => /\/settings\/webhooks\/(whe_[0-9A-Za-z]+)/.exec(location ?? "")?.[1];

/** While `run` runs, the security history refuses this merchant's lines of `action` (as a full disk or a broken constraint would). */
async function refusingLines<T>(action: string, run: () => Promise<T>): Promise<T> {
  await sql().unsafe(`
    create or replace function app.test_refuse_line() returns trigger language plpgsql as $$
    begin if new.merchant_id = '${m.merchant.id}' and new.action = '${action}' then raise exception 'line refused by test'; end if; return new; end $$;
    create trigger test_refuse_line before insert on app.security_events for each row execute function app.test_refuse_line();`);
  try {
    return await run();
  } finally {
    await sql().unsafe(`drop trigger test_refuse_line on app.security_events; drop function app.test_refuse_line();`);
  }
}

describe("through an API key", () => {
  test("each webhook change, secret reveal and redelivery has its line, naming the key; the Security history page shows it", async () => {
    const mark = await lineCount();
    const auth = m.sandboxKey;
    const created = await svc.call("POST", "/webhook-endpoints", { auth, body: { url: "http://localhost:3000/sec" } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    // With an Idempotency-Key: one line, not one more for the replay.
    const idem = { auth, body: { url: "http://localhost:3000/sec2" }, headers: { "idempotency-key": "sec-create-1" } };
    const first = await svc.call("POST", "/webhook-endpoints", idem);
    expect((await svc.call("POST", "/webhook-endpoints", idem)).headers.get("idempotent-replayed")).toBe("true");
    expect((await svc.call("POST", `/webhook-endpoints/${id}`, { auth, body: { url: "http://localhost:3000/sec-moved" } })).status).toBe(200);
    expect((await svc.call("GET", `/webhook-endpoints/${id}/secret`, { auth })).status).toBe(200);
    expect((await svc.call("POST", `/webhook-endpoints/${id}/rotate-secret`, { auth, body: {} })).status).toBe(200);
    expect((await svc.call("POST", `/events/${eventId}/redeliver`, { auth, body: { webhookEndpointId: id } })).status).toBe(202);
    expect((await svc.call("DELETE", `/webhook-endpoints/${first.body.id}`, { auth })).status).toBe(200);

    const byKey = { email: null, user_id: null, environment: "sandbox" };
    const via = { via: "api", keyId, keyPrefix };
    expect(await linesSince(mark)).toEqual([
      { action: "webhook_endpoint_created", ...byKey, detail: { endpointId: id, url: "http://localhost:3000/sec", ...via } },
      { action: "webhook_endpoint_created", ...byKey, detail: { endpointId: first.body.id, url: "http://localhost:3000/sec2", ...via } },
      { action: "webhook_endpoint_updated", ...byKey, detail: { endpointId: id, url: "http://localhost:3000/sec-moved", enabled: true, ...via } },
      { action: "webhook_secret_revealed", ...byKey, detail: { endpointId: id, ...via } },
      { action: "webhook_secret_rotated", ...byKey, detail: { endpointId: id, ...via } },
      { action: "webhook_event_redelivered", ...byKey, detail: { eventId, endpointId: id, ...via } },
      { action: "webhook_endpoint_deleted", ...byKey, detail: { endpointId: first.body.id, ...via } },
    ]);
    const page = await (await me.get("/dashboard/sandbox/settings/security")).text();
    expect(page).toContain(`API key ${keyPrefix}…`);
    expect(page).toContain("Redelivered an event");
    await svc.call("DELETE", `/webhook-endpoints/${id}`, { auth });
  });

  test("a line that cannot be written undoes its change (or, for a reveal, keeps the secret in)", async () => {
    const auth = m.sandboxKey;
    const id = (await svc.call("POST", "/webhook-endpoints", { auth, body: { url: "http://localhost:3000/atomic" } })).body.id as string;
    const before = await endpointRow(id);
    const endpoints = await endpointCount();
    const mark = await lineCount();

    const create = await refusingLines("webhook_endpoint_created", () => svc.call("POST", "/webhook-endpoints", { auth, body: { url: "http://localhost:3000/never" } }));
    expect(create.status).toBe(500);
    const createIdem = await refusingLines("webhook_endpoint_created", () =>
      svc.call("POST", "/webhook-endpoints", { auth, body: { url: "http://localhost:3000/never" }, headers: { "idempotency-key": "sec-atomic-1" } }),
    );
    expect(createIdem.status).toBe(500);
    expect(await endpointCount()).toBe(endpoints);

    const update = await refusingLines("webhook_endpoint_updated", () => svc.call("POST", `/webhook-endpoints/${id}`, { auth, body: { url: "http://localhost:3000/moved", enabled: false } }));
    expect(update.status).toBe(500);
    const rotate = await refusingLines("webhook_secret_rotated", () => svc.call("POST", `/webhook-endpoints/${id}/rotate-secret`, { auth, body: {} }));
    expect(rotate.status).toBe(500);
    const del = await refusingLines("webhook_endpoint_deleted", () => svc.call("DELETE", `/webhook-endpoints/${id}`, { auth }));
    expect(del.status).toBe(500);
    expect(await endpointRow(id)).toEqual(before);

    const reveal = await refusingLines("webhook_secret_revealed", () => svc.call("GET", `/webhook-endpoints/${id}/secret`, { auth }));
    expect(reveal.status).toBe(500);
    expect(JSON.stringify(reveal.body)).not.toContain("whsec_");

    const queued = await redeliveries();
    const redeliver = await refusingLines("webhook_event_redelivered", () => svc.call("POST", `/events/${eventId}/redeliver`, { auth, body: { webhookEndpointId: id } }));
    expect(redeliver.status).toBe(500);
    expect(await redeliveries()).toBe(queued);

    expect(await lineCount()).toBe(mark);
    await svc.call("DELETE", `/webhook-endpoints/${id}`, { auth });
  });

  test("a change that fails writes no line", async () => {
    const auth = m.sandboxKey;
    const id = (await svc.call("POST", "/webhook-endpoints", { auth, body: { url: "http://localhost:3000/fails", enabled: false } })).body.id as string;
    const mark = await lineCount();
    expect((await svc.call("POST", "/webhook-endpoints", { auth, body: { url: "ftp://nope" } })).status).toBe(400);
    expect((await svc.call("POST", `/webhook-endpoints/${id}`, { auth, body: { url: "not a url" } })).status).toBe(400);
    expect((await svc.call("POST", `/webhook-endpoints/${id}/rotate-secret`, { auth, body: { overlapSeconds: -1 } })).status).toBe(400);
    expect((await svc.call("POST", "/webhook-endpoints/whe_000000000000000000000000/rotate-secret", { auth, body: {} })).status).toBe(404);
    expect((await svc.call("GET", "/webhook-endpoints/whe_000000000000000000000000/secret", { auth })).status).toBe(404);
    expect((await svc.call("POST", `/events/${eventId}/redeliver`, { auth, body: { webhookEndpointId: id } })).body.error.code).toBe("webhook_endpoint_disabled");
    // Refused inside its own transaction (the endpoint's write fails): no line either.
    await sql().unsafe(`
      create or replace function app.test_refuse_write() returns trigger language plpgsql as $$
      begin if new.merchant_id = '${m.merchant.id}' then raise exception 'write refused by test'; end if; return new; end $$;
      create trigger test_refuse_write before insert or update on app.webhook_endpoints for each row execute function app.test_refuse_write();`);
    try {
      expect((await svc.call("POST", "/webhook-endpoints", { auth, body: { url: "http://localhost:3000/x" } })).status).toBe(500);
      expect((await svc.call("POST", `/webhook-endpoints/${id}`, { auth, body: { enabled: true } })).status).toBe(500);
      expect((await svc.call("DELETE", `/webhook-endpoints/${id}`, { auth })).status).toBe(500);
    } finally {
      await sql().unsafe(`drop trigger test_refuse_write on app.webhook_endpoints; drop function app.test_refuse_write();`);
    }
    expect(await lineCount()).toBe(mark);
    await svc.call("DELETE", `/webhook-endpoints/${id}`, { auth });
  });
});

describe("through the dashboard", () => {
  test("each change's line names the person", async () => {
    const mark = await lineCount();
    expect((await me.post("/dashboard/sandbox/settings/api-keys", { name: "from the dashboard" })).status).toBe(303);
    const newKey = (await sql()`select id, prefix from app.api_keys where merchant_id = ${m.merchant.id} and name = 'from the dashboard'`)[0]!;
    expect((await me.post(`/dashboard/sandbox/settings/api-keys/${newKey.id}/revoke`)).status).toBe(303);
    const added = await me.post("/dashboard/sandbox/settings/webhooks", { url: "http://localhost:3000/dash" });
    expect(added.status).toBe(303);
    await me.follow(added); // takes the one-time flash
    const id = (await sql()`select id from app.webhook_endpoints where merchant_id = ${m.merchant.id} and url = 'http://localhost:3000/dash'`)[0]!.id as string;
    expect((await me.post(`/dashboard/sandbox/settings/webhooks/${id}`, { url: "http://localhost:3000/dash2", description: "", enabled: "true" })).status).toBe(303);
    expect((await me.post(`/dashboard/sandbox/settings/webhooks/${id}/reveal`)).status).toBe(303);
    expect((await me.post(`/dashboard/sandbox/settings/webhooks/${id}/rotate`)).status).toBe(303);
    expect((await me.post(`/dashboard/sandbox/events/${eventId}/redeliver`, { endpoint: id })).status).toBe(303);
    expect((await me.post(`/dashboard/sandbox/settings/webhooks/${id}/delete`)).status).toBe(303);

    const byMe = { email: "sec@s.example", user_id: m.user.id, environment: "sandbox" };
    const via = { via: "dashboard" };
    expect(await linesSince(mark)).toEqual([
      // What the key may do is part of its line: a full-access key made is worth seeing as such.
      { action: "api_key_created", ...byMe, detail: { keyId: newKey.id, name: "from the dashboard", prefix: newKey.prefix, scopes: "full access", expiresAt: null, ...via } },
      { action: "api_key_revoked", ...byMe, detail: { keyId: newKey.id, name: "from the dashboard", prefix: newKey.prefix, ...via } },
      { action: "webhook_endpoint_created", ...byMe, detail: { endpointId: id, url: "http://localhost:3000/dash", ...via } },
      { action: "webhook_endpoint_updated", ...byMe, detail: { endpointId: id, url: "http://localhost:3000/dash2", enabled: true, ...via } },
      { action: "webhook_secret_revealed", ...byMe, detail: { endpointId: id, ...via } },
      { action: "webhook_secret_rotated", ...byMe, detail: { endpointId: id, ...via } },
      { action: "webhook_event_redelivered", ...byMe, detail: { eventId, endpointId: id, ...via } },
      { action: "webhook_endpoint_deleted", ...byMe, detail: { endpointId: id, ...via } },
    ]);
  });

  test("a line that cannot be written undoes its change; a change that fails writes no line", async () => {
    const keys = async () => (await sql()`select id, revoked_at from app.api_keys where merchant_id = ${m.merchant.id} order by id`) as unknown as { id: string; revoked_at: Date | null }[];
    const before = await keys();
    const mark = await lineCount();
    expect((await refusingLines("api_key_created", () => me.post("/dashboard/sandbox/settings/api-keys", { name: "never" }))).status).toBe(500);
    expect((await refusingLines("api_key_revoked", () => me.post(`/dashboard/sandbox/settings/api-keys/${keyId}/revoke`))).status).toBe(500);
    expect(await keys()).toEqual(before);
    const endpoints = await endpointCount();
    expect((await refusingLines("webhook_endpoint_created", () => me.post("/dashboard/sandbox/settings/webhooks", { url: "http://localhost:3000/never" }))).status).toBe(500);
    expect(await endpointCount()).toBe(endpoints);
    // Still usable: the key was not revoked.
    expect((await svc.call("GET", "/payment-sessions?limit=1", { auth: m.sandboxKey })).status).toBe(200);

    // Refused changes: no line.
    expect((await me.post("/dashboard/sandbox/settings/webhooks", { url: "ftp://nope" })).status).toBe(400);
    expect((await me.post("/dashboard/sandbox/settings/api-keys/key_000000000000000000000000/revoke")).status).toBe(404);
    expect(await lineCount()).toBe(mark);
  });
});
