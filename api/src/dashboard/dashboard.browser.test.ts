/**
 * The dashboard in Debian's Chromium (playwright-core) against a real service, Postgres,
 * anvil, Ponder indexer, session runner and sweeper: a merchant signs in, makes a sandbox key,
 * creates a session with it over the API, pays it with the sandbox tool and sees it SUCCEEDED
 * with its timeline and sweep; revokes the key; adds a webhook endpoint and sends a test event;
 * changes a settlement address. On every page: axe-core finds no serious or critical
 * violation, the page breaks no rule of its CSP, and a screenshot goes to artifacts/dashboard/.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { eventually } from "../../../testing/eventually.ts";
import { startLifecycleStack, type LifecycleStack } from "../../../testing/lifecycle.ts";
import { createMerchant } from "../credentials/store.ts";
import { createUser } from "./users.ts";
import { launchChromium, screenshot, seriousViolations } from "../../../testing/browser.ts";
import { createApiKey } from "../credentials/store.ts";
import { devFaucetAccount } from "../../../shared/contracts/deploy.ts";
import { csvRecords } from "../../../testing/csv.ts";

const EMAIL = "owner@shop.example";
const PASSWORD = "a long enough password";

let stack: LifecycleStack;
let browser: Browser;
let page: Page;
let receiver: ReturnType<typeof Bun.serve>;
const received: string[] = [];
const cspViolations: string[] = [];
const dialogs: string[] = [];

beforeAll(async () => {
  stack = await startLifecycleStack();
  const m = await createMerchant(stack.svc.services.database.db, "Corner Shop");
  await createUser(stack.svc.services.database.db, m.id, EMAIL, PASSWORD);
  receiver = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const body = await req.text();
      // A second endpoint of the events test answers like a broken handler.
      if (new URL(req.url).pathname === "/flaky") return new Response("upstream exploded", { status: 500 });
      received.push(body);
      return new Response("ok");
    },
  });
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  page.on("console", (msg) => {
    if (/Content Security Policy|Refused to/i.test(msg.text())) cspViolations.push(msg.text());
  });
  page.on("dialog", async (d) => {
    dialogs.push(d.message());
    // Only our own confirmations may open a dialog; an alert would be injected script.
    if (d.type() === "confirm") await d.accept();
    else await d.dismiss();
  });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  receiver?.stop(true);
  await stack?.close();
});

const url = (path: string) => `${stack.svc.url}${path}`;

/** Every page we look at: no serious/critical axe violation, no CSP violation, a screenshot. */
async function check(name: string) {
  expect({ page: name, violations: await seriousViolations(page) }).toEqual({ page: name, violations: [] });
  expect({ page: name, csp: cspViolations }).toEqual({ page: name, csp: [] });
  await screenshot(page, name);
}

