/**
 * The payer's refund-link page in Debian's Chromium against a real service and Postgres: the
 * payer opens the link, connects an injected EIP-1193 wallet (testing/wallet.ts), which fills the
 * address, and claims (a typo before shows its reason on the page); without script the form alone
 * claims; an expired link says so. No serious accessibility violation on any of them.
 * Screenshots of each into artifacts/refund-page/.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { launchChromium, screenshot, seriousViolations } from "../../../testing/browser.ts";
import { installWallet } from "../../../testing/wallet.ts";

const SHOTS = "refund-page";
let svc: TestService;
let key: string;
let browser: Browser;
let n = 0;

beforeAll(async () => {
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false" });
  key = (await svc.merchant("Blue Bottle Shop")).sandboxKey;
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await svc?.close();
});

const sql = () => svc.services.database.sql;

/** A refund of 12.50 to a link, of a session that received 12.50; its id and the path of its page. */
async function linkRefund(extra: Record<string, unknown> = {}): Promise<{ refundId: string; path: string }> {
  const s = await svc.call("POST", "/payment-sessions", { auth: key, body: { amount: "12.50", currency: "USD" } });
  const [d] = await sql()`select chain_id from app.session_deposits where session_id = ${s.body.paymentSessionId} order by chain_id limit 1`;
  await sql()`
    insert into app.session_funds (session_id, chain_id, direction, tx_hash, log_index, amount, block_timestamp)
    values (${s.body.paymentSessionId}, ${d!.chain_id}, 'in', ${`0x${(++n).toString(16).padStart(64, "d")}`}, 0, 12500000, now())`;
  const r = await svc.call("POST", `/payment-sessions/${s.body.paymentSessionId}/refunds`, { auth: key, body: { reason: "requested_by_customer", destination: "link", ...extra } });
  expect(r.status).toBe(201);
  return { refundId: r.body.refundId, path: new URL(r.body.claimUrl).pathname };
}

const destinationOf = async (refundId: string) => (await svc.call("GET", `/refunds/${refundId}`, { auth: key })).body.parts[0].destination as string | null;

test("the payer connects an injected wallet, which fills the address, and claims", async () => {
  const { refundId, path } = await linkRefund();
  const context = await browser.newContext({ viewport: { width: 520, height: 860 } });
  const wallet = await installWallet(context, { knownChains: { 31337: "http://127.0.0.1:9" } });
  const page = await context.newPage();
  await page.goto(`${svc.url}${path}`);
  await page.getByRole("heading", { name: "Claim your refund" }).waitFor();
  const text = await page.locator("main").innerText();
  for (const shown of ["Blue Bottle Shop", "12.50", "USD", "TUSD", "Sandbox"]) expect(text).toContain(shown);
  expect(await seriousViolations(page)).toEqual([]);
  await screenshot(page, "fresh", SHOTS);

  // A typo first: the reason on the page, the form again, nothing claimed.
  await page.getByLabel(/Your wallet address/).fill("0x1234");
  await page.getByRole("button", { name: "Claim refund" }).click();
  await page.getByRole("alert").waitFor();
  expect(await page.getByRole("alert").innerText()).toContain("not an address");
  expect(await seriousViolations(page)).toEqual([]);
  await screenshot(page, "refused-address", SHOTS);
  expect(await destinationOf(refundId)).toBeNull();

  await page.getByRole("button", { name: "Connect wallet" }).click();
  await page.waitForFunction(() => (document.getElementById("address") as HTMLInputElement).value !== "");
  expect(await page.getByLabel(/Your wallet address/).inputValue()).toBe(wallet.address);
  expect(await page.getByRole("alert").count()).toBe(0); // the typo's reason went with the typo
  expect(wallet.calls.map((c) => c.method)).toContain("eth_requestAccounts");
  await screenshot(page, "connected", SHOTS);

  await page.getByRole("button", { name: "Claim refund" }).click();
  await page.getByRole("heading", { name: "Refund claimed" }).waitFor();
  expect(new URL(page.url()).pathname).toBe(path);
  expect(await page.locator("main").innerText()).toContain(wallet.address);
  expect(await seriousViolations(page)).toEqual([]);
  await screenshot(page, "claimed", SHOTS);
  expect(await destinationOf(refundId)).toBe(wallet.address);
  await context.close();
}, 60_000);

test("without script (and without a wallet) the form alone claims, and a refused address is explained", async () => {
  const { refundId, path } = await linkRefund();
  const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 520, height: 860 } });
  const page = await context.newPage();
  await page.goto(`${svc.url}${path}`);
  expect(await page.getByRole("button", { name: "Connect wallet" }).isVisible()).toBe(false);
  await page.getByLabel(/Your wallet address/).fill(`0x${"0".repeat(40)}`);
  await page.getByRole("button", { name: "Claim refund" }).click();
  await page.getByRole("alert").waitFor();
  expect(await page.getByRole("alert").innerText()).toContain("zero address");
  expect(await destinationOf(refundId)).toBeNull();

  const to = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
  await page.getByLabel(/Your wallet address/).fill(to);
  await page.getByRole("button", { name: "Claim refund" }).click();
  await page.getByRole("heading", { name: "Refund claimed" }).waitFor();
  expect(await destinationOf(refundId)).toBe(to);
  await context.close();
}, 60_000);

test("an expired link says so, with no form", async () => {
  const { refundId, path } = await linkRefund();
  await sql()`update app.refund_links set expires_at = now() - interval '1 minute' where refund_id = ${refundId}`;
  const context = await browser.newContext({ viewport: { width: 520, height: 860 } });
  const page = await context.newPage();
  const res = await page.goto(`${svc.url}${path}`);
  expect(res!.status()).toBe(410);
  await page.getByRole("heading", { name: "This refund link has expired" }).waitFor();
  expect(await page.locator("form").count()).toBe(0);
  expect(await seriousViolations(page)).toEqual([]);
  await screenshot(page, "expired", SHOTS);
  await context.close();
}, 60_000);

test("a claim waiting for approval says so; a refund canceled meanwhile says canceled", async () => {
  const { refundId, path } = await linkRefund({ requireApproval: true });
  const context = await browser.newContext({ viewport: { width: 520, height: 860 } });
  const page = await context.newPage();
  await page.goto(`${svc.url}${path}`);
  await page.getByLabel(/Your wallet address/).fill("0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC");
  await page.getByRole("button", { name: "Claim refund" }).click();
  await page.getByRole("heading", { name: "Refund claimed" }).waitFor();
  expect(await page.locator("main").innerText()).toContain("once Blue Bottle Shop has approved it");
  await screenshot(page, "awaiting-approval", SHOTS);
  expect((await svc.call("POST", `/refunds/${refundId}/cancel`, { auth: key, body: {} })).body.status).toBe("CANCELED");
  const res = await page.reload();
  expect(res!.status()).toBe(410);
  await page.getByRole("heading", { name: "This refund was canceled" }).waitFor();
  expect(await seriousViolations(page)).toEqual([]);
  await screenshot(page, "canceled", SHOTS);
  await context.close();
}, 60_000);
