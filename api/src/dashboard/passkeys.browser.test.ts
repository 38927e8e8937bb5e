/**
 * Passkeys in Debian's Chromium with its virtual authenticator (CDP WebAuthn): a person registers
 * a passkey under Your account through the published @simplewebauthn/browser, signs out, signs in
 * with the password and then the passkey instead of a code; a sensitive action's step-up takes the
 * passkey too. WebAuthn needs a host name, so the pages are opened on localhost.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { merchantWithUser, TEST_PASSWORD } from "../../../testing/dashboard.ts";
import { launchChromium, screenshot } from "../../../testing/browser.ts";

let svc: TestService;
let browser: Browser;
let base: string;
beforeAll(async () => {
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false" });
  base = svc.url.replace("127.0.0.1", "localhost");
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await svc?.close();
});

test("a passkey registered with the virtual authenticator stands in for the code at sign-in", async () => {
  await merchantWithUser(svc, "pat@passkey.test");
  const context = await browser.newContext();
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  await page.goto(`${base}/dashboard/sign-in`);
  await page.fill("#email", "pat@passkey.test");
  await page.fill("#password", TEST_PASSWORD);
  await Promise.all([page.waitForURL(/\/dashboard\/sandbox$/), page.click("button[type=submit]")]);

  await page.goto(`${base}/dashboard/sandbox/settings/account/two-factor`);
  await page.fill("#passkey-name", "Laptop");
  await Promise.all([page.waitForURL(/notice=passkey-added/, { timeout: 20_000 }), page.click("text=Add a passkey")]);
  expect(await page.textContent(".passkeys")).toContain("Laptop");
  await screenshot(page, "passkey-added");
  const [row] = await svc.services.database.sql`select count(*)::int as n from app.passkeys p join app.dashboard_users u on u.id = p.user_id where u.email = 'pat@passkey.test'`;
  expect(row!.n).toBe(1);

  // Out, and in again: the password, then the passkey instead of a code.
  await Promise.all([page.waitForURL(/sign-in/), page.click("header .sign-out button")]);
  await page.fill("#email", "pat@passkey.test");
  await page.fill("#password", TEST_PASSWORD);
  await Promise.all([page.waitForURL(/\/dashboard\/two-factor/), page.click("button[type=submit]")]);
  expect(await page.locator("#code").count()).toBe(0); // no TOTP: the passkey is the only factor
  await screenshot(page, "passkey-sign-in");
  await Promise.all([page.waitForURL(/\/dashboard\/sandbox$/, { timeout: 20_000 }), page.click("text=Use a passkey")]);
  const lines = await svc.services.database.sql`select action, detail->>'method' as method from app.security_events where email = 'pat@passkey.test' and action like 'two_factor%' order by created_at`;
  expect(lines.map((l) => [l.action, l.method])).toEqual([
    ["two_factor_enabled", "passkey"],
    ["two_factor_verified", "passkey"],
  ]);
  await context.close();
}, 120_000);

test("a passkey assertion for a login other than the one that asked is refused", async () => {
  await merchantWithUser(svc, "quin@passkey.test");
  const res = await fetch(`${svc.url}/dashboard/two-factor/passkey`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "response=%7B%7D" });
  expect(res.status).toBe(401);
});
