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
import type { Browser, BrowserContext, Frame, Page, Route } from "playwright-core";
import { erc20Abi, parseEther, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { eip3009Abi } from "../../../shared/contracts/eip3009.ts";
import { DEV_RELAYER_ADDRESS } from "../credentials/relayer.ts";
import { mintTestUsd, predictedTestUsdtAddress } from "../../../shared/contracts/deploy.ts";
import { eventually } from "../../../testing/eventually.ts";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { startLifecycleStack, type LifecycleStack } from "../../../testing/lifecycle.ts";
import { artifactsDir, launchChromium } from "../../../testing/browser.ts";
import { checkoutFrame, installWallet, type TestWallet } from "../../../testing/wallet.ts";
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
}, 60_000);

const anvil = () => stack.chains[0]!;
/** The local network's second stablecoin: TestUSDT, USDT's quirks (its transfer returns nothing, no EIP-3009). */
const USDT = predictedTestUsdtAddress();
const mintUsdt = (to: Address, amount: bigint) => mintTestUsd({ publicClient: anvil().publicClient, walletClient: anvil().walletClient, to, amount, token: USDT });
const balanceOf = (token: Address, holder: string) => anvil().publicClient.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [holder as Address] });

/** A fresh browser profile; with a wallet that starts on Ethereum (chain 1) and does not know the local network. */
async function newPage(opts: { wallet?: boolean; width?: number; height?: number; signsTypedData?: boolean } = {}): Promise<{ page: Page; wallet?: TestWallet }> {
  const context = await browser.newContext({ viewport: { width: opts.width ?? 1100, height: opts.height ?? 820 } });
  contexts.push(context);
  const wallet = opts.wallet === false ? undefined : await installWallet(context, { knownChains: { 1: "http://127.0.0.1:9" }, signsTypedData: opts.signsTypedData ?? false });
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

/**
 * The checkout's reads of its session (GET /api/payment-sessions?…) held while `hold()` is on,
 * as a slow network would: held reads go on when `release()` is called.
 */
async function sessionReads(page: Page) {
  let gate: Promise<void> | undefined;
  let open = () => {};
  let held = 0;
  await page.context().route(/\/api\/payment-sessions\?/, async (route: Route) => {
    if (gate) {
      held++;
      await gate;
    }
    await route.continue().catch(() => {}); // the page may be gone by then
  });
  return {
    hold: () => void (gate = new Promise<void>((r) => (open = r))),
    release: () => {
      gate = undefined;
      open();
    },
    held: () => held,
  };
}

/** Whether `selector` in the checkout frame lies wholly inside the frame's viewport (seen without scrolling). */
const inView = (frame: Frame, selector: string) =>
  frame.$eval(selector, (el) => {
    const r = el.getBoundingClientRect();
    return r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight && r.left >= 0 && r.right <= window.innerWidth;
  });

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
    // This wallet cannot sign typed data: the checkout asked once, then paid by transfer.
    const asked = wallet!.calls.map((c) => c.method);
    expect(asked.indexOf("eth_signTypedData_v4")).toBeGreaterThan(-1);
    expect(asked.indexOf("eth_signTypedData_v4")).toBeLessThan(asked.indexOf("eth_sendTransaction"));

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

  test("pay by authorization: a wallet holding TestUSD and no gas coin signs once and the session reaches SUCCEEDED; its gas coin untouched, the settlement grows by exactly the amount, no deposit or sweep used", async () => {
    const { page, wallet } = await newPage({ signsTypedData: true });
    await fund(wallet!.address, 50_000_000n, 0n);
    const frame = await openFromShop(page);
    await frame.click("button.wallet");
    // The balance can be on screen a moment before the line under Pay is written: wait for both.
    await frame.waitForFunction(() => /TUSD/.test(document.querySelector("#balance")?.textContent ?? "") && !!document.querySelector("#pay-equals")?.textContent);
    expect(await frame.textContent("#pay-equals")).toBe("You sign a transfer of 12.34 TUSD = 12.34 USD, the price. No network fee: the payment service submits it for you.");
    // The session the shop just created (this file's tests run one after another).
    const [{ id: sessionId }] = (await stack.svc.services.database.sql`select id from app.payment_sessions order by created_at desc limit 1`) as unknown as [{ id: string }];
    const session = await stack.svc.call("GET", `/payment-sessions/${sessionId}`, { auth: stack.key });
    const network = session.body.networks[0];
    const tokenBalance = (holder: string) =>
      anvil().publicClient.readContract({ address: anvil().token, abi: erc20Abi, functionName: "balanceOf", args: [holder as Address] });
    const settlementBefore = await tokenBalance(network.settlementAddress);
    await frame.click("#pay-btn");
    await frame.waitForSelector("#progress:not([hidden])");
    expect(await frame.textContent("#progress-list li[data-step=sent]")).toBe("Payment signed (no network fee)");
    expect(await frame.isVisible("#problem")).toBe(false);
    await shot(page, "03b-authorization-signed");
    expect(await frame.isDisabled("#pay-btn")).toBe(true); // one payment at a time
    await finalTitle(frame, "Payment complete", 30_000);
    expect(await frame.textContent("#final-body")).toBe("You paid 12.34 USD to Lifecycle. Paid by your signature: the network fee was covered for you.");
    await shot(page, "04b-authorization-succeeded");
    const methods = wallet!.calls.map((c) => c.method);
    expect(methods.filter((m) => m === "eth_signTypedData_v4")).toHaveLength(1);
    expect(methods).not.toContain("eth_sendTransaction");
    expect(methods).not.toContain("eth_estimateGas");
    // On-chain: the payer spent no gas coin, the settlement address got exactly the amount, the deposit address nothing.
    expect(await anvil().rpc("eth_getBalance", [wallet!.address, "latest"])).toBe("0x0");
    expect((await tokenBalance(network.settlementAddress)) - settlementBefore).toBe(BigInt(network.amountBaseUnits));
    expect(await tokenBalance(network.depositAddress)).toBe(0n);
    const [counts] = await stack.svc.services.database.sql`
      select (select count(*)::int from app.sweeps where session_id = ${sessionId}) as sweeps,
             (select status from app.payment_sessions where id = ${sessionId}) as status,
             (select status from app.payment_authorizations where session_id = ${sessionId}) as authorization`;
    expect(counts).toEqual({ sweeps: 0, status: "SUCCEEDED", authorization: "mined" });
    await frame.click("#done-btn");
    expect(await shopResult(page)).toMatchObject({ outcome: "succeeded", status: "SUCCEEDED" });
  }, 90_000);

  // The checkout's request reaches the service right after the stranger's transaction (its block
  // is then most often not indexed yet: 409, and the page follows the session), or once the
  // indexer has stored that block (202 with the record, mined).
  for (const reaches of ["after the stranger's receipt", "once its block is indexed"] as const) {
    test(`pay by authorization, submitted by a stranger before the checkout's POST, which reaches the service ${reaches}: the checkout follows the session to Payment complete, never showing a problem; no sweep, our relayer sends nothing`, async () => {
      const { page, wallet } = await newPage({ signsTypedData: true });
      await fund(wallet!.address, 50_000_000n, 0n);
      // Another account, with its own gas coin, that sees the signature on its way (a wallet extension, a relay).
      const stranger = privateKeyToAccount(generatePrivateKey());
      await fund(stranger.address, 0n);
      let stolen: Hex | undefined;
      let answered: { status: number; body: string } | undefined;
      await page.context().route(/\/api\/payment-sessions\/authorizations$/, async (route: Route) => {
        if (route.request().method() !== "POST") return route.continue();
        const b = route.request().postDataJSON() as { from: Address; to: Address; value: string; validAfter: string; validBefore: string; nonce: Hex; signature: Hex };
        stolen = await anvil().walletClient.writeContract({
          account: stranger,
          chain: anvil().walletClient.chain,
          address: anvil().token,
          abi: eip3009Abi,
          functionName: "transferWithAuthorization",
          args: [b.from, b.to, BigInt(b.value), BigInt(b.validAfter), BigInt(b.validBefore), b.nonce, b.signature],
        });
        expect((await anvil().publicClient.waitForTransactionReceipt({ hash: stolen })).status).toBe("success");
        if (reaches === "once its block is indexed") {
          await eventually(async () => ((await stack.svc.services.database.sql`select 1 from indexer.authorized_transfers where tx_hash = ${stolen!}`).length > 0 ? true : undefined), "the stranger's transfer indexed");
        }
        // Only then does the checkout's request reach the service.
        const response = await route.fetch();
        answered = { status: response.status(), body: await response.text() };
        await route.fulfill({ response });
      });
      const relayerNonce = await anvil().publicClient.getTransactionCount({ address: DEV_RELAYER_ADDRESS });
      const frame = await openFromShop(page);
      // Everything the problem box ever says, from here on.
      await frame.evaluate(() => {
        const box = document.getElementById("problem")!;
        const seen: string[] = ((window as unknown as { __problems: string[] }).__problems = []);
        new MutationObserver(() => {
          if (!box.hidden) seen.push(box.textContent ?? "");
        }).observe(box, { attributes: true, childList: true, subtree: true, characterData: true });
      });
      await frame.click("button.wallet");
      await frame.waitForFunction(() => /TUSD/.test(document.querySelector("#balance")?.textContent ?? "") && !!document.querySelector("#pay-equals")?.textContent);
      const [{ id: sessionId }] = (await stack.svc.services.database.sql`select id from app.payment_sessions order by created_at desc limit 1`) as unknown as [{ id: string }];
      await frame.click("#pay-btn");
      await finalTitle(frame, "Payment complete", 30_000);
      expect(await frame.textContent("#final-body")).toBe("You paid 12.34 USD to Lifecycle. Paid by your signature: the network fee was covered for you.");
      await shot(page, "04c-authorization-submitted-by-stranger");
      expect(stolen).toBeDefined();
      // The service answered what happened: the record, mined by the stranger's transaction — or, if
      // its block was not indexed yet, that the nonce is used (the checkout then followed the session).
      expect(answered).toBeDefined();
      if (answered!.status === 202 || reaches === "once its block is indexed") {
        expect(answered!.status).toBe(202);
        expect(JSON.parse(answered!.body)).toMatchObject({ status: "mined", txHash: stolen });
      } else expect(JSON.parse(answered!.body).error.code).toBe("authorization_nonce_used");
      expect(await frame.evaluate(() => (window as unknown as { __problems: string[] }).__problems)).toEqual([]);
      const [row] = await stack.svc.services.database.sql`
        select (select count(*)::int from app.sweeps where session_id = ${sessionId}) as sweeps,
               (select status from app.payment_sessions where id = ${sessionId}) as status,
               (select json_agg(json_build_object('direction', direction, 'tx', tx_hash) order by direction) from app.session_funds where session_id = ${sessionId}) as funds`;
      expect(row).toEqual({ sweeps: 0, status: "SUCCEEDED", funds: [{ direction: "in", tx: stolen }, { direction: "out", tx: stolen }] });
      expect(await anvil().publicClient.getTransactionCount({ address: DEV_RELAYER_ADDRESS })).toBe(relayerNonce);
      await frame.click("#done-btn");
      expect(await shopResult(page)).toMatchObject({ outcome: "succeeded", status: "SUCCEEDED" });
    }, 90_000);
  }

  test("the payer rejects the transaction: a plain message and a way forward; nothing was sent, the session stays open", async () => {
    const { page, wallet } = await newPage();
    await fund(wallet!.address, 50_000_000n);
    wallet!.reject.add("eth_sendTransaction");
    const frame = await openFromShop(page);
    await frame.click("button.wallet");
    await frame.waitForFunction(() => /TUSD/.test(document.querySelector("#balance")?.textContent ?? ""));
    await frame.click("#pay-btn");
    await frame.waitForSelector("#problem:not([hidden])");
    expect(await frame.getAttribute("#problem", "data-kind")).toBe("rejected");
    expect(await frame.textContent("#problem-text")).toContain("You rejected the request in your wallet");
    expect(await frame.textContent("#problem-actions")).toContain("Try again");
    await shot(page, "06-wallet-rejected");

    // Closed while still pending: the promise says so.
    await page.keyboard.press("Escape");
    const result = await shopResult(page);
    expect(result).toMatchObject({ outcome: "closed", status: "PENDING" });
    expect((await stack.status(result.paymentSessionId!)).status).toBe("PENDING");
  }, 30_000);

  test("the payer refuses the network switch, the wallet has tokens but no gas coin, the wallet disconnects: each a plain message and a way on", async () => {
    const { page, wallet } = await newPage();
    await fund(wallet!.address, 50_000_000n, 0n);
    wallet!.reject.add("wallet_switchEthereumChain");
    const frame = await openFromShop(page);
    await frame.click("button.wallet");
    await frame.waitForSelector("#problem:not([hidden])");
    expect(await frame.getAttribute("#problem", "data-kind")).toBe("wrong_network");
    expect(await frame.textContent("#problem-text")).toContain("Switch it to Local test network (anvil)");
    await shot(page, "06a-wrong-network");

    wallet!.reject.delete("wallet_switchEthereumChain");
    await frame.click("#problem-actions button");
    await frame.waitForFunction(() => /TUSD/.test(document.querySelector("#balance")?.textContent ?? ""));
    expect(wallet!.chainId()).toBe(31337);
    await frame.click("#pay-btn");
    await frame.waitForSelector("#problem[data-kind=insufficient_gas]");
    expect(await frame.textContent("#problem-text")).toContain("Not enough ETH on Local test network (anvil) for the network fee");
    await shot(page, "06b-insufficient-gas");
    expect(wallet!.calls.some((c) => c.method === "eth_sendTransaction")).toBe(false);

    // The payer disconnects the wallet: said plainly, and the wallet can be connected again.
    await frame.evaluate(() => (window as any).__testWalletEmit("accountsChanged", []));
    await frame.waitForSelector("#problem[data-kind=disconnected]");
    expect(await frame.isVisible("button.wallet")).toBe(true);
    expect(await frame.isVisible("#connected")).toBe(false);
    await shot(page, "06c-wallet-disconnected");
  }, 30_000);

  test("the wallet lacks tokens: the checkout says so, \"Get test tokens\" fills it (tokens and gas), then the payment goes through", async () => {
    const { page, wallet } = await newPage();
    const frame = await openFromShop(page);
    await frame.click("button.wallet");
    await frame.waitForFunction(() => /TUSD/.test(document.querySelector("#balance")?.textContent ?? ""));
    expect(await frame.textContent("#balance")).toBe("0.00 TUSD");
    await frame.click("#pay-btn");
    await frame.waitForSelector("#problem:not([hidden])");
    expect(await frame.getAttribute("#problem", "data-kind")).toBe("insufficient_token");
    expect(await frame.textContent("#problem-text")).toContain("this payment needs 12.34 TUSD");
    await shot(page, "07-insufficient-tokens");

    await frame.click("#problem-actions button:has-text('Get test tokens')");
    await frame.waitForSelector("#notice:not([hidden])");
    expect(await frame.textContent("#balance")).toBe("100.00 TUSD");
    expect(await anvil().publicClient.getBalance({ address: wallet!.address })).toBeGreaterThan(0n);
    await shot(page, "08-test-tokens-received");
    await frame.click("#pay-btn");
    await finalTitle(frame, "Payment complete");
    await frame.click("#done-btn");
    expect(await shopResult(page)).toMatchObject({ outcome: "succeeded" });
  }, 60_000);

  test("the payer cancels: CANCELED (canceled_by_payer) on screen, in the promise and in the shop's webhook", async () => {
    const { page } = await newPage();
    const frame = await openFromShop(page);
    await frame.click("#cancel-btn");
    await finalTitle(frame, "Payment canceled", 10_000);
    await shot(page, "09-final-canceled-by-payer");
    await frame.click("#done-btn");
    const result = await shopResult(page);
    expect(result).toMatchObject({ outcome: "canceled", status: "CANCELED", reason: "canceled_by_payer" });
    await eventually(async () => (shop.orders.bySessionId(result.paymentSessionId!)?.state === "canceled" ? true : undefined), "the CANCELED webhook", 10_000);
  }, 30_000);

  test("the session expires while the checkout is open: the final screen says so within a second or two", async () => {
    const { page } = await newPage();
    const frame = await openFromShop(page);
    const sessionId = await latestSessionId();
    const started = Date.now();
    const r = await stack.svc.call("POST", `/sandbox/payment-sessions/${sessionId}/expire`, { auth: stack.key, body: {} });
    expect(r.body.status).toBe("CANCELED");
    await finalTitle(frame, "This payment has expired", 5_000);
    expect(Date.now() - started).toBeLessThan(5_000);
    await shot(page, "10-final-expired");
    await page.keyboard.press("Escape");
    expect(await shopResult(page)).toMatchObject({ outcome: "canceled", reason: "expired" });
  }, 30_000);

  test("QR / any wallet: the EIP-681 code and copyable address and amount; paid by a separate transfer, progress shows the same way", async () => {
    const { page } = await newPage({ wallet: false });
    const frame = await openFromShop(page);
    await frame.click("#tab-qr");
    await frame.waitForSelector("#qr svg path");
    const sessionId = await latestSessionId();
    const session = (await stack.svc.call("GET", `/payment-sessions/${sessionId}`, { auth: stack.key })).body;
    const net = session.networks[0];
    expect(await frame.textContent("#qr-address")).toBe(net.depositAddress);
    expect(await frame.textContent("#qr-amount")).toBe("12.34 TUSD");
    expect(await frame.getAttribute("#qr-amount", "data-value")).toBe("12.34");
    expect(await frame.getAttribute("#qr-link", "href")).toBe(`ethereum:${net.tokenAddress}@31337/transfer?address=${net.depositAddress}&uint256=12340000`);
    expect(await frame.getAttribute("#qr svg", "aria-label")).toContain("12.34 TUSD");
    await shot(page, "11-qr");

    await anvil().mint(net.depositAddress, 12_340_000n);
    await frame.waitForSelector("#progress:not([hidden])");
    await finalTitle(frame, "Payment complete");
    await shot(page, "12-qr-paid");
  }, 40_000);

  test("sandbox test wallet: without any browser wallet, anyone walks the flow to SUCCEEDED", async () => {
    const { page } = await newPage({ wallet: false });
    const frame = await openFromShop(page);
    await frame.waitForSelector("#no-wallet:not([hidden])");
    await shot(page, "13-no-wallet");
    await frame.click("#testpay-btn");
    await finalTitle(frame, "Payment complete");
    await frame.click("#done-btn");
    expect(await shopResult(page)).toMatchObject({ outcome: "succeeded", status: "SUCCEEDED" });
  }, 40_000);

  test("a second open while one is open rejects with already_open; the first goes on", async () => {
    const { page } = await newPage({ wallet: false });
    await page.goto(shop.url);
    const created = await page.evaluate(async () => (await fetch("/orders", { method: "POST" })).json());
    const second = await page.evaluate(
      async ({ created, merchantId }) => {
        const w = window as any;
        const sdk = w.Paysession.init({ merchantId });
        w.__first = sdk.open({ paymentSessionId: created.paymentSessionId, paymentSessionToken: created.paymentSessionToken });
        const other = w.Paysession.init({ merchantId });
        try {
          await other.open({ paymentSessionId: created.paymentSessionId, paymentSessionToken: created.paymentSessionToken });
          return "resolved";
        } catch (e: any) {
          return `${e.name}:${e.code}`;
        }
      },
      { created, merchantId },
    );
    expect(second).toBe("PaysessionError:already_open");
    const frame = await checkoutFrame(page);
    await frame.waitForSelector("#screen-pay:not([hidden])");
    expect(await page.locator('iframe[data-paysession="checkout"]').count()).toBe(1);
    await frame.click("#close-btn");
    expect(await page.evaluate(() => (window as any).__first)).toMatchObject({ outcome: "closed", status: "PENDING" });
  }, 30_000);

  test("bad arguments, the other environment's token, a merchant id that does not own the session: clear errors, never a hang", async () => {
    const { page } = await newPage({ wallet: false });
    await page.goto(shop.url);
    const created = await page.evaluate(async () => (await fetch("/orders", { method: "POST" })).json());
    const other = (await stack.svc.merchant("Someone else")).merchant.sandboxPublicId;
    const outcomes = await page.evaluate(
      async ({ created, merchantId, other }) => {
        const P = (window as any).Paysession;
        const attempt = async (f: () => Promise<unknown>) => {
          try {
            await f();
            return "resolved";
          } catch (e: any) {
            return e.code;
          }
        };
        const sdk = P.init({ merchantId });
        return {
          noArgs: await attempt(() => sdk.open()),
          badId: await attempt(() => sdk.open({ paymentSessionId: "nope", paymentSessionToken: created.paymentSessionToken })),
          liveToken: await attempt(() => sdk.open({ paymentSessionId: created.paymentSessionId, paymentSessionToken: created.paymentSessionToken.replace("pst_test_", "pst_live_") })),
          badMerchant: await attempt(async () => P.init({ merchantId: "acme" })),
          wrongMerchant: await attempt(() => P.init({ merchantId: other }).open({ paymentSessionId: created.paymentSessionId, paymentSessionToken: created.paymentSessionToken })),
          unknownToken: await attempt(() => sdk.open({ paymentSessionId: created.paymentSessionId, paymentSessionToken: `pst_test_${"x".repeat(40)}` })),
          overlaysLeft: document.querySelectorAll('[data-paysession="overlay"]').length,
        };
      },
      { created, merchantId, other },
    );
    expect(outcomes).toEqual({
      noArgs: "invalid_argument",
      badId: "invalid_argument",
      liveToken: "environment_mismatch",
      badMerchant: "invalid_argument",
      wrongMerchant: "merchant_mismatch",
      unknownToken: "session_token_invalid",
      overlaysLeft: 0,
    });
  }, 30_000);

  test("375 px phone screen: the modal fills the screen, nothing overflows sideways, focus is in the dialog and the page does not scroll", async () => {
    const { page } = await newPage({ width: 375, height: 740 });
    const frame = await openFromShop(page);
    await frame.waitForSelector("button.wallet");
    const box = (await page.locator('iframe[data-paysession="checkout"]').boundingBox())!;
    expect(Math.round(box.width)).toBe(375);
    expect(await frame.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    expect(await page.evaluate(() => document.documentElement.style.overflow)).toBe("hidden");
    expect(await page.getAttribute('[role="dialog"]', "aria-modal")).toBe("true");
    expect(await page.evaluate(() => document.activeElement?.getAttribute("data-paysession"))).toBe("checkout");
    await shot(page, "14-phone-375");
    await frame.click("#tab-qr");
    await frame.waitForSelector("#qr svg");
    expect(await frame.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await shot(page, "15-phone-375-qr");
    await page.keyboard.press("Escape");
    await page.waitForSelector("body[data-outcome]");
    expect(await page.evaluate(() => document.documentElement.style.overflow)).toBe("");
  }, 30_000);
});

describe("checkout in Chromium: leaving while loading, and what the payer reads while paying", () => {
  for (const how of ["the ✕", "Escape in the checkout"] as const) {
    test(`${how} while the first read of the session is slow closes the modal; open resolves closed`, async () => {
      const { page } = await newPage({ wallet: false });
      const reads = await sessionReads(page);
      reads.hold();
      await page.goto(shop.url);
      await page.click("#buy");
      const frame = await checkoutFrame(page);
      await frame.waitForSelector("#screen-loading:not([hidden])");
      // The read is on its way (so the checkout's script runs and has its session): held.
      await eventually(async () => (reads.held() > 0 ? true : undefined), "the first read held", 10_000);
      await shot(page, how === "the ✕" ? "16-loading-slow-read" : "16b-loading-slow-read-escape");
      if (how === "the ✕") await frame.click("#close-btn");
      else await frame.press("body", "Escape");
      const result = await shopResult(page);
      expect(result).toMatchObject({ outcome: "closed", status: "PENDING", reason: "created" });
      expect(await page.$('[data-paysession="overlay"]')).toBeNull();
      expect((await stack.status(result.paymentSessionId!)).status).toBe("PENDING");
      reads.release();
    }, 30_000);
  }

  test("Escape while the checkout's own page is still loading (its script held) closes the modal; open resolves closed", async () => {
    const { page } = await newPage({ wallet: false });
    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    let held = false;
    await page.context().route(/\/checkout\/v1\/checkout\.js/, async (route: Route) => {
      held = true;
      await gate;
      await route.continue().catch(() => {});
    });
    await page.goto(shop.url);
    await page.click("#buy");
    await page.waitForSelector('iframe[data-paysession="checkout"]');
    await eventually(async () => (held ? true : undefined), "the checkout's script held", 10_000);
    await page.keyboard.press("Escape");
    expect(await shopResult(page)).toMatchObject({ outcome: "closed", status: "PENDING", reason: "created" });
    expect(await page.$('[data-paysession="overlay"]')).toBeNull();
    release();
  }, 30_000);

  for (const [label, width, height] of [["phone", 375, 667], ["desktop", 1280, 800]] as const) {
    test(`${label} ${width}x${height}: the wallet tab names the network and what is sent; while paying the progress and the whole transaction hash are in view, above the sandbox box, and "Get test tokens" is disabled`, async () => {
      const { page, wallet } = await newPage({ width, height });
      await fund(wallet!.address, 50_000_000n);
      const reads = await sessionReads(page);
      reads.hold();
      await page.goto(shop.url);
      await page.click("#buy");
      const frame = await checkoutFrame(page);
      await frame.waitForSelector("#screen-loading:not([hidden])");
      await shot(page, `20-${label}-loading`);
      reads.release();

      await frame.waitForSelector("button.wallet");
      expect(await frame.textContent("#amount")).toBe("12.34 USD");
      expect(await frame.isVisible("#pay-network")).toBe(true);
      expect(await frame.textContent("#panel-wallet .pays-on")).toBe("Pays on Local test network (anvil)");
      await shot(page, `21-${label}-choose`);

      await frame.click("button.wallet");
      // Connected, switched and the balance read: the account is on screen.
      await frame.waitForFunction(() => /TUSD/.test(document.querySelector("#balance")?.textContent ?? "") && !document.querySelector("#connected")!.hasAttribute("hidden"));
      const account = wallet!.address;
      expect(await frame.textContent("#account")).toBe(`${account.slice(0, 6)}…${account.slice(-4)}`);
      expect(await frame.getAttribute("#account", "title")).toBe(account);
      // One line: the address never breaks.
      expect((await frame.locator("#account").boundingBox())!.height).toBeLessThan(24);
      expect(await frame.textContent("#pay-btn")).toBe("Pay 12.34 TUSD");
      // Offered in the sandbox: paying by signature, until this wallet (no typed-data signing) is found unable.
      expect(await frame.textContent("#pay-equals")).toBe("You sign a transfer of 12.34 TUSD = 12.34 USD, the price. No network fee: the payment service submits it for you.");
      expect(await frame.isEnabled("#faucet-btn")).toBe(true);
      await shot(page, `22-${label}-connected`);

      // The session's reads held from here: the pay screen stays as it is once the transaction is sent.
      reads.hold();
      await frame.click("#pay-btn");
      await frame.waitForFunction(() => /^Transaction 0x[0-9a-f]{64}$/.test(document.querySelector("#progress-tx")?.textContent ?? ""));
      expect(await frame.textContent("#pay-equals")).toBe("You send 12.34 TUSD = 12.34 USD, the price."); // paid by transfer: the line says so now
      expect(await frame.isVisible("#screen-pay")).toBe(true);
      expect(await frame.isDisabled("#faucet-btn")).toBe(true);
      expect(await frame.isDisabled("#testpay-btn")).toBe(true);
      expect(await frame.isDisabled("#pay-btn")).toBe(true);
      expect(await inView(frame, "#progress-list")).toBe(true);
      expect(await inView(frame, "#progress-tx")).toBe(true);
      const progress = (await frame.locator("#progress").boundingBox())!;
      const sandbox = (await frame.locator("#sandbox").boundingBox())!;
      expect(progress.y + progress.height).toBeLessThanOrEqual(sandbox.y);
      await shot(page, `23-${label}-paying`);

      reads.release();
      await finalTitle(frame, "Payment complete");
      expect(await inView(frame, "#final-title")).toBe(true);
      await shot(page, `24-${label}-paid`);
      await frame.click("#done-btn");
      expect(await shopResult(page)).toMatchObject({ outcome: "succeeded" });
    }, 60_000);
  }
});

describe("checkout in Chromium: the payer picks the stablecoin", () => {
  /** The token choice as the page has it: each option's symbol, balance line and whether it is the chosen one. */
  const choice = (frame: Frame) =>
    frame.$$eval("#token-list label", (labels) =>
      labels.map((l) => `${l.querySelector(".symbol")!.textContent}|${l.querySelector(".held")!.textContent}|${(l.querySelector("input") as HTMLInputElement).checked ? "chosen" : ""}`),
    );

  for (const [label, width, height] of [["phone", 375, 740], ["desktop", 1100, 820]] as const) {
    test(`${label}: a wallet holding only tUSDT (and gas coin) sees it in the choice, picks tUSDT and pays it by a plain transfer → SUCCEEDED, the settlement address receiving exactly that tUSDT`, async () => {
      const { page, wallet } = await newPage({ width, height, signsTypedData: true });
      await mintUsdt(wallet!.address, 50_000_000n);
      await fund(wallet!.address, 0n);
      const frame = await openFromShop(page);
      // Two stablecoins on this network: the choice is there, named for screen readers, the main one chosen.
      expect(await frame.isVisible("#tokens")).toBe(true);
      expect(await frame.getByRole("group", { name: "Pay in" }).isVisible()).toBe(true);
      expect(await frame.getByRole("radio", { name: /^TUSD/ }).isChecked()).toBe(true);
      expect(await frame.getByRole("radio", { name: /^tUSDT/ }).isChecked()).toBe(false);

      await frame.click("button.wallet");
      // Each token's balance in the choice once connected: the tUSDT is seen at once.
      await frame.waitForFunction(() => document.querySelectorAll("#token-list .held:not(:empty)").length === 2);
      expect(await choice(frame)).toEqual(["TUSD|Balance 0.00|chosen", "tUSDT|Balance 50.00|"]);
      expect(await frame.textContent("#balance")).toBe("0.00 TUSD");
      // A screen reader hears the balance with each option.
      expect(await frame.getByRole("radio", { name: "tUSDT Balance 50.00", exact: true }).count()).toBe(1);
      await shot(page, `30-${label}-token-choice`);

      // Paying in the main token falls short: the problem names the token the wallet holds enough of.
      await frame.click("#pay-btn");
      await frame.waitForSelector("#problem[data-kind=insufficient_token]");
      expect(await frame.textContent("#problem-text")).toBe(
        "Your wallet holds 0.00 TUSD on Local test network (anvil); this payment needs 12.34 TUSD. It holds enough tUSDT: pay in tUSDT instead.",
      );
      await shot(page, `31-${label}-insufficient-offers-usdt`);
      if (label === "phone") {
        // By keyboard: the radio group moves with the arrow keys.
        await frame.getByRole("radio", { name: /^TUSD/ }).focus();
        await page.keyboard.press("ArrowRight");
      } else {
        await frame.click("#problem-actions button:has-text('Pay in tUSDT')");
      }
      await frame.waitForFunction(() => document.querySelector("#balance")?.textContent === "50.00 tUSDT");
      expect(await frame.isVisible("#problem")).toBe(false);
      expect(await choice(frame)).toEqual(["TUSD|Balance 0.00|", "tUSDT|Balance 50.00|chosen"]);
      expect(await frame.textContent("#pay-btn")).toBe("Pay 12.34 tUSDT");
      // The gasless offer is for TestUSD: tUSDT is paid by a transfer, and the line says so although this wallet can sign.
      expect(await frame.textContent("#pay-equals")).toBe("You send 12.34 tUSDT = 12.34 USD, the price.");
      const sessionId = await latestSessionId();
      const net = (await stack.svc.call("GET", `/payment-sessions/${sessionId}`, { auth: stack.key })).body.networks[0];
      expect(await frame.getAttribute("#qr-link", "href")).toBe(`ethereum:${USDT}@31337/transfer?address=${net.depositAddress}&uint256=12340000`);
      await shot(page, `32-${label}-usdt-chosen`);

      const before = { usdt: await balanceOf(USDT, net.settlementAddress), tusd: await balanceOf(anvil().token, net.settlementAddress) };
      await frame.click("#pay-btn");
      await frame.waitForSelector("#progress:not([hidden])");
      // The token stays what is being paid: the choice is off.
      expect(await frame.$$eval("#token-list input", (inputs) => inputs.map((i) => i.matches(":disabled")))).toEqual([true, true]);
      await shot(page, `33-${label}-usdt-paying`);
      await finalTitle(frame, "Payment complete", 30_000);
      await shot(page, `34-${label}-usdt-paid`);

      const calls = wallet!.calls;
      expect(calls.map((c) => c.method)).not.toContain("eth_signTypedData_v4");
      const sent = calls.filter((c) => c.method === "eth_sendTransaction").map((c) => (c.params as [{ to: string }])[0].to.toLowerCase());
      expect(sent).toEqual([USDT.toLowerCase()]);
      expect((await stack.status(sessionId)).status).toBe("SUCCEEDED");
      expect((await balanceOf(USDT, net.settlementAddress)) - before.usdt).toBe(12_340_000n);
      expect((await balanceOf(anvil().token, net.settlementAddress)) - before.tusd).toBe(0n);
      expect(await balanceOf(USDT, wallet!.address)).toBe(50_000_000n - 12_340_000n);
      await frame.click("#done-btn");
      expect(await shopResult(page)).toMatchObject({ outcome: "succeeded", status: "SUCCEEDED" });
    }, 60_000);
  }

  test("\"Get test tokens\" fills the chosen token: tUSDT picked, 100.00 tUSDT (and gas coin) minted to the wallet, TUSD untouched", async () => {
    const { page, wallet } = await newPage();
    const frame = await openFromShop(page);
    await frame.click("button.wallet");
    await frame.waitForFunction(() => document.querySelectorAll("#token-list .held:not(:empty)").length === 2);
    await frame.getByRole("radio", { name: /^tUSDT/ }).check();
    expect(await frame.textContent("#balance")).toBe("0.00 tUSDT");
    await frame.click("#faucet-btn");
    await frame.waitForSelector("#notice:not([hidden])");
    expect(await frame.textContent("#notice")).toBe("Test tokens sent: 100.00 tUSDT to your wallet.");
    expect(await frame.textContent("#balance")).toBe("100.00 tUSDT");
    expect(await choice(frame)).toEqual(["TUSD|Balance 0.00|", "tUSDT|Balance 100.00|chosen"]);
    expect(await balanceOf(USDT, wallet!.address)).toBe(100_000_000n);
    expect(await balanceOf(anvil().token, wallet!.address)).toBe(0n);
    expect(await anvil().publicClient.getBalance({ address: wallet!.address })).toBeGreaterThan(0n);
    await shot(page, "35-faucet-usdt");
    await page.keyboard.press("Escape");
    await shopResult(page);
  }, 30_000);

  test("a network with one stablecoin: no token choice, the page as before", async () => {
    // A second service on the same anvil whose local network takes TestUSD only (nothing is paid here: no indexer, runner or sweeper).
    let one: TestService | undefined;
    try {
      one = await startTestService({ SERVICE_WEBHOOK_WORKER: "false", SERVICE_RPC_URL_LOCAL: anvil().chain.rpcUrl, SERVICE_STABLECOINS_LOCAL: "TUSD" });
      const m = await one.merchant("One token");
      const s = (await one.call("POST", "/payment-sessions", { auth: m.sandboxKey, body: { amount: "12.34", currency: "USD" } })).body;
      expect(s.networks[0].tokens.map((t: { tokenSymbol: string }) => t.tokenSymbol)).toEqual(["TUSD"]);
      const { page } = await newPage({ width: 375, height: 740 });
      await page.goto(`${one.url}/checkout/v1/#paymentSessionId=${s.paymentSessionId}&paymentSessionToken=${s.paymentSessionToken}&merchantId=${s.merchantId}`);
      await page.waitForSelector("button.wallet");
      expect(await page.isVisible("#tokens")).toBe(false);
      expect(await page.getByRole("radio").count()).toBe(0);
      await page.click("button.wallet");
      await page.waitForFunction(() => document.querySelector("#balance")?.textContent === "0.00 TUSD");
      expect(await page.isVisible("#tokens")).toBe(false);
      expect(await page.textContent("#pay-btn")).toBe("Pay 12.34 TUSD");
      expect(await page.textContent("#qr-amount")).toBe("12.34 TUSD");
      await shot(page, "36-one-token");
    } finally {
      await one?.close();
    }
  }, 30_000);
});

/** The session of the shop's newest order. */
async function latestSessionId(): Promise<string> {
  const list = await stack.svc.call("GET", "/payment-sessions?limit=1", { auth: stack.key });
  return list.body.data[0].paymentSessionId;
}