test("sign in, key, session paid with the sandbox tool, revoke, webhook test event, settlement change", async () => {
  await page.goto(url("/dashboard"));
  expect(page.url()).toContain("/dashboard/sign-in");
  await check("01-sign-in");
  await page.fill("#email", EMAIL);
  await page.fill("#password", "wrong password here");
  await page.click("button[type=submit]");
  expect(await page.textContent("[role=alert]")).toContain("Wrong email or password");
  await page.fill("#password", PASSWORD);
  await page.click("button[type=submit]");
  // Signed in, a person lands on the sandbox's home page.
  await page.waitForURL(/\/dashboard\/sandbox$/);
  expect(await page.textContent("h1")).toContain("Home");
  await page.click("nav.side >> text=Transactions");
  await page.waitForURL(/\/dashboard\/sandbox\/transactions$/);
  expect(await page.textContent(".sandbox-banner")).toContain("Sandbox");
  expect(await page.textContent("#merchant-id")).toMatch(/^mch_test_/);
  expect(await page.textContent(".empty")).toContain("curl -X POST");
  await check("02-transactions-empty");

  // A sandbox key, shown once.
  await page.click("nav.side >> text=API keys");
  await page.fill("#key-name", "shop server");
  await page.click("text=Create key");
  const secret = (await page.textContent("#new-key"))!.trim();
  expect(secret).toMatch(/^sk_test_/);
  await check("03-api-key-created");
  // The form was answered with a redirect: a reload shows the page again, without the secret,
  // and makes no second key.
  expect(page.url()).toEndWith("/dashboard/sandbox/settings/api-keys");
  await page.reload();
  expect(await page.locator("#new-key").count()).toBe(0);
  expect(await page.locator("td", { hasText: "shop server" }).count()).toBe(1);

  // A session over the API with that key; the reference and metadata try to inject markup.
  const created = await stack.svc.call("POST", "/payment-sessions", {
    auth: secret,
    body: { amount: "12.34", currency: "USD", referenceId: "<script>alert('ref')</script>", metadata: { note: "<img src=x onerror=alert('meta')>" } },
  });
  expect(created.status).toBe(201);
  const id = created.body.paymentSessionId as string;
  await page.click("nav.side >> text=Transactions");
  expect(await page.textContent("td.ref")).toBe("<script>alert('ref')</script>");
  await check("04-transactions-list");

  await page.click(`a[href$="/transactions/${id}"]`);
  expect(await page.textContent("table.kv td")).toBe("<img src=x onerror=alert('meta')>");
  await check("05-transaction-pending");
  await page.click("text=Pay it (from the faucet)");
  await page.waitForSelector("[role=status]");
  const state = await eventually(async () => {
    await page.reload();
    const badge = await page.textContent(".summary .badge");
    return badge === "SUCCEEDED" ? badge : undefined;
  }, "the session to show SUCCEEDED", 30_000);
  expect(state).toBe("SUCCEEDED");
  const timeline = await page.textContent("ol.timeline");
  expect(timeline).toContain("Created");
  expect(timeline).toContain("Paid");
  expect(timeline).toContain("Settled");
  expect(await page.textContent("section:has(#tx)")).toContain("Sweep to settlement");
  expect(await page.textContent("section:has(#tx)")).toMatch(/sweep transaction 0x[0-9a-f]{64}/);
  await check("06-transaction-succeeded");

  // Revoke the key: the API refuses it at once.
  await page.click("nav.side >> text=API keys");
  await page.click("button:has-text('Revoke')");
  await page.waitForURL(/notice=key-revoked/);
  expect(dialogs.some((d) => d.startsWith("Revoke the key"))).toBe(true);
  expect((await stack.svc.call("GET", "/payment-sessions?limit=1", { auth: secret })).body.error.code).toBe("api_key_revoked");
  await check("07-api-key-revoked");

  // A webhook endpoint and a test event: the attempt shows.
  await page.click("nav.side >> text=Webhooks");
  await check("08-webhooks-empty");
  await page.fill("#wh-url", `http://127.0.0.1:${receiver.port}/hooks`);
  await page.fill("#wh-desc", "shop <b>backend</b>");
  await page.click("text=Add endpoint");
  expect(await page.textContent("#new-secret")).toMatch(/^whsec_/);
  await check("09-webhook-added");
  await page.click(`a:has-text("127.0.0.1:${receiver.port}")`);
  await page.click("text=Send test event");
  expect(await page.textContent("[role=status]")).toContain("Test event delivered (HTTP 200)");
  expect(await page.textContent("table.list tbody")).toContain("test");
  expect(received.some((b) => b.includes("webhook.test"))).toBe(true);
  await check("10-webhook-endpoint");

  // Settlement: a wrong password and a wrong checksum are refused; the right change is recorded and announced.
  await page.click("nav.side >> text=Settlement");
  await check("11-settlement");
  const good = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
  await page.fill("#addr-31337", good);
  await page.fill("#pw-31337", "not my password");
  await page.click("text=Change settlement address");
  expect(await page.textContent("[role=alert]")).toContain("Wrong password");
  await page.fill("#addr-31337", good.replace("C8", "c8"));
  await page.fill("#pw-31337", PASSWORD);
  await page.click("text=Change settlement address");
  expect(await page.textContent("[role=alert]")).toContain("checksum is wrong");
  await check("12-settlement-refused");
  await page.fill("#addr-31337", good);
  await page.fill("#pw-31337", PASSWORD);
  await page.click("text=Change settlement address");
  await page.waitForURL(/notice=settlement-changed/);
  expect(await page.textContent("main")).toContain(good);
  await eventually(async () => (received.some((b) => b.includes("settlement_address.updated") && b.includes(good)) ? true : undefined), "the settlement announcement");

  await page.click("nav.side >> text=Security history");
  const history = await page.textContent("table.list");
  for (const what of ["Signed in", "Failed sign-in", "Created an API key", "Revoked an API key", "Added a webhook endpoint", "Changed a settlement address", "Settlement change refused"]) expect(history).toContain(what);
  await check("13-security-history");

  // Production: its own merchant id and none of sandbox's data.
  await page.click(".env-switch >> text=Production");
  await page.click("nav.side >> text=Transactions");
  expect(await page.textContent("#merchant-id")).toMatch(/^mch_live_/);
  expect(await page.textContent("main")).not.toContain(id);
  await check("14-production-transactions");

  // A phone.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.click(".env-switch >> text=Sandbox");
  await check("15-phone-transactions");
  await page.goto(url(`/dashboard/sandbox/transactions/${id}`));
  await check("16-phone-transaction");

  // Keyboard: the skip link comes first and leads to the content.
  await page.setViewportSize({ width: 1280, height: 860 });
  await page.goto(url("/dashboard/sandbox/transactions"));
  await page.keyboard.press("Tab");
  expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");

  // Signed out: the pages are gone.
  await page.click("text=Sign out");
  await page.waitForURL(/sign-in/);
  await page.goto(url("/dashboard/sandbox/settings/api-keys"));
  expect(page.url()).toContain("/dashboard/sign-in");
  expect(dialogs.filter((d) => !d.startsWith("Revoke the key"))).toEqual([]);
}, 120_000);

