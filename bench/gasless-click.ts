/**
 * Click → SUCCEEDED in the sandbox, paying by one signature (EIP-3009): a payer's wallet holding
 * TestUSD and no gas coin, in headless Chromium, clicks Pay in the checkout; the clock stops when
 * the checkout shows "Payment complete" (the session SUCCEEDED: the relayer submitted the
 * authorization, the indexer saw it, the runner moved the session). A real service, indexer,
 * sweeper (the relayer) and anvil mining a block a second as `bun run dev`'s does. Prints one JSON
 * object with p50/p95. BENCH_PAYMENTS (default 10).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLifecycleStack } from "../testing/lifecycle.ts";
import { launchChromium } from "../testing/browser.ts";
import { checkoutFrame, installWallet } from "../testing/wallet.ts";
import { startMerchantExample } from "../examples/merchant/server.ts";
import { percentile } from "./lib.ts";
import { startEmbeddedPostgres } from "../api/src/db/embedded.ts";
import { freePort } from "../testing/ports.ts";

const PAYMENTS = Number(process.env.BENCH_PAYMENTS ?? 10);

// The test stack makes its database on a Postgres of the run's own (as testing/preload.ts does for `bun test`).
const pgDir = mkdtempSync(join(tmpdir(), "bench-gasless-pg-"));
const pg = await startEmbeddedPostgres({ dataDir: join(pgDir, "pg"), port: await freePort(), persistent: false });
process.env.PAYSESSION_TEST_PG_URL = pg.url;
const stack = await startLifecycleStack();
const browser = await launchChromium();
const probe = await stack.svc.call("POST", "/payment-sessions", { auth: stack.key, body: { amount: "1.00", currency: "USD" } });
const shopDir = mkdtempSync(join(tmpdir(), "bench-shop-"));
const shop = await startMerchantExample({ apiHost: stack.svc.url, apiKey: stack.key, merchantId: probe.body.merchantId, dataDir: shopDir });
const anvil = stack.chains[0]!;

try {
  const clickToSucceededMs: number[] = [];
  for (let i = 0; i <= PAYMENTS; i++) {
    const context = await browser.newContext();
    const wallet = await installWallet(context, { knownChains: { 1: "http://127.0.0.1:9" }, signsTypedData: true });
    await anvil.mint(wallet.address, 50_000_000n); // TestUSD, and no gas coin at all
    const page = await context.newPage();
    await page.goto(shop.url);
    await page.click("#buy");
    const frame = await checkoutFrame(page);
    await frame.click("button.wallet");
    await frame.waitForFunction(() => /TUSD/.test(document.querySelector("#balance")?.textContent ?? "") && !!document.querySelector("#pay-btn:not([disabled])"));
    const t0 = performance.now();
    await frame.click("#pay-btn");
    await frame.waitForFunction(() => document.querySelector("#final-title")?.textContent === "Payment complete", undefined, { timeout: 60_000, polling: 20 });
    const ms = performance.now() - t0;
    if (wallet.calls.some((c) => c.method === "eth_sendTransaction")) throw new Error("the payer sent a transaction");
    if (i > 0) clickToSucceededMs.push(ms); // the first builds the bundles and warms the service: not counted
    await context.close();
  }
  clickToSucceededMs.sort((a, b) => a - b);
  console.log(
    JSON.stringify({
      bench: "gasless-click",
      payments: clickToSucceededMs.length,
      clickToSucceededMs: { p50: Math.round(percentile(clickToSucceededMs, 50)), p95: Math.round(percentile(clickToSucceededMs, 95)) },
      note: "sandbox: 1 confirmation, a block a second (anvil heartbeat) or per transaction",
    }),
  );
} finally {
  await browser.close();
  await shop.stop();
  await stack.close();
  await pg.stop();
  rmSync(shopDir, { recursive: true, force: true });
  rmSync(pgDir, { recursive: true, force: true });
}
