/**
 * The payer's front door end to end, in Debian's Chromium (playwright-core): the example
 * shop's page (its own origin) → sdk.open → the hosted checkout in the modal's iframe (the
 * service's origin) → a payer's wallet injected into the page (EIP-6963 and window.ethereum),
 * signing real transactions with a real key against the real anvil, the real Ponder indexer,
 * the session runner and the sweeper, and the shop's webhook handler receiving the outcome.
 * Every screen is saved under artifacts/checkout/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Frame, Page } from "playwright-core";
import { parseEther, type Address } from "viem";
import { eventually, startLifecycleStack, type LifecycleStack } from "../testing/lifecycle.ts";
import { artifactsDir, checkoutFrame, installWallet, launchChromium, type TestWallet } from "../testing/browser.ts";
import { startMerchantExample, type MerchantExample } from "../../../examples/merchant/server.ts";

let stack: LifecycleStack;
let browser: Browser;
let shop: MerchantExample;
let merchantId: string;
let shopDir: string;
const shots = artifactsDir("checkout");
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  [stack, browser] = await Promise.all([startLifecycleStack(), launchChromium()]);
  const probe = await stack.svc.call("POST", "/payment-sessions", { auth: stack.key, body: { amount: "1.00", currency: "USD" } });
  merchantId = probe.body.merchantId;
  shopDir = mkdtempSync(join(tmpdir(), "shop-"));
  shop = await startMerchantExample({ apiHost: stack.svc.url, apiKey: stack.key, merchantId, dataDir: shopDir });
}, 120_000);

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close();
  await shop?.stop();
  await stack?.close();
  if (shopDir) rmSync(shopDir, { recursive: true, force: true });
});

const anvil = () => stack.chains[0]!;

/** A fresh browser profile; with a wallet that starts on Ethereum (chain 1) and does not know the local network. */
async function newPage(opts: { wallet?: boolean; width?: number; height?: number } = {}): Promise<{ page: Page; wallet?: TestWallet }> {
  const context = await browser.newContext({ viewport: { width: opts.width ?? 1100, height: opts.height ?? 820 } });
  contexts.push(context);
  const wallet = opts.wallet === false ? undefined : await installWallet(context, { knownChains: { 1: "http://127.0.0.1:9" } });
  const page = await context.newPage();
  page.on("pageerror", (e) => console.error(`[page error] ${e.message}`));
  return { page, wallet };
}

async function fund(address: Address, tokens: bigint, eth = parseEther("1")) {
  if (tokens > 0n) await anvil().mint(address, tokens);
  await anvil().rpc("anvil_setBalance", [address, `0x${eth.toString(16)}`]);
}

/** The shop page → "Pay" → the checkout on screen. */
async function openFromShop(page: Page): Promise<Frame> {
  await page.goto(shop.url);
  await page.click("#buy");
  const frame = await checkoutFrame(page);
  await frame.waitForSelector("#screen-pay:not([hidden]), #screen-final:not([hidden]), #screen-failed:not([hidden])");
  return frame;
}

async function shot(page: Page, name: string) {
  await page.screenshot({ path: join(shots, `${name}.png`) });
}

async function shopResult(page: Page): Promise<Record<string, string>> {
  await page.waitForSelector("body[data-outcome]", { timeout: 15_000 });
  return JSON.parse((await page.textContent("#result-json"))!);
}

const finalTitle = async (frame: Frame, title: string, timeout = 20_000) => {
  await frame.waitForFunction((t) => document.querySelector("#final-title")?.textContent === t && !document.querySelector("#screen-final")!.hasAttribute("hidden"), title, { timeout });
};

describe("checkout in Chromium", () => {
  test("wallet path: connect, automatic switch from another chain (added first), pay → SUCCEEDED, the promise resolves and the webhook arrived", async () => {
    const { page, wallet } = await newPage();
    await fund(wallet!.address, 50_000_000n);
    const frame = await openFromShop(page);
    await frame.waitForSelector("button.wallet");
    expect(await frame.textContent("#merchant")).toBe("Lifecycle");
    expect(await frame.textContent("#amount")).toBe("12.34 USD");
    expect(await frame.isVisible("#env-badge")).toBe(true);
    await shot(page, "01-pay-wallet-choice");

    await frame.click("button.wallet");
    await frame.waitForFunction(() => /TUSD/.test(document.querySelector("#balance")?.textContent ?? ""));
    expect(await frame.textContent("#balance")).toBe("50.00 TUSD");
    expect(wallet!.chainId()).toBe(31337);
    const methods = wallet!.calls.map((c) => c.method);
    expect(methods).toContain("wallet_addEthereumChain");
    expect(methods.indexOf("wallet_switchEthereumChain")).toBeLessThan(methods.indexOf("wallet_addEthereumChain"));
    await shot(page, "02-wallet-connected");

    await frame.click("#pay-btn");
    await frame.waitForSelector("#progress:not([hidden])");
    await shot(page, "03-progress");
    await finalTitle(frame, "Payment complete");
    expect(await frame.getAttribute("#progress-list li[data-step=settled]", "data-state")).toBe("done");
    await shot(page, "04-final-succeeded");

    await frame.click("#done-btn");
    const result = await shopResult(page);
    expect(result).toMatchObject({ outcome: "succeeded", status: "SUCCEEDED", reason: "swept" });
    expect(await page.$('iframe[data-paysession="checkout"]')).toBeNull();
    const order = await eventually(async () => {
      const o = shop.orders.bySessionId(result.paymentSessionId!);
      return o?.webhooks.some((w) => w.status === "SUCCEEDED") ? o : undefined;
    }, "the SUCCEEDED webhook at the shop", 15_000);
    expect(order.state).toBe("paid");
    expect(order.webhooks.map((w) => w.status)).toEqual(["PENDING", "FUNDED", "SUCCEEDED"]);
    await page.waitForFunction(() => /"paid"/.test(document.querySelector("#order-json")?.textContent ?? ""));
    await shot(page, "05-shop-result");
  }, 60_000);
});