test("events and their deliveries, an endpoint's many attempts, a payment's reconciliation fields and CSV, cancel behind a confirmation", async () => {
  const db = stack.svc.services.database;
  const [merchant] = await db.sql`select m.id from app.merchants m join app.dashboard_users u on u.merchant_id = m.id where u.email = ${EMAIL}`;
  const { secret: key } = await createApiKey(db.db, merchant!.id, "sandbox", "events test");
  const api = (method: string, path: string, body?: unknown) => stack.svc.call(method, path, { auth: key, body });
  // The first test's endpoint (or one like it when this test runs alone).
  const hooks = `http://127.0.0.1:${receiver.port}/hooks`;
  const [found] = await db.sql`select id from app.webhook_endpoints where merchant_id = ${merchant!.id} and environment = 'sandbox' and url = ${hooks} and deleted_at is null`;
  const ep = found ?? (await api("POST", "/webhook-endpoints", { url: hooks })).body;
  expect((await api("POST", "/webhook-endpoints", { url: `http://127.0.0.1:${receiver.port}/flaky`, description: "broken handler" })).status).toBe(201);
  // Many attempts on the first endpoint: more than one page of them.
  for (let i = 0; i < 30; i++) expect((await api("POST", `/webhook-endpoints/${ep!.id}/test`, {})).status).toBe(200);

  // A payment made from the faucet's wallet, run to SUCCEEDED; another one left PENDING.
  const paid = (await api("POST", "/payment-sessions", { amount: "7.50", currency: "USD", referenceId: "recon-1", metadata: { orderId: "A-1", note: "two; parts" } })).body.paymentSessionId as string;
  const pending = (await api("POST", "/payment-sessions", { amount: "3.00", currency: "USD", referenceId: "to-cancel" })).body.paymentSessionId as string;
  expect((await api("POST", `/sandbox/payment-sessions/${paid}/pay`, {})).status).toBeLessThan(300);
  await eventually(async () => ((await api("GET", `/payment-sessions/${paid}`)).body.status === "SUCCEEDED" ? true : undefined), "the payment to succeed", 60_000);

  await page.goto(url("/dashboard/sign-in"));
  await page.fill("#email", EMAIL);
  await page.fill("#password", PASSWORD);
  await page.click("button[type=submit]");
  await page.waitForURL(/\/dashboard\/sandbox$/);

  // Events: every event with its attempts to each endpoint.
  await page.click("nav.side >> text=Events");
  await page.waitForURL(/\/dashboard\/sandbox\/events$/);
  // Its first event (later ones wait, per endpoint, behind the retries of the broken handler).
  await page.selectOption("#type", "payment_session.pending");
  await page.fill("#session", paid);
  await page.click("text=Apply");
  await page.waitForURL(/type=payment_session\.pending/);
  const created = page.locator("li.event");
  expect(await created.count()).toBe(1);
  const eventId = (await created.getAttribute("id"))!;
  const attempts = await eventually(async () => {
    await page.reload();
    const text = (await page.textContent("li.event table.attempts")) ?? "";
    return text.includes("HTTP 200") && text.includes("HTTP 500") ? text : undefined;
  }, "attempts to both endpoints", 30_000);
  expect(attempts).toContain(`127.0.0.1:${receiver.port}/hooks`);
  expect(attempts).toContain(`127.0.0.1:${receiver.port}/flaky`);
  expect(attempts).toContain("✗ HTTP 500");
  // (No answer excerpt here: what a loopback target answers is never kept, webhooks/sender.ts.)
  await check("17-events-filtered");
  // Redeliver to the first endpoint: back to the same filtered page, and the receiver gets it again.
  const before = received.filter((b) => b.includes(eventId)).length;
  await page.selectOption(`#to-${eventId}`, ep!.id);
  await page.click("li.event button:has-text('Redeliver')");
  await page.waitForURL(/notice=redelivered/);
  expect(page.url()).toContain("type=payment_session.pending");
  expect(await page.textContent("[role=status]")).toContain("queued for delivery again");
  await eventually(async () => (received.filter((b) => b.includes(eventId)).length > before ? true : undefined), "the redelivery", 30_000);
  await page.goto(url("/dashboard/sandbox/events"));
  expect(await page.locator("li.event").count()).toBeGreaterThan(3);
  await check("18-events");
  await page.goto(url("/dashboard/sandbox/events?status=lost"));
  expect(await page.textContent("[role=alert]")).toContain("Unknown delivery status");

  // The endpoint's page: every attempt, a page at a time.
  await page.click("nav.side >> text=Webhooks");
  await page.click(`a:has-text("127.0.0.1:${receiver.port}/hooks")`);
  expect(await page.locator("table.attempts tbody tr").count()).toBe(25);
  await check("19-endpoint-attempts");
  await page.click("text=Older →");
  await page.waitForURL(/after=wha_/);
  expect(await page.locator("table.attempts tbody tr").count()).toBeGreaterThan(5);

  // The payment's page: who paid, how deep each transfer is, which endpoint each attempt went to.
  await page.goto(url(`/dashboard/sandbox/transactions/${paid}`));
  const payer = devFaucetAccount().address;
  expect(await page.textContent(".summary")).toContain(payer);
  const payment = page.locator("section:has(#tx) tbody tr", { hasText: "Payment in" });
  expect(await payment.textContent()).toContain(payer);
  const depth = Number((await payment.locator("td.num").nth(1).textContent())!.trim().split(" ")[0]);
  expect(depth).toBeGreaterThanOrEqual(1);
  const paymentTx = (await payment.locator(".mono").last().textContent())!.trim();
  const sweepTx = (await page.locator("section:has(#tx) tbody tr", { hasText: "Sweep to settlement" }).locator(".mono").last().textContent())!.trim();
  expect(await page.textContent("section:has(#wh)")).toContain(`127.0.0.1:${receiver.port}/flaky`);
  expect(await page.locator("text=Cancel this payment…").count()).toBe(0); // not PENDING
  await check("20-transaction-reconciliation");

  // The CSV: the same facts, in documented columns.
  const csv = await (await page.request.get(url("/dashboard/sandbox/transactions.csv?q=recon-1"))).text();
  const cells = csvRecords(csv)[0]!;
  const view = (await api("GET", `/payment-sessions/${paid}`)).body;
  expect(cells).toMatchObject({
    session_id: paid,
    status: "SUCCEEDED",
    deposit_address: view.networks[0].depositAddress,
    payer_address: payer,
    payment_method: "transfer",
    payment_tx_hash: paymentTx,
    settlement_tx_hash: sweepTx,
  });
  expect(JSON.parse(cells.metadata!)).toEqual({ orderId: "A-1", note: "two; parts" });
  expect(Date.parse(cells.paid_at!)).toBeLessThanOrEqual(Date.parse(cells.settled_at!));

  // Cancel: a confirmation page, then the button; recorded in the security history.
  await page.goto(url(`/dashboard/sandbox/transactions/${pending}`));
  await page.click("text=Cancel this payment…");
  await page.waitForURL(/\/cancel$/);
  expect(await page.textContent("h1")).toBe("Cancel this payment?");
  await check("21-cancel-confirm");
  await page.click("button:has-text('Cancel this payment')");
  await page.waitForURL(/notice=canceled/);
  expect(await page.textContent(".summary .badge")).toBe("CANCELED");
  await check("22-transaction-canceled");
  await page.click("nav.side >> text=Security history");
  expect(await page.textContent("table.list")).toContain("Canceled a payment");
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(url(`/dashboard/sandbox/events?session=${pending}`));
  expect(await page.textContent("li.event")).toContain("payment_session.canceled");
  await check("23-phone-events");
  await page.setViewportSize({ width: 1280, height: 860 });
  expect(dialogs.filter((d) => !d.startsWith("Revoke the key"))).toEqual([]); // no confirm() anywhere
}, 240_000);

test("the dashboard refuses to be framed", async () => {
  const framer = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: () => new Response(`<!doctype html><iframe id="f" src="${url("/dashboard/sign-in")}"></iframe>`, { headers: { "content-type": "text/html" } }),
  });
  try {
    const p = await browser.newPage();
    await p.goto(`http://127.0.0.1:${framer.port}/`);
    await Bun.sleep(500);
    const frame = p.frames().find((f) => f !== p.mainFrame());
    // Chromium blocks the frame: it never holds our sign-in form.
    const form = frame ? await frame.$("form").catch(() => null) : null;
    expect(form).toBeNull();
    await p.close();
  } finally {
    framer.stop(true);
  }
});
