/**
 * The OpenAPI document: valid for the version it declares (checked by an independent validator),
 * small, with enums instead of literal unions, and the one error component; and the reference page
 * renders every operation in real Chromium with no request beyond this service.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import type { Browser } from "playwright-core";
import { existsSync } from "node:fs";
import { startTestService, type TestService } from "../../../../testing/service.ts";
import { CHROMIUM, launchChromium, screenshot } from "../../../../testing/browser.ts";
import { tidy } from "./openapi.ts";

let svc: TestService;
let doc: any;
beforeAll(async () => {
  svc = await startTestService();
  const r = await svc.call("GET", "/docs/json");
  expect(r.status).toBe(200);
  doc = r.body;
});
afterAll(async () => {
  await svc.close();
});

describe("the document", () => {
  test("an independent validator accepts it as OpenAPI 3.1", async () => {
    expect(doc.openapi).toBe("3.1.0");
    const res = await new Validator().validate(structuredClone(doc));
    expect(res.errors ?? []).toEqual([]);
    expect(res.valid).toBe(true);
  });

  test("every route the app serves is in it, with its security; hidden routes are not", () => {
    const ops = Object.entries(doc.paths).flatMap(([p, m]: [string, any]) => Object.keys(m).map((x) => `${x.toUpperCase()} ${p}`));
    expect(ops.length).toBeGreaterThan(20);
    expect(ops).toContain("POST /payment-sessions");
    expect(ops).toContain("GET /api/payment-sessions");
    for (const hidden of ["GET /docs", "GET /docs/json", "GET /metrics", "GET /docs/assets/{name}"]) expect(ops).not.toContain(hidden);
    for (const [, methods] of Object.entries(doc.paths) as [string, any][]) for (const op of Object.values(methods) as any[]) expect(Array.isArray(op.security)).toBe(true);
    // Every API-key operation names the scope a restricted key needs, in x-scope and in its description.
    const keyOps = Object.values(doc.paths).flatMap((m: any) => Object.values(m) as any[]).filter((op) => op.security.some((s: object) => "apiKey" in s));
    expect(keyOps.length).toBeGreaterThan(20);
    for (const op of keyOps) expect({ op: op.summary, scoped: typeof op["x-scope"] === "string" && op.description.includes(`Scope: \`${op["x-scope"]}\``) }).toEqual({ op: op.summary, scoped: true });
  });

  test("statuses and reasons are enums, errors are the one component narrowed to their codes", () => {
    const text = JSON.stringify(doc);
    // No union made only of string literals is left (a nullable literal, const + null, may stay).
    expect(text).not.toMatch(/"anyOf":\[\{"const":"[^"]*","type":"string"\},\{"const"/);
    const session = doc.paths["/payment-sessions/{id}"].get.responses["200"].content["application/json"].schema;
    expect(session.properties.status.enum).toEqual(["PENDING", "FUNDED", "SUCCEEDED", "CANCELED", "ERROR"]);
    expect(session.properties.statusReason.enum).toContain("expired");
    const unauth = doc.paths["/payment-sessions"].post.responses["401"].content["application/json"].schema;
    expect(unauth.allOf[0]).toEqual({ $ref: "#/components/schemas/Error" });
    expect(unauth.allOf[1].properties.error.properties.code.enum).toContain("api_key_invalid");
    expect(doc.components.schemas.Error.properties.error.properties.code.enum).toContain("internal_error");
    // The document was 1.27 MB of repeated literal unions before (165 KB after; it grows by a few KB
    // per documented route and event, so this bounds a relapse, not the routes: 289 KB before the
    // three x402 routes, 306 KB with them (their shared shapes as components), about 330 KB with
    // payment links too).
    expect(text.length).toBeLessThan(350_000);
  });

  test("every webhook event is under `webhooks`: a POST whose body is its event's schema (session, refund, account)", () => {
    const types = Object.keys(doc.webhooks ?? {});
    for (const t of ["payment_session.succeeded", "payment_session.funds_received", "refund.created", "refund.sent", "refund.succeeded", "refund.failed", "refund.canceled", "settlement_address.updated", "webhook.test"]) {
      expect(types).toContain(t);
    }
    const body = (t: string) => doc.webhooks[t].post.requestBody.content["application/json"].schema;
    expect(body("refund.failed")).toEqual({ $ref: "#/components/schemas/RefundEvent" });
    expect(body("payment_session.succeeded")).toEqual({ $ref: "#/components/schemas/PaymentSessionEvent" });
    const refundEvent = doc.components.schemas.RefundEvent;
    expect(refundEvent.properties.type.enum).toEqual(["refund.created", "refund.sent", "refund.succeeded", "refund.failed", "refund.canceled"]);
    expect(JSON.stringify(refundEvent.properties.data)).toContain("#/components/schemas/Refund");
    const header = (p: { $ref: string }) => doc.components.parameters[p.$ref.split("/").pop()!];
    expect(doc.webhooks["refund.sent"].post.parameters.map((p: any) => header(p).name)).toEqual(["webhook-id", "webhook-timestamp", "webhook-signature"]);
    expect(Object.keys(doc.webhooks["refund.sent"].post.responses)).toEqual(["2XX"]);
  });

  test("tidy turns a union of string consts into an enum and leaves other unions alone", () => {
    const out: unknown = tidy({ a: { description: "d", anyOf: [{ const: "x", type: "string" }, { const: "y", type: "string" }] }, b: { anyOf: [{ type: "string" }, { type: "null" }] } });
    expect(out).toEqual({ a: { description: "d", type: "string", enum: ["x", "y"] }, b: { anyOf: [{ type: "string" }, { type: "null" }] } });
  });
});

describe("the reference page", () => {
  test("served by us with a strict CSP; unknown assets are the documented 404", async () => {
    const page = await fetch(`${svc.url}/docs`);
    expect(page.status).toBe(200);
    const csp = page.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    const html = await page.text();
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/<script>(?!<)/); // no inline script
    const asset = await fetch(`${svc.url}/docs/assets/swagger-ui-bundle.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("cache-control")).toContain("max-age");
    const missing = await fetch(`${svc.url}/docs/assets/nope.js`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as any).error.code).toBe("route_not_found");
  });

  test.skipIf(!existsSync(CHROMIUM) && !process.env.PAYSESSION_REQUIRE_CHROMIUM)("renders every operation in Chromium with no request beyond the service", async () => {
    let browser: Browser | undefined;
    try {
      browser = await launchChromium();
      const page = await browser.newPage();
      const foreign: string[] = [];
      const cspViolations: string[] = [];
      page.on("request", (r) => {
        if (!r.url().startsWith(svc.url) && !r.url().startsWith("data:")) foreign.push(r.url());
      });
      page.on("console", (m) => {
        if (/Content Security Policy|Refused to/i.test(m.text())) cspViolations.push(m.text());
      });
      await page.goto(`${svc.url}/docs`);
      await page.waitForSelector(".opblock", { timeout: 20_000 });
      const rendered = await page.locator(".opblock").count();
      // Every operation, and every webhook the service sends (Swagger UI lists them as operations too).
      const documented = [...Object.values(doc.paths), ...Object.values(doc.webhooks)].reduce((n: number, m: any) => n + Object.keys(m).length, 0);
      expect(rendered).toBe(documented);
      expect(await page.locator(".info .title").innerText()).toContain("Paysession API");
      expect(foreign).toEqual([]);
      expect(cspViolations).toEqual([]);
      await screenshot(page, "docs", "api-reference");
    } finally {
      await browser?.close();
    }
  }, 60_000);
});
