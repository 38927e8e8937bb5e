/**
 * Sandbox keys must not reach the operator's private network: loopback and private webhook
 * targets only with SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS, and never an echo of what such a
 * target answers (test endpoint, attempt log).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { startReceiver, type Receiver } from "../../../testing/webhook-receiver.ts";
import type { Resolver } from "../webhooks/target.ts";

const DNS: Record<string, string[]> = {
  "hooks.example": ["93.184.215.14"],
  "inside.example": ["10.1.2.3"],
  "loop.example": ["127.0.0.1"],
};
const resolver: Resolver = async (host) => {
  const a = DNS[host];
  if (!a) throw new Error("ENOTFOUND");
  return a;
};

let rcv: Receiver;
beforeAll(() => {
  rcv = startReceiver();
  rcv.behave(() => new Response('{"internal":"admin-console-secret"}', { status: 200 }));
});
afterAll(() => rcv.stop());

describe("default (production config): private targets refused for sandbox keys too", () => {
  let svc: TestService;
  let key: string;
  beforeAll(async () => {
    svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false", SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: "false" }, { resolver });
    key = (await svc.merchant()).sandboxKey;
  });
  afterAll(() => svc.close());

  test("the setting is off unless set", async () => {
    const plain = await startTestService({ SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: "" });
    try {
      expect(plain.config.webhooks.allowPrivateTargets).toBe(false);
    } finally {
      await plain.close();
    }
  });

  test("loopback, private and names resolving to them are 400 url_address_forbidden; public is fine", async () => {
    for (const url of [rcv.url + "/h", "http://localhost:3000/h", "http://10.0.0.5/h", "http://[::1]/h", "http://192.168.1.1/h", "http://inside.example/h", "http://loop.example/h", "http://[fd00::1]/h", "http://100.64.0.1/h"]) {
      const r = await svc.call("POST", "/webhook-endpoints", { auth: key, body: { url } });
      expect({ url, status: r.status, code: r.body.error?.code, param: r.body.error?.param }).toEqual({ url, status: 400, code: "url_address_forbidden", param: "url" });
      expect(r.body.error.message).toContain("SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS");
    }
    expect((await svc.call("POST", "/webhook-endpoints", { auth: key, body: { url: "http://hooks.example/h" } })).status).toBe(201);
  });

  test("an endpoint saved while private targets were allowed is not delivered to once they are not", async () => {
    const [row] = await svc.services.database.sql`
      select id from app.webhook_endpoints where url = 'http://hooks.example/h' limit 1`;
    await svc.services.database.sql`update app.webhook_endpoints set url = ${rcv.url + "/h"} where id = ${row!.id}`;
    const before = rcv.received.length;
    const t = await svc.call("POST", `/webhook-endpoints/${row!.id}/test`, { auth: key, body: {} });
    expect(t.status).toBe(200);
    expect(t.body.attempt.succeeded).toBe(false);
    expect(t.body.attempt.error).toMatch(/^refused: /);
    expect(rcv.received.length).toBe(before);
  });
});

describe("SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS=true: private targets allowed in sandbox, their answers never echoed", () => {
  let svc: TestService;
  let m: Awaited<ReturnType<TestService["merchant"]>>;
  beforeAll(async () => {
    svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false", SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: "true" }, { resolver });
    m = await svc.merchant();
  });
  afterAll(() => svc.close());

  test("the test endpoint and the attempt log show the status code but not the body of a loopback answer", async () => {
    const c = await svc.call("POST", "/webhook-endpoints", { auth: m.sandboxKey, body: { url: rcv.url + "/internal" } });
    expect(c.status).toBe(201);
    const t = await svc.call("POST", `/webhook-endpoints/${c.body.id}/test`, { auth: m.sandboxKey, body: {} });
    expect(t.status).toBe(200);
    expect(t.body.attempt).toMatchObject({ succeeded: true, statusCode: 200, responseBody: null });
    expect(JSON.stringify(t.body)).not.toContain("admin-console-secret");
    const log = await svc.call("GET", `/webhook-endpoints/${c.body.id}/attempts`, { auth: m.sandboxKey });
    expect(log.body.data[0].responseBody).toBeNull();
    expect(JSON.stringify(log.body)).not.toContain("admin-console-secret");
    const [stored] = await svc.services.database.sql`select response_excerpt from app.webhook_attempts where endpoint_id = ${c.body.id}`;
    expect(stored!.response_excerpt).toBeNull();
  });

  test("production keys still get public targets only", async () => {
    const r = await svc.call("POST", "/webhook-endpoints", { auth: m.liveKey, body: { url: "https://loop.example/h" } });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("url_address_forbidden");
  });
});
