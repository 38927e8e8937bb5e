/**
 * A refund paid from the merchant's own wallet, in Debian's Chromium against the real stack
 * (anvil, the indexer, the runner, the sweeper), with an injected EIP-1193 wallet
 * (testing/wallet.ts) backed by the anvil account that is the merchant's settlement address:
 *
 *   TestUSD: review → "Pay from my wallet" → the wallet page → the wallet signs the
 *   TransferWithAuthorization (eth_signTypedData_v4) → the relayer submits it → SUCCEEDED, the
 *   payer credited exactly, read from the chain. A wallet on another account is told so, and
 *   nothing is signed or stored.
 *   tUSDT: the wallet sends the transfer itself (eth_sendTransaction) → SUCCEEDED.
 *
 * On every page: axe-core, the CSP, a screenshot in /tmp/refwallet-shots.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { createWalletClient, erc20Abi, getAddress, http, parseAbi, type Address } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { eventually } from "../../../testing/eventually.ts";
import { startLifecycleStack, type LifecycleStack } from "../../../testing/lifecycle.ts";
import { launchChromium, seriousViolations } from "../../../testing/browser.ts";
import { installWallet, type TestWallet } from "../../../testing/wallet.ts";
import { createApiKey, createMerchant } from "../credentials/store.ts";
import { devFaucetAccount, mintTestUsd, predictedTestUsdtAddress } from "../../../shared/contracts/deploy.ts";
import { setSettlement } from "../sessions/settlements.ts";
import { createUser } from "./users.ts";

const SHOTS = "/tmp/refwallet-shots";
const EMAIL = "wallet-refunds@shop.example";
const PASSWORD = "a long enough password";
// Anvil's accounts #7 (the merchant's settlement address, in the wallet), #8 (another account), #9 (the sandbox faucet, here also a tUSDT payer).
const SETTLEMENT_KEY = "0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356" as const;
const OTHER_KEY = "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97" as const;
const USDT_PAYER = privateKeyToAccount("0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6");
const SETTLEMENT = privateKeyToAccount(SETTLEMENT_KEY);

let stack: LifecycleStack;
let browser: Browser;
let key: string;
const cspViolations: string[] = [];

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  stack = await startLifecycleStack();
  const db = stack.svc.services.database.db;
  const m = await createMerchant(db, "Wallet Refund Shop");
  await createUser(db, m.id, EMAIL, PASSWORD);
  key = (await createApiKey(db, m.id, "sandbox", "wallet refund test")).secret;
  await setSettlement(db, m.id, "sandbox", stack.chains[0]!.chain.chainId, SETTLEMENT.address);
  browser = await launchChromium();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

const url = (path: string) => `${stack.svc.url}${path}`;
const api = (method: string, path: string, body?: unknown) => stack.svc.call(method, path, { auth: key, body });
const chain = () => stack.chains[0]!;
const balanceOf = (token: Address, who: Address) => chain().publicClient.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [who] });

async function withWallet(privateKey: `0x${string}`): Promise<{ context: BrowserContext; page: Page; wallet: TestWallet }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const wallet = await installWallet(context, { knownChains: { [chain().chain.chainId]: chain().chain.rpcUrl }, privateKey, signsTypedData: true });
  const page = await context.newPage();
  page.on("console", (msg) => {
    if (/Content Security Policy|Refused to/i.test(msg.text())) cspViolations.push(msg.text());
  });
  await page.goto(url("/dashboard/sign-in"));
  await page.fill("#email", EMAIL);
  await page.fill("#password", PASSWORD);
  await page.click("button[type=submit]");
  await page.waitForURL(/\/dashboard\/sandbox$/);
  return { context, page, wallet };
}

async function check(page: Page, name: string) {
  expect({ page: name, violations: await seriousViolations(page) }).toEqual({ page: name, violations: [] });
  expect({ page: name, csp: cspViolations }).toEqual({ page: name, csp: [] });
  await page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
}

async function paidSession(amount: string, pay: (s: { id: string; deposit: Address }) => Promise<void>): Promise<string> {
  const r = await api("POST", "/payment-sessions", { amount, currency: "USD" });
  const id = r.body.paymentSessionId as string;
  await pay({ id, deposit: r.body.networks[0].depositAddress });
  await eventually(async () => ((await api("GET", `/payment-sessions/${id}`)).body.status === "SUCCEEDED" ? true : undefined), "the payment to succeed", 60_000);
  return id;
}

/** Form → review → "Pay from my wallet": the wallet page of the new refund. */
async function toWalletPage(page: Page, id: string, amount: string, shots?: string): Promise<string> {
  await page.goto(url(`/dashboard/sandbox/transactions/${id}/refund`));
  await page.fill("#refund-amount", amount);
  await page.selectOption("#refund-reason", "requested_by_customer");
  await page.click("text=Review the refund");
  await page.waitForURL(/\/refund\/review\?/);
  if (shots) await check(page, `${shots}-review`);
  await page.click("#pay-from-wallet");
  await page.waitForURL(/\/refunds\/rf_[A-Za-z0-9]+\/wallet$/);
  return /\/refunds\/(rf_[A-Za-z0-9]+)\/wallet$/.exec(page.url())![1]!;
}

