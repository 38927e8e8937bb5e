/**
 * The browser half as served: the SDK's builds with their cache headers, the checkout page
 * with its CSP (no inline script, no third party, framable), and its hashed assets.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { CHECKOUT_CSP } from "./routes.ts";

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false" });
});
afterAll(() => svc.close());

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${svc.url}${path}`, { headers });

describe("SDK", () => {
  test("script-tag and ESM builds at a versioned path, cached a day and revalidated by ETag, loadable cross-origin", async () => {
    for (const path of ["/sdk/v1/paysession.js", "/sdk/v1/paysession.mjs"]) {
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("javascript");
      expect(res.headers.get("cache-control")).toBe("public, max-age=86400, stale-while-revalidate=604800");
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      const body = await res.text();
      expect(Bun.gzipSync(body).length).toBeLessThan(8 * 1024);
      const again = await get(path, { "if-none-match": res.headers.get("etag")! });
      expect(again.status).toBe(304);
    }
    const script = await (await get("/sdk/v1/paysession.js")).text();
    // A classic script: no module syntax (import.meta would be a syntax error), defines window.Paysession.
    expect(script).not.toContain("import.meta");
    expect(() => new Function(script)).not.toThrow();
    expect(await (await get("/sdk/v1/paysession.mjs")).text()).toContain("import.meta.url");
  });
});

describe("checkout page", () => {
  test("strict CSP, framable, no inline script or style, every asset ours and served", async () => {
    const res = await get("/checkout/v1/");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toBe(CHECKOUT_CSP);
    expect(CHECKOUT_CSP).toContain("script-src 'self'");
    expect(CHECKOUT_CSP).toContain("connect-src 'self'");
    expect(CHECKOUT_CSP).toContain("frame-ancestors *");
    expect(CHECKOUT_CSP).not.toContain("unsafe");
    expect(res.headers.get("x-frame-options")).toBeNull();
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    const html = await res.text();
    for (const tag of html.match(/<script\b[^>]*>/g) ?? []) expect(tag).toMatch(/\ssrc="/);
    expect(html).not.toMatch(/<script\b[^>]*>[^<]+<\/script>/);
    expect(html).not.toMatch(/\son[a-z]+=/i);
    expect(html).not.toMatch(/\sstyle=/i);
    expect(html).not.toMatch(/<style/i);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);

    const assets = [...html.matchAll(/(?:src|href)="([^"#]+)"/g)].map((m) => m[1]!);
    expect(assets.sort()).toEqual([expect.stringMatching(/^checkout\.css\?v=/), expect.stringMatching(/^checkout\.js\?v=/)]);
    for (const a of assets) {
      const r = await get(`/checkout/v1/${a}`);
      expect(r.status).toBe(200);
      expect(r.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      const text = await r.text();
      if (a.startsWith("checkout.js")) expect(Bun.gzipSync(text).length).toBeLessThan(60 * 1024);
      if (a.startsWith("checkout.css")) expect(text).not.toMatch(/url\(|@import/);
    }
    const bare = await fetch(`${svc.url}/checkout/v1`, { redirect: "manual" });
    expect([bare.status, bare.headers.get("location")]).toEqual([308, "/checkout/v1/"]);
  });
});
