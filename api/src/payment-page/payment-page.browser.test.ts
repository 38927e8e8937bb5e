/**
 * A payment link paid in Debian's Chromium against the real stack (anvil, Ponder, the session
 * runner and the sweeper): the payer opens /pay/{linkId}, presses Continue, pays in the hosted
 * checkout (opened on its own page) from an injected wallet signing real transactions, presses
 * Done, and lands on the merchant's redirectUrl with the session's id. Without script the page's
 * form still starts the payment and reaches the checkout. No serious accessibility violation.
 * Screenshots under artifacts/payment-page/.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, BrowserContext } from "playwright-core";
import { parseEther, type Address } from "viem";
import { startLifecycleStack, type LifecycleStack } from "../../../testing/lifecycle.ts";
import { launchChromium, screenshot, seriousViolations } from "../../../testing/browser.ts";
import { installWallet } from "../../../testing/wallet.ts";

const SHOTS = "payment-page";
let stack: LifecycleStack;
let browser: Browser;
let thanks: ReturnType<typeof Bun.serve>;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  [stack, browser] = await Promise.all([startLifecycleStack(), launchChromium()]);
  // The merchant's own "thank you" page (sandbox: http on this machine is allowed).
  thanks = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (r) => new Response(`<!doctype html><title>Thanks</title><h1>Thanks for paying</h1><p>${new URL(r.url).search}</p>`, { headers: { "content-type": "text/html" } }) });
}, 120_000);

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close();
  thanks?.stop(true);
  await stack?.close();
}, 60_000);

const anvil = () => stack.chains[0]!;

test("the payer opens the link, pays from a browser wallet in the checkout and is sent to the merchant's redirectUrl", async () => {
  const link = await stack.svc.call("POST", "/payment-links", {
    auth: stack.key,
    body: { amount: "12.34", description: "Invoice 77: garden design", maxUses: 1, redirectUrl: `http://127.0.0.1:${thanks.port}/thanks`, metadata: { invoice: "77" } },
  });
  expect(link.status).toBe(201);
  const id: string = link.body.paymentLinkId;

  const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
  contexts.push(context);
  const wallet = await installWallet(context, { knownChains: { 1: "http://127.0.0.1:9" } });
  await anvil().mint(wallet.address as Address, 50_000_000n);
  await anvil().rpc("anvil_setBalance", [wallet.address, `0x${parseEther("1").toString(16)}`]);
  const page = await context.newPage();
  page.on("pageerror", (e) => console.error(`[page error] ${e.message}`));

  await page.goto(`${stack.svc.url}/pay/${id}`);
  await page.getByRole("heading", { name: "Pay 12.34 USD" }).waitFor();
  const text = await page.locator("main").innerText();
  for (const shown of ["Lifecycle", "Invoice 77: garden design", "12.34", "Sandbox", "Scan to open this page"]) expect(text).toContain(shown);
  expect(await page.locator("script").count()).toBe(0);
  expect(await seriousViolations(page)).toEqual([]);
  await screenshot(page, "01-link", SHOTS);

  await page.getByRole("button", { name: "Continue to payment" }).click();
  await page.waitForURL(/\/checkout\/v1\/$/);
  // The session travelled in the fragment, which the checkout removed at once.
  expect(new URL(page.url()).hash).toBe("");
  await page.waitForSelector("button.wallet");
  expect(await page.textContent("#amount")).toBe("12.34 USD");
  await screenshot(page, "02-checkout", SHOTS);
  await page.click("button.wallet");
  await page.waitForFunction(() => /TUSD/.test(document.querySelector("#balance")?.textContent ?? ""));
  await page.click("#pay-btn");
  await page.waitForFunction(() => document.querySelector("#final-title")?.textContent === "Payment complete" && !document.querySelector("#screen-final")!.hasAttribute("hidden"), undefined, { timeout: 30_000 });
  await screenshot(page, "03-paid", SHOTS);

  await page.click("#done-btn");
  await page.waitForURL((u) => u.port === String(thanks.port));
  const landed = new URL(page.url());
  expect(landed.pathname).toBe("/thanks");
  const sessionId = landed.searchParams.get("paymentSessionId")!;
  expect(await page.textContent("h1")).toBe("Thanks for paying");
  await screenshot(page, "04-redirected", SHOTS);

  const session = await stack.svc.call("GET", `/payment-sessions/${sessionId}`, { auth: stack.key });
  expect(session.body).toMatchObject({ status: "SUCCEEDED", amount: "12.34", paymentLinkId: id, metadata: { invoice: "77" } });
  expect(wallet.calls.map((c) => c.method)).toContain("eth_sendTransaction");
  // maxUses 1, and it was used: the link's page says so and starts nothing.
  await page.goto(`${stack.svc.url}/pay/${id}`);
  await page.getByRole("heading", { name: "This payment link has been used" }).waitFor();
  expect(await seriousViolations(page)).toEqual([]);
  await screenshot(page, "05-used-up", SHOTS);
}, 90_000);

test("without script the page's form still starts the payment: a payer-chosen amount refused, then taken, and the browser reaches the checkout", async () => {
  const link = await stack.svc.call("POST", "/payment-links", { auth: stack.key, body: { minAmount: "5.00", maxAmount: "50.00", description: "Donation" } });
  const id: string = link.body.paymentLinkId;
  const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 420, height: 860 } });
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(`${stack.svc.url}/pay/${id}`);
  await page.getByLabel(/Amount/).fill("500");
  await page.getByRole("button", { name: "Continue to payment" }).click();
  await page.getByRole("alert").waitFor();
  expect(await page.getByRole("alert").innerText()).toContain("at most 50.00");
  // (axe needs script: the first test checks these pages with it.)
  await screenshot(page, "06-amount-refused", SHOTS);
  await page.getByLabel(/Amount/).fill("20");
  await page.getByRole("button", { name: "Continue to payment" }).click();
  await page.waitForURL(/\/checkout\/v1\/#/);
  const started = new URLSearchParams(new URL(page.url()).hash.slice(1));
  const session = await stack.svc.call("GET", `/payment-sessions/${started.get("paymentSessionId")}`, { auth: stack.key });
  expect(session.body).toMatchObject({ amount: "20.00", paymentLinkId: id, status: "PENDING" });
}, 60_000);

test("the dashboard's Payment links: create a payer-chosen link from the form, open it, deactivate it (no serious accessibility violation)", async () => {
  const { merchantWithUser, TEST_PASSWORD } = await import("../../../testing/dashboard.ts");
  await merchantWithUser(stack.svc, "links@pay.example");
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(`${stack.svc.url}/dashboard/sign-in`);
  await page.fill("#email", "links@pay.example");
  await page.fill("#password", TEST_PASSWORD);
  await page.click("button[type=submit]");
  await page.waitForURL(/\/dashboard\/sandbox$/);
  await page.click("nav.side >> text=Payment links");
  await page.waitForURL(/\/dashboard\/sandbox\/payment-links$/);
  expect(await page.textContent(".empty")).toContain("No payment link yet");
  expect(await seriousViolations(page)).toEqual([]);
  await screenshot(page, "07-dashboard-empty", SHOTS);
  await page.getByLabel("What is it for").fill("Membership 2027");
  await page.getByLabel("The payer chooses, within").check();
  await page.getByLabel("From").fill("10.00");
  await page.getByLabel("To", { exact: true }).fill("100.00");
  await page.click("text=Create link");
  await page.waitForURL(/\/payment-links\/plink_/);
  expect(await page.locator("main").innerText()).toContain("10.00–100.00 USD");
  expect(await seriousViolations(page)).toEqual([]);
  await screenshot(page, "08-dashboard-link", SHOTS);
  const address = (await page.textContent("#pl-url"))!;
  expect(address).toContain("/pay/plink_");
  page.once("dialog", (d) => void d.accept());
  await page.click("button:has-text('Deactivate')");
  await page.waitForURL(/notice=payment-link-deactivated/);
  expect(await page.locator("main").innerText()).toContain("Deactivated");
  await screenshot(page, "09-dashboard-deactivated", SHOTS);
}, 60_000);
