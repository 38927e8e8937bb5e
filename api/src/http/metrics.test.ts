/** GET /metrics: Prometheus text, route templates not paths, aggregates only, optional token; /readyz bounded with a silent RPC. */
import { afterAll, expect, test } from "bun:test";
import { createServer, type Server } from "node:net";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { freePort } from "../../../testing/ports.ts";
import { loadChainsConfig } from "../../../shared/chains/config.ts";
import { NetworkReadiness } from "../onchain/network-status.ts";

const TOKEN = "metrics-token-0123456789";
const svc: TestService = await startTestService({ SERVICE_METRICS_TOKEN: TOKEN });
afterAll(() => svc.close());

test("metrics: token required, route templates, sessions by status, no ids or secrets", async () => {
  const { sandboxKey } = await svc.merchant();
  const created = await svc.call("POST", "/payment-sessions", { auth: sandboxKey, body: { amount: "1.00", currency: "USD" } });
  expect(created.status).toBe(201);
  const id = created.body.paymentSessionId as string;
  expect((await svc.call("GET", `/payment-sessions/${id}`, { auth: sandboxKey })).status).toBe(200);
  expect((await svc.call("GET", `/no/such/${id}`)).status).toBe(404);

  expect((await svc.call("GET", "/metrics")).body.error.code).toBe("credentials_missing");
  const wrong = await svc.call("GET", "/metrics", { auth: "not-the-token-at-all" });
  expect([wrong.status, wrong.body.error.code]).toEqual([401, "metrics_token_invalid"]);
  const res = await svc.call("GET", "/metrics", { auth: TOKEN });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  const text = res.body as string;
  expect(text).toContain('paysession_http_requests_total{method="POST",route="/payment-sessions",status="2xx"} 1');
  expect(text).toContain('paysession_http_requests_total{method="GET",route="/payment-sessions/:id",status="2xx"} 1');
  expect(text).toContain('paysession_http_requests_total{method="GET",route="unmatched",status="4xx"} 1');
  expect(text).toMatch(/paysession_http_request_duration_seconds_bucket\{method="POST",route="\/payment-sessions",le="\+Inf"\} 1/);
  expect(text).toContain('paysession_sessions{status="PENDING"} 1');
  expect(text).toContain("paysession_database_up 1");
  // One create, sent alone on an idle server; the keyed requests' lookups are counted too.
  expect(text).toContain('paysession_group_items_total{group="creates"} 1');
  expect(text).toContain('paysession_group_batches_total{group="creates"} 1');
  expect(text).toMatch(/paysession_group_items_total\{group="api_key_lookups"\} [1-9]/);
  expect(text).toMatch(/paysession_actor_lag_seconds [0-9.]+/);
  // This process, alive in the node registry; no node holds the indexer seat in this test.
  expect(text).toMatch(/paysession_nodes\{role="api"\} [1-9]/);
  expect(text).toContain("paysession_indexer_seat_held 0");
  for (const secret of [id, sandboxKey, TOKEN, created.body.paymentSessionToken, created.body.merchantId]) expect(text).not.toContain(secret);
  // Every sample line is `name{labels} value` or `name value`.
  for (const line of text.trim().split("\n")) if (!line.startsWith("#")) expect(line).toMatch(/^[a-z_]+(\{[^}]*\})? [-+0-9.eInfNa]+$/);
});

test("/readyz answers within a second when a network's RPC accepts connections and never answers", async () => {
  const sockets: import("node:net").Socket[] = [];
  const silent: Server = createServer((s) => void sockets.push(s));
  const port = await freePort();
  await new Promise<void>((r) => silent.listen(port, "127.0.0.1", r));
  const env = { SERVICE_RPC_URL_LOCAL: `http://127.0.0.1:${port}`, SERVICE_RPC_URL_BASE: "" };
  const networks = loadChainsConfig({ ...env, SERVICE_INDEX_MODE: "full" }).networks;
  const s = await startTestService(env, { networks, readiness: new NetworkReadiness(networks, { refreshMs: 0 }) });
  try {
    const t0 = performance.now();
    const r = await s.call("GET", "/readyz");
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(r.status).toBe(200);
    expect(r.body.networks[0].ready).toBe(false);
  } finally {
    await s.close();
    for (const x of sockets) x.destroy();
    silent.close();
  }
});
