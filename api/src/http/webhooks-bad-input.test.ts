/**
 * The bad-input sweep of bad-input.test.ts, for the webhook and event routes: every
 * malformed request gets a documented 4xx naming the parameter, and changes nothing.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { ERROR_CATALOGUE } from "../errors.ts";

let svc: TestService;
let key: string;
let endpointId: string;
let eventId: string;
beforeAll(async () => {
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false" }, { resolver: async () => { throw new Error("no DNS in this test"); } });
  key = (await svc.merchant()).sandboxKey;
  endpointId = (await svc.call("POST", "/webhook-endpoints", { auth: key, body: { url: "http://localhost:9/h" } })).body.id;
  await svc.call("POST", "/payment-sessions", { auth: key, body: { amount: "10.00", currency: "USD" } });
  eventId = (await svc.call("GET", "/events", { auth: key })).body.data[0].id;
});
afterAll(() => svc.close());

interface Case {
  name: string;
  method: string;
  path: string;
  body?: string;
  contentType?: string;
  headers?: Record<string, string>;
  param?: string;
  noAuth?: boolean;
}

const BAD_URLS: unknown[] = [
  "", "x", "localhost", "//example.com", "http://", "ftp://example.com", "mailto:a@b.c", "javascript:alert(1)", "http://a b.com", "http://exa\u0000mple.com",
  "http://user:pw@localhost/", "http://localhost/#x", "http://169.254.169.254/", "http://[fe80::1]/", "http://0.0.0.0/", "http://224.0.0.1/", "http://nowhere.example/",
  "http://intranet/", "https://" + "a".repeat(2050), 1, true, null, [], {}, ["http://localhost"],
];
const BAD_DESCRIPTIONS: unknown[] = [1, true, null, [], {}, "d".repeat(257), "a\u0000b"];
const BAD_ENABLED: unknown[] = ["true", 1, 0, null, [], {}, "yes"];
const BAD_OVERLAP: unknown[] = [-1, 604801, 1.5, "60", null, true, [], 1e12];
const RAW_BODIES = ["{", "[", "null", "42", '"x"', "[]", '{"url":}', "\u0000"];
const BAD_IDS = ["x", "whe_", "whe_" + "a".repeat(300), "evt_nope", "ps_" + "a".repeat(24), "%00", "..%2F..", "whe_aaaaaaaaaaaaaaaaaaaaaaaa", "%", "%ZZ", "%FF%FE", "%ED%A0%80"];

function cases(): Case[] {
  const out: Case[] = [];
  const create = (name: string, body: unknown, param?: string) => out.push({ name, method: "POST", path: "/webhook-endpoints", body: JSON.stringify(body), param });
  for (const u of BAD_URLS) create(`create url ${JSON.stringify(u).slice(0, 30)}`, { url: u }, "url");
  for (const d of BAD_DESCRIPTIONS) create(`create description ${JSON.stringify(d).slice(0, 30)}`, { url: "http://localhost:1/", description: d }, "description");
  for (const e of BAD_ENABLED) create(`create enabled ${JSON.stringify(e)}`, { url: "http://localhost:1/", enabled: e }, "enabled");
  for (const f of ["secret", "id", "environment", "URL", "events", "__proto__"]) out.push({ name: `create unknown ${f}`, method: "POST", path: "/webhook-endpoints", body: `{"url":"http://localhost:1/",${JSON.stringify(f)}:1}`, param: f });
  create("create missing url", { description: "x" }, "url");
  for (const raw of RAW_BODIES) out.push({ name: `create raw ${JSON.stringify(raw)}`, method: "POST", path: "/webhook-endpoints", body: raw });
  out.push({ name: "create text/plain", method: "POST", path: "/webhook-endpoints", body: '{"url":"http://localhost:1/"}', contentType: "text/plain" });
  out.push({ name: "create huge", method: "POST", path: "/webhook-endpoints", body: JSON.stringify({ url: "http://localhost:1/", description: "x".repeat(70_000) }) });
  out.push({ name: "create bad idempotency key", method: "POST", path: "/webhook-endpoints", body: '{"url":"http://localhost:1/"}', headers: { "idempotency-key": "" } });

  const update = (name: string, body: unknown, param?: string) => out.push({ name, method: "POST", path: `/webhook-endpoints/${endpointId}`, body: JSON.stringify(body), param });
  for (const u of BAD_URLS.filter((u) => u !== "")) update(`update url ${JSON.stringify(u).slice(0, 30)}`, { url: u }, "url");
  for (const d of BAD_DESCRIPTIONS) update(`update description ${JSON.stringify(d).slice(0, 30)}`, { description: d }, "description");
  for (const e of BAD_ENABLED) update(`update enabled ${JSON.stringify(e)}`, { enabled: e }, "enabled");
  update("update unknown", { secret: "whsec_x" }, "secret");
  for (const raw of RAW_BODIES) out.push({ name: `update raw ${JSON.stringify(raw)}`, method: "POST", path: `/webhook-endpoints/${endpointId}`, body: raw });

  for (const o of BAD_OVERLAP) out.push({ name: `rotate overlap ${JSON.stringify(o)}`, method: "POST", path: `/webhook-endpoints/${endpointId}/rotate-secret`, body: JSON.stringify({ overlapSeconds: o }), param: "overlapSeconds" });
  out.push({ name: "rotate unknown", method: "POST", path: `/webhook-endpoints/${endpointId}/rotate-secret`, body: '{"secret":"whsec_x"}', param: "secret" });
  out.push({ name: "test with params", method: "POST", path: `/webhook-endpoints/${endpointId}/test`, body: '{"type":"x"}', param: "type" });
  for (const w of [1, null, true, "", "whe_x", "x".repeat(65)]) {
    out.push({ name: `redeliver endpoint ${JSON.stringify(w)}`, method: "POST", path: `/events/${eventId}/redeliver`, body: JSON.stringify({ webhookEndpointId: w }), param: "webhookEndpointId" });
  }
  out.push({ name: "redeliver unknown", method: "POST", path: `/events/${eventId}/redeliver`, body: '{"endpoint":"x"}', param: "endpoint" });
  for (const raw of RAW_BODIES) out.push({ name: `redeliver raw ${JSON.stringify(raw)}`, method: "POST", path: `/events/${eventId}/redeliver`, body: raw });

  for (const id of BAD_IDS) {
    for (const [m, p] of [
      ["GET", `/webhook-endpoints/${id}`],
      ["POST", `/webhook-endpoints/${id}`],
      ["DELETE", `/webhook-endpoints/${id}`],
      ["GET", `/webhook-endpoints/${id}/secret`],
      ["POST", `/webhook-endpoints/${id}/rotate-secret`],
      ["POST", `/webhook-endpoints/${id}/test`],
      ["GET", `/webhook-endpoints/${id}/attempts`],
      ["GET", `/events/${id}`],
      ["GET", `/events/${id}/attempts`],
      ["POST", `/events/${id}/redeliver`],
    ] as const) {
      out.push({ name: `${m} ${p.slice(0, 40)}`, method: m, path: p });
    }
  }
  for (const q of ["limit=0", "limit=101", "limit=-1", "limit=1.5", "limit=", "startingAfter=", "startingAfter=evt_x", "startingAfter=ps_x", "paymentSessionId=", "paymentSessionId=x", "type=pending", "type=", "type=webhook.test"]) {
    out.push({ name: `events ${q}`, method: "GET", path: `/events?${q}`, param: q.split("=")[0] });
  }
  for (const q of ["limit=0", "limit=abc", "startingAfter=wha_x", "startingAfter=" + "w".repeat(30)]) {
    out.push({ name: `endpoint attempts ${q}`, method: "GET", path: `/webhook-endpoints/${endpointId}/attempts?${q}`, param: q.split("=")[0] });
    out.push({ name: `event attempts ${q}`, method: "GET", path: `/events/${eventId}/attempts?${q}`, param: q.split("=")[0] });
  }
  for (const [m, p] of [["PUT", "/webhook-endpoints"], ["PATCH", `/webhook-endpoints/${endpointId}`], ["DELETE", "/events"], ["POST", "/events"], ["PUT", `/events/${eventId}`], ["GET", `/events/${eventId}/redeliver`], ["GET", `/webhook-endpoints/${endpointId}/rotate-secret`]] as const) {
    out.push({ name: `route ${m} ${p}`, method: m, path: p });
  }
  // every case again without a usable credential: auth fails first, with its own code
  const withAuth = [...out];
  for (const c of withAuth) out.push({ ...c, name: `${c.name} / no auth`, noAuth: true, param: undefined });
  return out;
}

async function snapshot() {
  const [r] = await svc.services.database.sql`
    select (select count(*) from app.webhook_endpoints)::int as endpoints,
           (select count(*) from app.webhook_deliveries)::int as deliveries,
           (select count(*) from app.webhook_attempts)::int as attempts,
           (select count(*) from app.session_events)::int as events,
           (select string_agg(id || url || enabled::text || coalesce(description, '') || secret_sealed || coalesce(deleted_at::text, ''), ',' order by id) from app.webhook_endpoints) as rows`;
  return r;
}

test("hundreds of malformed webhook requests: each a documented 4xx, nothing written", async () => {
  const all = cases();
  expect(all.length).toBeGreaterThan(300);
  const before = await snapshot();
  const failures: string[] = [];
  const queue = [...all];
  await Promise.all(
    Array.from({ length: 12 }, async () => {
      for (let c = queue.shift(); c; c = queue.shift()) {
        const headers: Record<string, string> = { ...(c.headers ?? {}) };
        headers.authorization = c.noAuth ? "Bearer sk_test_" + "Z".repeat(40) : `Bearer ${key}`;
        if (c.body !== undefined) headers["content-type"] = c.contentType ?? "application/json";
        const res = await fetch(`${svc.url}${c.path}`, { method: c.method, headers, body: c.body });
        const text = await res.text();
        let e: any;
        try {
          e = JSON.parse(text).error;
        } catch {
          failures.push(`${c.name}: non-JSON ${res.status} ${text.slice(0, 80)}`);
          continue;
        }
        const entry = e && ERROR_CATALOGUE[e.code as keyof typeof ERROR_CATALOGUE];
        if (res.status < 400 || res.status >= 500) failures.push(`${c.name}: status ${res.status} ${text.slice(0, 160)}`);
        else if (!entry || entry.status !== res.status || entry.type !== e.type) failures.push(`${c.name}: ${res.status} ${e?.code} not as catalogued`);
        else if (!/^req_/.test(e.requestId)) failures.push(`${c.name}: no requestId`);
        // (Query strings are checked against the route's schema by Elysia before the handler runs, as on GET /payment-sessions.)
        else if (c.noAuth && e.code !== "api_key_invalid" && !["route_not_found", "method_not_allowed", "body_too_large"].includes(e.code) && !(c.path.includes("?") && e.code === "parameter_invalid"))
          failures.push(`${c.name}: ${e.code} before auth`);
        else if (c.param !== undefined && e.param !== c.param) failures.push(`${c.name}: param ${e.param} (${e.code}: ${e.message}), expected ${c.param}`);
      }
    }),
  );
  if (failures.length) console.error(failures.join("\n"));
  expect(failures).toEqual([]);
  expect(await snapshot()).toEqual(before);
}, 60_000);
