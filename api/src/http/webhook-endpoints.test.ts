/** The webhook-endpoint and event routes: CRUD, secrets, environments, the URL guard on save, events. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../../testing/service.ts";
import type { Resolver } from "../webhooks/target.ts";

// DNS for these tests: names we made up, answered without the network.
const DNS: Record<string, string[]> = {
  "hooks.example": ["93.184.215.14"],
  "v6.example": ["2606:4700::6810:84e5"],
  "inside.example": ["10.1.2.3"],
  "mixed.example": ["93.184.215.14", "192.168.1.10"],
  "metadata.example": ["169.254.169.254"],
  "mapped.example": ["::ffff:127.0.0.1"],
};
const resolver: Resolver = async (host) => {
  const a = DNS[host];
  if (!a) throw new Error("ENOTFOUND");
  return a;
};

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false" }, { resolver });
});
afterAll(() => svc.close());

test("create, list, retrieve, update, reveal, delete; the secret shows on creation and on demand only", async () => {
  const { sandboxKey: key } = await svc.merchant();
  const c = await svc.call("POST", "/webhook-endpoints", { auth: key, body: { url: "http://localhost:3000/hooks", description: "orders" } });
  expect(c.status).toBe(201);
  expect(c.body).toMatchObject({ url: "http://localhost:3000/hooks", description: "orders", enabled: true, disabledReason: null, environment: "sandbox", previousSecretExpiresAt: null });
  expect(c.body.id).toMatch(/^whe_[0-9A-Za-z]{24}$/);
  expect(c.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
  const id = c.body.id;
  const [stored] = await svc.services.database.sql`select secret_sealed from app.webhook_endpoints where id = ${id}`;
  expect(stored!.secret_sealed).not.toContain(c.body.secret.slice(6));

  const one = await svc.call("GET", `/webhook-endpoints/${id}`, { auth: key });
  expect(one.body.secret).toBeUndefined();
  const { secret, ...view } = c.body;
  expect(one.body).toEqual(view);
  const list = await svc.call("GET", "/webhook-endpoints", { auth: key });
  expect(list.body.data).toEqual([view]);
  expect((await svc.call("GET", `/webhook-endpoints/${id}/secret`, { auth: key })).body).toEqual({ secret, previousSecretExpiresAt: null });

  const u = await svc.call("POST", `/webhook-endpoints/${id}`, { auth: key, body: { url: "http://127.0.0.1:4001/h", description: "", enabled: false } });
  expect(u.status).toBe(200);
  expect(u.body).toMatchObject({ url: "http://127.0.0.1:4001/h", description: null, enabled: false });
  const none = await svc.call("POST", `/webhook-endpoints/${id}`, { auth: key, body: {} });
  expect(none.body.url).toBe("http://127.0.0.1:4001/h");

  const d = await svc.call("DELETE", `/webhook-endpoints/${id}`, { auth: key });
  expect(d.body).toEqual({ id, deleted: true });
  for (const [m, p] of [["GET", `/webhook-endpoints/${id}`], ["GET", `/webhook-endpoints/${id}/secret`], ["DELETE", `/webhook-endpoints/${id}`], ["POST", `/webhook-endpoints/${id}/test`]] as const) {
    expect((await svc.call(m, p, { auth: key })).body.error.code).toBe("resource_not_found");
  }
  expect((await svc.call("GET", "/webhook-endpoints", { auth: key })).body.data).toEqual([]);
});

test("endpoints belong to one merchant and one environment", async () => {
  const a = await svc.merchant("A");
  const b = await svc.merchant("B");
  const c = await svc.call("POST", "/webhook-endpoints", { auth: a.sandboxKey, body: { url: "http://localhost:9/x" } });
  for (const key of [a.liveKey, b.sandboxKey, b.liveKey]) {
    expect((await svc.call("GET", `/webhook-endpoints/${c.body.id}`, { auth: key })).status).toBe(404);
    expect((await svc.call("GET", `/webhook-endpoints/${c.body.id}/secret`, { auth: key })).status).toBe(404);
    expect((await svc.call("POST", `/webhook-endpoints/${c.body.id}/rotate-secret`, { auth: key })).status).toBe(404);
    expect((await svc.call("GET", "/webhook-endpoints", { auth: key })).body.data).toEqual([]);
  }
  // a session of A's sandbox: its events are A's sandbox's alone
  const s = await svc.call("POST", "/payment-sessions", { auth: a.sandboxKey, body: { amount: "1.00", currency: "USD" } });
  const ev = await svc.call("GET", "/events", { auth: a.sandboxKey });
  expect(ev.body.data.map((e: any) => e.data.paymentSessionId)).toEqual([s.body.paymentSessionId]);
  for (const key of [a.liveKey, b.sandboxKey]) {
    expect((await svc.call("GET", "/events", { auth: key })).body.data).toEqual([]);
    expect((await svc.call("GET", `/events/${ev.body.data[0].id}`, { auth: key })).status).toBe(404);
  }
  // and the delivery row was written with the session, in the same statement
  const [n] = await svc.services.database.sql`select count(*)::int as n from app.webhook_deliveries where endpoint_id = ${c.body.id}`;
  expect(n!.n).toBe(1);
});

test("at most 16 endpoints per environment; Idempotency-Key replays the creation, secret included", async () => {
  const { sandboxKey: key, liveKey } = await svc.merchant();
  const first = await svc.call("POST", "/webhook-endpoints", { auth: key, body: { url: "http://localhost:1/a" }, headers: { "idempotency-key": "ep-1" } });
  const again = await svc.call("POST", "/webhook-endpoints", { auth: key, body: { url: "http://localhost:1/a" }, headers: { "idempotency-key": "ep-1" } });
  expect(again.body).toEqual(first.body);
  expect(again.headers.get("idempotent-replayed")).toBe("true");
  const other = await svc.call("POST", "/webhook-endpoints", { auth: key, body: { url: "http://localhost:1/b" }, headers: { "idempotency-key": "ep-1" } });
  expect(other.body.error.code).toBe("idempotency_key_reused");
  for (let i = 1; i < 16; i++) expect((await svc.call("POST", "/webhook-endpoints", { auth: key, body: { url: `http://localhost:1/${i}` } })).status).toBe(201);
  const over = await svc.call("POST", "/webhook-endpoints", { auth: key, body: { url: "http://localhost:1/17" } });
  expect([over.status, over.body.error.code]).toEqual([409, "webhook_endpoint_limit_reached"]);
  expect((await svc.call("POST", "/webhook-endpoints", { auth: liveKey, body: { url: "https://hooks.example/x" } })).status).toBe(201);
});

test("the URL guard on save: production https and public only, sandbox also local, never metadata; nothing written on refusal", async () => {
  const { sandboxKey, liveKey } = await svc.merchant();
  const before = await svc.count("webhook_endpoints");
  const refused: [string, string, string][] = [
    [liveKey, "http://hooks.example/x", "url_https_required"],
    [liveKey, "https://127.0.0.1/x", "url_address_forbidden"],
    [liveKey, "https://localhost/x", "url_address_forbidden"],
    [liveKey, "https://[::1]/x", "url_address_forbidden"],
    [liveKey, "https://10.0.0.1/x", "url_address_forbidden"],
    [liveKey, "https://172.20.1.1/x", "url_address_forbidden"],
    [liveKey, "https://192.168.0.1/x", "url_address_forbidden"],
    [liveKey, "https://100.64.1.1/x", "url_address_forbidden"],
    [liveKey, "https://169.254.169.254/latest", "url_address_forbidden"],
    [liveKey, "https://[fe80::1]/x", "url_address_forbidden"],
    [liveKey, "https://[fd00::1]/x", "url_address_forbidden"],
    [liveKey, "https://[::ffff:10.0.0.1]/x", "url_address_forbidden"],
    [liveKey, "https://0.0.0.0/x", "url_address_forbidden"],
    [liveKey, "https://2130706433/x", "url_address_forbidden"],
    [liveKey, "https://inside.example/x", "url_address_forbidden"],
    [liveKey, "https://mixed.example/x", "url_address_forbidden"],
    [liveKey, "https://metadata.example/x", "url_address_forbidden"],
    [liveKey, "https://mapped.example/x", "url_address_forbidden"],
    [liveKey, "https://nowhere.example/x", "url_unresolvable"],
    [liveKey, "https://user:pw@hooks.example/x", "url_invalid"],
    [liveKey, "ftp://hooks.example/x", "url_invalid"],
    [liveKey, "hooks.example/x", "url_invalid"],
    [sandboxKey, "http://169.254.169.254/x", "url_address_forbidden"],
    [sandboxKey, "http://metadata.example/x", "url_address_forbidden"],
    [sandboxKey, "http://[fe80::1]:80/x", "url_address_forbidden"],
    [sandboxKey, "http://nowhere.example/x", "url_unresolvable"],
  ];
  for (const [key, url, code] of refused) {
    const r = await svc.call("POST", "/webhook-endpoints", { auth: key, body: { url } });
    expect([url, r.status, r.body.error?.code, r.body.error?.param]).toEqual([url, 400, code, "url"]);
    expect(r.body.error.message.length).toBeGreaterThan(10);
  }
  expect(await svc.count("webhook_endpoints")).toBe(before);
  for (const [key, url] of [
    [liveKey, "https://hooks.example/x"],
    [liveKey, "https://v6.example:8443/x?y=1"],
    [liveKey, "https://93.184.215.14/x"],
    [sandboxKey, "http://localhost:3000/x"],
    [sandboxKey, "http://inside.example/x"],
    [sandboxKey, "http://[::1]:3000/x"],
  ] as const) {
    const r = await svc.call("POST", "/webhook-endpoints", { auth: key, body: { url } });
    expect([url, r.status]).toEqual([url, 201]);
  }
  // an update goes through the same guard
  const ep = (await svc.call("GET", "/webhook-endpoints", { auth: liveKey })).body.data[0];
  const u = await svc.call("POST", `/webhook-endpoints/${ep.id}`, { auth: liveKey, body: { url: "https://inside.example/x" } });
  expect([u.status, u.body.error.code]).toEqual([400, "url_address_forbidden"]);
  expect((await svc.call("GET", `/webhook-endpoints/${ep.id}`, { auth: liveKey })).body.url).toBe(ep.url);
});

test("events: newest first, cursor pagination, filter by session and type; redeliver needs an enabled endpoint", async () => {
  const { sandboxKey: key } = await svc.merchant();
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const s = await svc.call("POST", "/payment-sessions", { auth: key, body: { amount: "2.00", currency: "USD" } });
    ids.push(s.body.paymentSessionId);
  }
  await svc.call("POST", `/payment-sessions/${ids[1]}/cancel`, { auth: key });
  const all = await svc.call("GET", "/events?limit=100", { auth: key });
  expect(all.body.data.length).toBe(4);
  expect(all.body.data[0].type).toBe("payment_session.canceled");
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const page: any = await svc.call("GET", `/events?limit=1${cursor ? `&startingAfter=${cursor}` : ""}`, { auth: key });
    seen.push(...page.body.data.map((e: any) => e.id));
    cursor = page.body.nextCursor;
  } while (cursor);
  expect(seen).toEqual(all.body.data.map((e: any) => e.id));
  const bySession = await svc.call("GET", `/events?paymentSessionId=${ids[1]}`, { auth: key });
  expect(bySession.body.data.map((e: any) => [e.type, e.data.sequence])).toEqual([
    ["payment_session.canceled", 2],
    ["payment_session.pending", 1],
  ]);
  const byType = await svc.call("GET", "/events?type=payment_session.canceled", { auth: key });
  expect(byType.body.data.map((e: any) => e.data.paymentSessionId)).toEqual([ids[1]]);
  const one = await svc.call("GET", `/events/${bySession.body.data[0].id}`, { auth: key });
  expect(one.body.deliveries).toEqual([]);
  const r = await svc.call("POST", `/events/${one.body.id}/redeliver`, { auth: key });
  expect([r.status, r.body.error.code]).toEqual([409, "no_webhook_endpoint"]);
  const ep = await svc.call("POST", "/webhook-endpoints", { auth: key, body: { url: "http://localhost:1/x", enabled: false } });
  const r2 = await svc.call("POST", `/events/${one.body.id}/redeliver`, { auth: key, body: { webhookEndpointId: ep.body.id } });
  expect([r2.status, r2.body.error.code]).toEqual([409, "webhook_endpoint_disabled"]);
  // events written while the endpoint was disabled were not queued for it
  const [n] = await svc.services.database.sql`select count(*)::int as n from app.webhook_deliveries where endpoint_id = ${ep.body.id}`;
  expect(n!.n).toBe(0);
});

test("Swagger documents every webhook route with its errors", async () => {
  const spec = (await svc.call("GET", "/docs/json")).body;
  const routes: [string, string][] = [
    ["/webhook-endpoints", "post"],
    ["/webhook-endpoints", "get"],
    ["/webhook-endpoints/{id}", "get"],
    ["/webhook-endpoints/{id}", "post"],
    ["/webhook-endpoints/{id}", "delete"],
    ["/webhook-endpoints/{id}/secret", "get"],
    ["/webhook-endpoints/{id}/rotate-secret", "post"],
    ["/webhook-endpoints/{id}/test", "post"],
    ["/webhook-endpoints/{id}/attempts", "get"],
    ["/events", "get"],
    ["/events/{id}", "get"],
    ["/events/{id}/attempts", "get"],
    ["/events/{id}/redeliver", "post"],
  ];
  for (const [path, method] of routes) {
    const op = spec.paths[path]?.[method];
    expect([path, method, !!op]).toEqual([path, method, true]);
    expect(op.security).toEqual([{ apiKey: [] }]);
    expect(Object.keys(op.responses)).toContain("401");
  }
  expect(spec.paths["/webhook-endpoints"].post.responses["400"].description).toContain("url_address_forbidden");
  expect(spec.paths["/events/{id}/redeliver"].post.responses["409"].description).toContain("no_webhook_endpoint");
});
