/**
 * A refund link from the dashboard in Debian's Chromium against a real service and Postgres: a
 * paid sandbox session (its ledger row, as the actor writes a confirmed payment) is refunded to a
 * link that requires approval, through the form's destination choice and the review; its claim
 * URL is copied with the page's Copy button (read back from the clipboard); the payer opens that
 * URL in another tab and claims it; the Approvals page lists it with the claimed address; Approve
 * makes it due. Then Settings → Refunds turns automatic returns on. On every page: axe-core, the
 * CSP, a screenshot under artifacts/dashboard/ (link-*.png), wide and phone-sized.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { merchantWithUser, TEST_PASSWORD } from "../../../testing/dashboard.ts";
import { launchChromium, screenshot, seriousViolations } from "../../../testing/browser.ts";

const EMAIL = "links@shop.example";
const PAYER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

let svc: TestService;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let key: string;
const cspViolations: string[] = [];

beforeAll(async () => {
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false" });
  key = (await merchantWithUser(svc, EMAIL)).sandboxKey;
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: svc.url });
  page = await context.newPage();
  page.on("console", (msg) => {
    if (/Content Security Policy|Refused to/i.test(msg.text())) cspViolations.push(msg.text());
  });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await svc?.close();
});

const url = (path: string) => `${svc.url}${path}`;
const api = (method: string, path: string, body?: unknown) => svc.call(method, path, { auth: key, body });

async function check(p: Page, name: string) {
  expect({ page: name, violations: await seriousViolations(p) }).toEqual({ page: name, violations: [] });
  expect({ page: name, csp: cspViolations }).toEqual({ page: name, csp: [] });
  await screenshot(p, name);
}

test("a link refund from the dashboard: choose a link with approval, review, copy its URL, the payer claims it, approve it", async () => {
  const id = (await api("POST", "/payment-sessions", { amount: "4.00", currency: "USD", referenceId: "link-me" })).body.paymentSessionId as string;
  await svc.services.database.sql`
    insert into app.session_funds (session_id, chain_id, direction, tx_hash, log_index, amount, block_timestamp)
    select ${id}, chain_id, 'in', ${`0x${"77".repeat(32)}`}, 0, 4000000, now() from app.session_deposits where session_id = ${id} order by chain_id limit 1`;

  await page.goto(url("/dashboard/sign-in"));
  await page.fill("#email", EMAIL);
  await page.fill("#password", TEST_PASSWORD);
  await page.click("button[type=submit]");
  await page.waitForURL(/\/dashboard\/sandbox$/);

  // The form: a refund link that waits for approval, open for a day.
  await page.goto(url(`/dashboard/sandbox/transactions/${id}`));
  await page.click("#refund-link");
  await page.waitForURL(/\/refund$/);
  expect(await page.isChecked("#dest-payer")).toBe(true);
  await page.fill("#refund-amount", "1.50");
  await page.selectOption("#refund-reason", "requested_by_customer");
  await page.check("#dest-link");
  await page.check("#link-approval");
  await page.selectOption("#link-lifetime", "86400");
  await check(page, "link-01-form");

  await page.click("text=Review the refund");
  await page.waitForURL(/\/refund\/review\?/);
  expect(await page.textContent("#review-amount")).toBe("1.50 USD");
  expect(await page.textContent("#review-destination")).toContain("a refund link: the payer names the address. You approve it after the claim");
  expect(await page.textContent("#review-parts tbody tr")).toContain("the address the payer claims the link with");
  expect((await api("GET", `/payment-sessions/${id}/refunds`)).body.data).toEqual([]);
  await check(page, "link-02-review");

  await page.click("button:has-text('Pay from the refund balance')");
  await page.waitForURL(/notice=refund-link-created/);
  expect(await page.textContent("[role=status]")).toContain("Refund link created. Copy its URL below");
  const [refund] = (await api("GET", `/payment-sessions/${id}/refunds`)).body.data as { refundId: string; claimUrl: string; waitingReason: string }[];
  expect(refund!.waitingReason).toBe("awaiting_claim");
  const code = page.locator(`#claim-${refund!.refundId}`);
  expect(await code.textContent()).toBe(refund!.claimUrl);
  expect(await page.textContent(`#claim-state-${refund!.refundId}`)).toContain("Not claimed yet; open until");

  // Copy: the button puts the claim URL on the clipboard and says so.
  const copy = page.locator(`button[data-copy="#claim-${refund!.refundId}"]`);
  await copy.click();
  await page.waitForFunction((sel) => document.querySelector(sel)?.textContent === "Copied", `button[data-copy="#claim-${refund!.refundId}"]`);
  const copied = (await page.evaluate("navigator.clipboard.readText()")) as string;
  expect(copied).toBe(refund!.claimUrl);
  await check(page, "link-03-transaction-link");

  // The payer opens the copied URL in a tab of their own and claims it (its path on this test
  // service: the test configuration's public base names no port a browser may open).
  const payer = await context.newPage();
  await payer.goto(url(new URL(copied).pathname));
  await payer.fill("#address", PAYER);
  await payer.click("button:has-text('Claim refund')");
  await payer.waitForLoadState();
  expect(await payer.textContent("main")).toContain(PAYER);
  await screenshot(payer, "link-04-payer-claimed");
  await payer.close();

  // The session page says it was claimed and waits; the Approvals page lists it with the address.
  await page.reload();
  expect(await page.textContent(`#claim-state-${refund!.refundId}`)).toContain(`Claimed by ${PAYER}`);
  await page.click(`#claim-state-${refund!.refundId} >> text=Approvals`);
  await page.waitForURL(/\/refund-approvals#approve-/);
  const row = page.locator(`#approve-${refund!.refundId}`);
  expect(await row.textContent()).toContain(PAYER);
  expect(await row.textContent()).toContain("1.50 USD");
  await check(page, "link-05-approvals");
  await page.setViewportSize({ width: 390, height: 844 });
  await check(page, "link-05-approvals-phone");
  await page.setViewportSize({ width: 1280, height: 860 });

  await row.locator("button:has-text('Approve and send 1.50 USD')").click();
  await page.waitForURL(/notice=refund-approved/);
  expect(await page.textContent("[role=status]")).toContain("Refund approved.");
  expect(await page.locator(`#approve-${refund!.refundId}`).count()).toBe(0);
  await check(page, "link-06-approved");
  expect((await api("GET", `/refunds/${refund!.refundId}`)).body).toMatchObject({ status: "PENDING", waitingReason: null, parts: [{ destination: PAYER }] });
  await page.goto(url(`/dashboard/sandbox/transactions/${id}`));
  expect(await page.textContent(`#claim-state-${refund!.refundId}`)).toContain("approved by you");
  await check(page, "link-07-transaction-approved");

  // An automatic return waiting on this payment (as the session step writes its timer): Keep the money.
  await svc.services.database.sql`
    insert into app.auto_returns (id, session_id, merchant_id, environment, chain_id, reason, due_at)
    select 'ar_browser1', id, merchant_id, environment, 31337, 'overpayment', now() + interval '1 day' from app.payment_sessions where id = ${id}`;
  await page.reload();
  expect(await page.textContent("#automatic-returns")).toContain("Scheduled: goes back by itself");
  await page.click("button:has-text('Keep the money')");
  await page.waitForURL(/notice=automatic-returns-kept/);
  expect(await page.textContent("#automatic-returns")).toContain("Kept: you chose to keep the money");
  await check(page, "link-07b-transaction-kept");

  // Events: the refund's event beside the session's.
  await page.click("nav.side >> text=Events");
  await page.waitForURL(/\/events$/);
  expect(await page.textContent("ol.events")).toContain("refund.created");
  expect(await page.textContent("ol.events")).toContain(refund!.refundId);
  await check(page, "link-07c-events");

  // Settings → Refunds: automatic returns on, after 2 hours.
  await page.click("nav.side >> text=Refunds");
  await page.waitForURL(/\/settings\/refunds$/);
  await check(page, "link-08-refund-settings");
  await page.check("#auto-on");
  await page.fill("#auto-delay", "2");
  await page.selectOption("#auto-unit", "hours");
  await page.click("button:has-text('Save')");
  await page.waitForURL(/notice=refund-settings-saved/);
  expect(await page.textContent("#auto-now")).toContain("Automatic returns are on");
  expect((await api("GET", "/refund-settings")).body).toEqual({ automaticReturns: true, delaySeconds: 7200 });
  await check(page, "link-09-refund-settings-saved");
}, 180_000);
