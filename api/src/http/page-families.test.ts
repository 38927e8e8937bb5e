/**
 * An error answer under a page's path carries the same security headers as the page: the
 * dashboard's and the checkout's 404 (router), 405, 413 (the HTTP front, before any route), 429
 * (the dashboard's action limit) and 500 (the error mapping). The deadline's and the database's
 * 503 are in database-lock.test.ts. And which family a path belongs to (pure).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { merchantWithUser, signIn, type Browser } from "../../../testing/dashboard.ts";
import { rawRequest } from "../../../testing/raw-http.ts";
import { familyOf, type PageFamily } from "./page-families.ts";
import { buildApp } from "./app.ts";
import { DASHBOARD_PAGES } from "../dashboard/request.ts";
import { MAX_BODY_BYTES } from "./body.ts";

const NAMES = ["content-security-policy", "x-frame-options", "x-content-type-options", "referrer-policy", "cross-origin-opener-policy", "cross-origin-resource-policy", "permissions-policy"];
const securityOf = (h: Headers | Record<string, string>) =>
  Object.fromEntries(NAMES.map((n) => [n, h instanceof Headers ? h.get(n) : (h[n] ?? null)]));

describe("familyOf", () => {
  const families: PageFamily[] = [{ prefix: "/dashboard", headers: { a: "1" } }, { prefix: "/checkout/v1", headers: { b: "1" } }, { prefix: "/checkout/v1/inner/", headers: { c: "1" } }];
  test("the path itself and what is under it, never a longer name; the longest prefix wins", () => {
    expect(familyOf(families, "/dashboard")?.headers).toEqual({ a: "1" });
    expect(familyOf(families, "/dashboard/sandbox/x")?.headers).toEqual({ a: "1" });
    expect(familyOf(families, "/dashboardx")).toBeUndefined();
    expect(familyOf(families, "/checkout/v1/")?.headers).toEqual({ b: "1" });
    expect(familyOf(families, "/checkout/v1/inner/x")?.headers).toEqual({ c: "1" });
    expect(familyOf(families, "/payment-sessions")).toBeUndefined();
  });
});

let svc: TestService;
let browser: Browser;
const page: Record<string, Record<string, string | null>> = {};
beforeAll(async () => {
  // One action a second per person: the second action in a row is refused 429.
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false", SERVICE_RATE_LIMIT_PER_SECOND: "1", SERVICE_RATE_LIMIT_BURST: "1" });
  await merchantWithUser(svc, "headers@example.com");
  browser = await signIn(svc, "headers@example.com");
  for (const [family, path] of [["dashboard", "/dashboard/sign-in"], ["checkout", "/checkout/v1/"]] as const) {
    const res = await fetch(`${svc.url}${path}`);
    await res.arrayBuffer();
    expect(res.status).toBe(200);
    page[family] = securityOf(res.headers);
  }
  expect(page.dashboard!["x-frame-options"]).toBe("DENY");
  expect(page.checkout!["content-security-policy"]).toContain("frame-ancestors *");
});
afterAll(() => svc.close());

test("the dashboard's and the checkout's 404, 405, 413 and 429 carry their page's security headers", async () => {
  const over = "x".repeat(MAX_BODY_BYTES + 1);
  const { host } = new URL(svc.url);
  const post413 = async (path: string) => {
    const a = await rawRequest(svc.url, [`POST ${path} HTTP/1.1`, `Host: ${host}`, "Content-Type: application/x-www-form-urlencoded", `Content-Length: ${over.length}`].join("\r\n"), over);
    return { status: a.status, headers: a.headers };
  };
  const answers: [string, string, { status?: number; headers: Headers | Record<string, string> }][] = [
    ["dashboard", "404 no such page", await fetch(`${svc.url}/dashboard/no/such/page`)],
    ["dashboard", "405 wrong method", await fetch(`${svc.url}/dashboard/sign-in`, { method: "PUT" })],
    ["dashboard", "413 over the body cap", await post413("/dashboard/sign-in")],
    ["checkout", "404 no such asset", await fetch(`${svc.url}/checkout/v1/nothing.js`)],
    ["checkout", "405 wrong method", await fetch(`${svc.url}/checkout/v1/`, { method: "POST", body: "{}" })],
    ["checkout", "413 over the body cap", await post413("/checkout/v1/")],
  ];
  // Two actions in a row: the second is over the person's limit.
  await browser.post("/dashboard/sandbox/settings/api-keys", { name: "one" });
  answers.push(["dashboard", "429 too many actions", await browser.post("/dashboard/sandbox/settings/api-keys", { name: "two" })]);
  const seen = answers.map(([family, what, res]) => ({ family, what, status: res.status, headers: securityOf(res.headers) }));
  expect(seen.map((a) => `${a.family} ${a.what}: ${a.status}`)).toEqual(answers.map(([f, w]) => `${f} ${w}: ${Number(w.slice(0, 3))}`));
  for (const a of seen) expect({ what: `${a.family} ${a.what}`, headers: a.headers }).toEqual({ what: `${a.family} ${a.what}`, headers: page[a.family]! });
});

test("a 500 under a face's path (an error no handler caught) carries the face's security headers; an API route's does not take them", async () => {
  const boom = () =>
    new Elysia()
      .get("/dashboard/boom", () => {
        throw new Error("a bug");
      })
      .get("/boom", () => {
        throw new Error("a bug");
      });
  const app = buildApp(svc.services, [{ routes: boom, pages: DASHBOARD_PAGES }]);
  const quiet = console.error;
  console.error = () => {};
  try {
    const inFace = await app.handle(new Request("http://localhost/dashboard/boom"));
    expect(inFace.status).toBe(500);
    expect(((await inFace.json()) as { error: { code: string } }).error.code).toBe("internal_error");
    expect(securityOf(inFace.headers)).toEqual(page.dashboard!);
    const api = await app.handle(new Request("http://localhost/boom"));
    expect(api.status).toBe(500);
    expect(api.headers.get("x-frame-options")).toBeNull();
  } finally {
    console.error = quiet;
  }
});
