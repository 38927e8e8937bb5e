/**
 * Requests that name no host: HTTP/1.0 without a Host header (what a load balancer's default health
 * check sends) and HTTP/1.1 with an empty one. Bun hands them over with a relative url; every
 * route answers them as it answers the same request with a Host, never 500.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { rawRequest } from "../../../testing/raw-http.ts";

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false" });
});
afterAll(async () => {
  await svc?.stop();
});

const CASES: { path: string; extra?: string; status: number }[] = [
  { path: "/healthz", status: 200 },
  { path: "/readyz", status: 200 },
  { path: "/payment-sessions?limit=1", status: 401 },
  { path: "/payment-sessions?limit=1", extra: "Authorization: Bearer sk_test_nothing", status: 401 },
  { path: "/dashboard/sign-in", status: 200 },
  { path: "/docs", status: 200 },
  { path: "/no-such-route", status: 404 },
];

for (const version of ["HTTP/1.0 without Host", "HTTP/1.1 with an empty Host"]) {
  test(`${version}: each route answers as with a Host, none 500`, async () => {
    const seen: Record<string, number | string> = {};
    const expected: Record<string, number> = {};
    for (const c of CASES) {
      const head = version.startsWith("HTTP/1.0") ? `GET ${c.path} HTTP/1.0` : `GET ${c.path} HTTP/1.1\r\nHost: `;
      const a = await rawRequest(svc.url, `${head}\r\nConnection: close${c.extra ? `\r\n${c.extra}` : ""}`);
      const key = `${c.path}${c.extra ? " (key)" : ""}`;
      seen[key] = a.status ?? a.noAnswer ?? "none";
      expected[key] = c.status;
    }
    expect(seen).toEqual(expected);
  }, 30_000);
}
