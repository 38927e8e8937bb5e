/**
 * The browser half's figures:
 *   - sdk.js (script-tag build) and sdk.mjs gzip bytes (goal ≤ 8 KB);
 *   - the checkout page's JS gzip bytes (goal ≤ 60 KB);
 *   - open() → checkout interactive (session on screen), headless Chromium, a fresh browser
 *     profile each time (nothing cached), p50/p95 (goal p50 ≤ 500 ms);
 *   - a status change (merchant cancel, from the request's start) → the checkout shows it,
 *     p50/p95 (goal p50 ≤ 1 s; the checkout polls every 500 ms).
 * A real service on an embedded Postgres; the merchant page is on its own origin. Prints one
 * JSON object. BENCH_OPENS (default 20).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmbeddedPostgres } from "../api/src/db/embedded.ts";
import { loadConfig } from "../api/src/config.ts";
import { startService } from "../api/src/server.ts";
import { createApiKey, createMerchant } from "../api/src/credentials/store.ts";
import { loadChainsConfig } from "../shared/chains/config.ts";
import { NetworkReadiness } from "../api/src/onchain/network-status.ts";
import { freePort } from "../testing/ports.ts";
import { launchChromium } from "../testing/browser.ts";
import { bundle } from "../api/src/checkout/bundles.ts";
import { percentile } from "./lib.ts";

const OPENS = Number(process.env.BENCH_OPENS ?? 20);

const dir = mkdtempSync(join(tmpdir(), "paysession-bench-checkout-"));
const pg = await startEmbeddedPostgres({ dataDir: join(dir, "pg"), port: await freePort(), persistent: false });
// Sessions need a sandbox network for their deposit addresses; nothing here touches its RPC.
const chainEnv = { SERVICE_RPC_URL_LOCAL: "http://127.0.0.1:9", SERVICE_INDEX_MODE: "full" };
const networks = loadChainsConfig(chainEnv).networks;
const config = loadConfig({
  ...chainEnv,
  DATABASE_URL: pg.url,
  SERVICE_PORT: "0",
  SERVICE_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString("base64"),
  SERVICE_SESSION_RUNNER: "false",
  SERVICE_SWEEPER: "false",
  SERVICE_WEBHOOK_WORKER: "false",
});
const service = await startService(config, () => {}, { networks, readiness: NetworkReadiness.trusted(networks) });
const db = service.services.database.db;
const merchant = await createMerchant(db, "Bench shop");
const { secret: key } = await createApiKey(db, merchant.id, "sandbox", "bench");

const shopPage = `<!doctype html><html><head><script src="${service.url}/sdk/v1/paysession.js"></script></head><body>shop</body></html>`;
const shop = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response(shopPage, { headers: { "content-type": "text/html" } }) });
const browser = await launchChromium();

const api = async (method: string, path: string, body?: unknown) =>
  (await fetch(`${service.url}${path}`, { method, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) })).json() as Promise<any>;

const gz = async (name: "sdk.js" | "sdk.mjs" | "checkout.js") => Bun.gzipSync((await bundle(name)).body).length;

try {
  const openMs: number[] = [];
  const statusMs: number[] = [];
  for (let i = 0; i <= OPENS; i++) {
    const s = await api("POST", "/payment-sessions", { amount: "12.34", currency: "USD" });
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${shop.port}/`);
    // The page notes when open() was called, when the checkout said it is interactive, and
    // when it said the status changed (the same messages the SDK reads).
    const opened = await page.evaluate(
      ({ s, merchantId }) =>
        new Promise<number>((resolve) => {
          const w = window as any;
          w.__statusAt = undefined;
          window.addEventListener("message", (e) => {
            if (e.data?.paysession !== 1) return;
            if (e.data.type === "interactive") resolve(performance.now() - w.__t0);
            if (e.data.type === "status" && e.data.status === "CANCELED") w.__statusAt = Date.now();
          });
          const sdk = w.Paysession.init({ merchantId });
          w.__t0 = performance.now();
          w.__result = sdk.open({ paymentSessionId: s.paymentSessionId, paymentSessionToken: s.paymentSessionToken });
        }),
      { s, merchantId: s.merchantId },
    );
    const changedAt = Date.now();
    await api("POST", `/payment-sessions/${s.paymentSessionId}/cancel`, {});
    const shownAt = (await (await page.waitForFunction(() => (window as any).__statusAt, undefined, { timeout: 10_000, polling: 10 })).jsonValue()) as number;
    // The first round builds the bundles on the server: a warm-up, not counted.
    if (i > 0) {
      openMs.push(opened);
      statusMs.push(shownAt - changedAt);
    }
    await context.close();
  }
  openMs.sort((a, b) => a - b);
  statusMs.sort((a, b) => a - b);
  console.log(
    JSON.stringify({
      bench: "checkout",
      sdkJsGzipBytes: await gz("sdk.js"),
      sdkMjsGzipBytes: await gz("sdk.mjs"),
      checkoutJsGzipBytes: await gz("checkout.js"),
      opens: openMs.length,
      openToInteractiveMs: { p50: percentile(openMs, 50), p95: percentile(openMs, 95) },
      statusToScreenMs: { p50: percentile(statusMs, 50), p95: percentile(statusMs, 95) },
      goals: { sdkJsGzipBytes: 8192, checkoutJsGzipBytes: 61440, openToInteractiveP50Ms: 500, statusToScreenP50Ms: 1000 },
    }),
  );
} finally {
  await browser.close();
  shop.stop(true);
  await service.stop();
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
}