test("TestUSD: the injected wallet on the settlement address signs; the relayer submits it; the payer is credited", async () => {
  const payer = getAddress(devFaucetAccount().address);
  const id = await paidSession("6.00", async (s) => {
    expect((await api("POST", `/sandbox/payment-sessions/${s.id}/pay`, {})).status).toBe(200);
  });

  // A wallet on another account: told so, nothing signed, nothing stored.
  const other = await withWallet(OTHER_KEY);
  const first = await toWalletPage(other.page, id, "2.50", "wallet-01");
  await check(other.page, "wallet-02-sign-page");
  await other.page.click("#wallet-pay");
  await other.page.waitForSelector("#wallet-problem:not([hidden])");
  expect(await other.page.textContent("#wallet-problem")).toContain(`not your settlement address ${SETTLEMENT.address}`);
  expect(other.wallet.calls.map((c) => c.method)).not.toContain("eth_signTypedData_v4");
  expect((await api("GET", `/refunds/${first}`)).body).toMatchObject({ status: "PENDING", waitingReason: "awaiting_wallet" });
  await check(other.page, "wallet-03-wrong-account");
  await other.context.close();

  // The settlement address's wallet, on the same refund (its row links to this page too).
  const own = await withWallet(SETTLEMENT_KEY);
  await own.page.goto(url(`/dashboard/sandbox/transactions/${id}`));
  await own.page.click(`#${first} >> text=Pay from my wallet`);
  await own.page.waitForURL(/\/wallet$/);
  const before = await balanceOf(chain().token, payer);
  await own.page.click("#wallet-pay");
  await own.page.waitForURL(/notice=refund-wallet-signed/);
  expect(own.wallet.calls.map((c) => c.method)).toContain("eth_signTypedData_v4");
  expect(await own.page.textContent("[role=status]")).toContain("Your wallet's payment is recorded");
  const row = own.page.locator(`#${first}`);
  await eventually(async () => {
    await own.page.reload();
    return (await row.textContent())?.includes("SUCCEEDED") ? true : undefined;
  }, "the wallet refund to succeed", 60_000);
  expect(await row.textContent()).toMatch(/0x[0-9a-f]{64}/);
  await check(own.page, "wallet-04-refunded");
  expect((await balanceOf(chain().token, payer)) - before).toBe(2_500_000n);
  await own.context.close();
}, 240_000);

test("tUSDT: the injected wallet sends the transfer itself; the service follows it to SUCCEEDED", async () => {
  const usdt = predictedTestUsdtAddress();
  await mintTestUsd({ publicClient: chain().publicClient, walletClient: chain().walletClient, to: USDT_PAYER.address, amount: 10_000_000n, token: usdt });
  const payerWallet = createWalletClient({ account: USDT_PAYER, transport: http(chain().chain.rpcUrl) });
  const id = await paidSession("3.00", async (s) => {
    const hash = await payerWallet.writeContract({ address: usdt, abi: parseAbi(["function transfer(address to, uint256 amount)"]), chain: null, functionName: "transfer", args: [s.deposit, 3_000_000n] });
    await chain().publicClient.waitForTransactionReceipt({ hash });
  });
  const own = await withWallet(SETTLEMENT_KEY);
  await toWalletPage(own.page, id, "1.25");
  expect(await own.page.textContent("#wallet-pay")).toBe("Send from my wallet");
  await check(own.page, "wallet-05-transfer-page");
  const before = await balanceOf(usdt, USDT_PAYER.address);
  await own.page.click("#wallet-pay");
  await own.page.waitForURL(/notice=refund-wallet-signed/);
  expect(own.wallet.calls.map((c) => c.method)).toContain("eth_sendTransaction");
  const row = own.page.locator("#refunds tbody tr").first();
  await eventually(async () => {
    await own.page.reload();
    return (await row.textContent())?.includes("SUCCEEDED") ? true : undefined;
  }, "the wallet transfer's refund to succeed", 60_000);
  await check(own.page, "wallet-06-transfer-refunded");
  expect((await balanceOf(usdt, USDT_PAYER.address)) - before).toBe(1_250_000n);
  await own.context.close();
}, 240_000);
