/**
 * A refund from the dashboard in Debian's Chromium against the real stack (anvil with the refund
 * vaults deployed, the Ponder indexer, the runner and the sweeper): a paid sandbox session is
 * refunded through the form and its review step; the refund waits while the refund balance is
 * empty, the balance page and the home page say it is too low, "Fund from faucet" mints to it,
 * and the refund goes out by itself and shows SUCCEEDED — the payer's balance, read from the
 * chain, credited exactly. On every page: axe-core, the CSP, a screenshot under artifacts/dashboard/.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { erc20Abi, getAddress } from "viem";
import { eventually } from "../../../testing/eventually.ts";
import { startLifecycleStack, type LifecycleStack } from "../../../testing/lifecycle.ts";
import { launchChromium, screenshot, seriousViolations } from "../../../testing/browser.ts";
import { createApiKey, createMerchant } from "../credentials/store.ts";
import { devFaucetAccount } from "../../../shared/contracts/deploy.ts";
import { ensureRefundVaultsDeployed } from "../../../shared/contracts/refund-vaults.ts";
import { DEV_RELAYER_ADDRESS } from "../credentials/relayer.ts";
import { createUser } from "./users.ts";

const EMAIL = "refunds@shop.example";
const PASSWORD = "a long enough password";

let stack: LifecycleStack;
let browser: Browser;
let page: Page;
let key: string;
const cspViolations: string[] = [];

beforeAll(async () => {
  stack = await startLifecycleStack();
  const c = stack.chains[0]!;
  await ensureRefundVaultsDeployed({ publicClient: c.publicClient, walletClient: c.walletClient }, DEV_RELAYER_ADDRESS);
  const db = stack.svc.services.database.db;
  const m = await createMerchant(db, "Refund Shop");
  await createUser(db, m.id, EMAIL, PASSWORD);
  key = (await createApiKey(db, m.id, "sandbox", "refund test")).secret;
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  page.on("console", (msg) => {
    if (/Content Security Policy|Refused to/i.test(msg.text())) cspViolations.push(msg.text());
  });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

const url = (path: string) => `${stack.svc.url}${path}`;
const api = (method: string, path: string, body?: unknown) => stack.svc.call(method, path, { auth: key, body });
const payerBalance = () => stack.chains[0]!.publicClient.readContract({ address: stack.chains[0]!.token, abi: erc20Abi, functionName: "balanceOf", args: [devFaucetAccount().address] });

async function check(name: string) {
  expect({ page: name, violations: await seriousViolations(page) }).toEqual({ page: name, violations: [] });
  expect({ page: name, csp: cspViolations }).toEqual({ page: name, csp: [] });
  await screenshot(page, name);
}

test("refund a paid sandbox session through the review; it waits for money, the faucet funds the balance, and it lands at the payer", async () => {
  const id = (await api("POST", "/payment-sessions", { amount: "6.00", currency: "USD", referenceId: "refund-me" })).body.paymentSessionId as string;
  expect((await api("POST", `/sandbox/payment-sessions/${id}/pay`, {})).status).toBe(200);
  await eventually(async () => ((await api("GET", `/payment-sessions/${id}`)).body.status === "SUCCEEDED" ? true : undefined), "the payment to succeed", 60_000);

  await page.goto(url("/dashboard/sign-in"));
  await page.fill("#email", EMAIL);
  await page.fill("#password", PASSWORD);
  await page.click("button[type=submit]");
  await page.waitForURL(/\/dashboard\/sandbox$/);

  // The form: the refundable rest by default, the API's reasons.
  await page.goto(url(`/dashboard/sandbox/transactions/${id}`));
  await page.click("#refund-link");
  await page.waitForURL(/\/refund$/);
  expect(await page.inputValue("#refund-amount")).toBe("6.00");
  await page.fill("#refund-amount", "2.50");
  await page.selectOption("#refund-reason", "requested_by_customer");
  await check("refund-01-form");

  // The review: amount, token, network and the address that paid, before anything is sent.
  await page.click("text=Review the refund");
  await page.waitForURL(/\/refund\/review\?/);
  expect(await page.textContent("#review-amount")).toBe("2.50 USD");
  expect(await page.textContent("#review-network")).toContain("chain 31337");
  const part = (await page.textContent("#review-parts tbody tr"))!;
  expect(part).toContain("TUSD");
  expect(part).toContain("2.50");
  expect(part).toContain(getAddress(devFaucetAccount().address));
  expect((await api("GET", `/payment-sessions/${id}/refunds`)).body.data).toEqual([]); // nothing written yet
  await check("refund-02-review");

  const before = await payerBalance();
  await page.click("button:has-text('Pay from the refund balance')");
  await page.waitForURL(/notice=refund-created/);
  expect(await page.textContent("[role=status]")).toContain("Refund created");
  // The balance is empty: the refund waits for money, and says why.
  const row = page.locator("#refunds tbody tr").first();
  await eventually(async () => {
    await page.reload();
    return (await row.textContent())?.includes("insufficient_refund_balance") ? true : undefined;
  }, "the refund to wait for its balance", 30_000);
  expect(await row.textContent()).toContain("PENDING");
  expect(await row.locator("button:has-text('Cancel refund')").count()).toBe(1);
  expect(await page.textContent("ol.timeline")).toContain("Refund asked for");
  await check("refund-03-transaction-waiting");

  // The home page and the balance page say the balance is too low.
  await page.click("nav.side >> text=Home");
  expect(await page.textContent("#low-refund-balance")).toContain("Refund balance too low");
  await check("refund-04-home-low-balance");
  await page.click("#low-refund-balance >> text=Fund the refund balance");
  await page.waitForURL(/\/refund-balance$/);
  const vault = (await api("GET", "/refund-balances")).body.data[0].address as string;
  expect(await page.textContent("#vault-31337")).toBe(vault);
  expect(await page.textContent("#waiting")).toContain(id);
  expect(await page.textContent("table.balances")).toContain("Too low");
  await check("refund-04-balance-low");

  // Fund from the faucet: the refund goes out by itself.
  await page.fill("#fund-31337", "20.00");
  await page.click("button:has-text('Fund from faucet')");
  await page.waitForURL(/notice=refund-balance-funded/);
  expect(await page.textContent("table.balances tbody tr")).toContain("20.00");
  await page.goto(url(`/dashboard/sandbox/transactions/${id}`));
  await eventually(async () => {
    await page.reload();
    return (await row.textContent())?.includes("SUCCEEDED") ? true : undefined;
  }, "the refund to succeed once funded", 60_000);
  expect(await row.textContent()).toMatch(/0x[0-9a-f]{64}/);
  expect(await row.locator("button:has-text('Cancel refund')").count()).toBe(0);
  expect(await page.textContent("ol.timeline")).toContain("Refunded");
  expect(await page.textContent("#amount-refunded")).toBe("2.50 USD");
  await check("refund-05-transaction-refunded");
  // The payer, read from the chain: credited the refund exactly.
  expect((await payerBalance()) - before).toBe(2_500_000n);

  // The list's badge, and the balance after it.
  await page.click("nav.side >> text=Transactions");
  expect(await page.textContent("tbody tr:has-text('refund-me')")).toContain("Partly refunded");
  await check("refund-06-transactions");
  await page.click("nav.side >> text=Refund balance");
  expect(await page.textContent("table.balances tbody tr")).toContain("17.50");
  expect(await page.textContent("#waiting-h + *")).toContain("None");
  await check("refund-07-balance-funded");
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(url(`/dashboard/sandbox/transactions/${id}/refund`));
  await check("refund-08-phone-form");
}, 240_000);
