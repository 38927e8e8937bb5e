/**
 * The team in Debian's Chromium against a real service, mail through a real SMTP server (the
 * catcher) parsed by mailparser: an owner invites a Finance member; the invitation mail's link,
 * opened in another browser, sets a password; the member enrolls TOTP (codes from otpauth, as an
 * authenticator app makes them), signs out, signs in with password and code; an allowed action
 * (the CSV export) works and a forbidden one (API keys) is refused. Then a password reset from
 * its mail, and "sign out every other device". Screenshots under artifacts/dashboard/.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { simpleParser } from "mailparser";
import { Secret, TOTP } from "otpauth";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { eventually } from "../../../testing/eventually.ts";
import { merchantWithUser, TEST_PASSWORD } from "../../../testing/dashboard.ts";
import { launchChromium, screenshot } from "../../../testing/browser.ts";
import { startMailCatcher, type MailCatcher } from "../mail/catcher.ts";

let svc: TestService;
let catcher: MailCatcher;
let browser: Browser;
beforeAll(async () => {
  catcher = await startMailCatcher(mkdtempSync(join(tmpdir(), "team-browser-mail-")));
  svc = await startTestService({ SERVICE_SMTP_URL: catcher.url, SERVICE_WEBHOOK_WORKER: "false" });
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await svc?.close();
  await catcher?.stop();
});

/** The newest mail to `to` whose subject matches, parsed; its first link into this service. */
async function mailLink(to: string, subject: RegExp): Promise<string> {
  return eventually(async () => {
    let files: string[] = [];
    try {
      files = readdirSync(catcher.dir).sort().reverse();
    } catch {}
    for (const f of files) {
      const m = await simpleParser(readFileSync(join(catcher.dir, f)));
      if ((m.to as { value: { address: string }[] }).value[0]!.address === to && subject.test(m.subject ?? "")) {
        const link = /https?:\/\/\S+/.exec(m.text ?? "")?.[0];
        return link ? `${svc.url}${new URL(link).pathname}` : undefined;
      }
    }
    return undefined;
  }, `a mail to ${to}`);
}

const codeAt = (base32: string, offsetSteps = 0) => new TOTP({ secret: Secret.fromBase32(base32), digits: 6, period: 30, algorithm: "SHA1" }).generate({ timestamp: Date.now() + offsetSteps * 30_000 });

async function signInAs(page: Page, email: string, password: string) {
  await page.goto(`${svc.url}/dashboard/sign-in`);
  await page.fill("#email", email);
  await page.fill("#password", password);
  await Promise.all([page.waitForLoadState("load"), page.click("button[type=submit]")]);
}

test("invite → mail → accept → enroll TOTP → sign in with it → an allowed action works, a forbidden one is refused", async () => {
  await merchantWithUser(svc, "owner@team-browser.test");
  const ownerCtx = await browser.newContext();
  const owner = await ownerCtx.newPage();
  await signInAs(owner, "owner@team-browser.test", TEST_PASSWORD);
  await owner.goto(`${svc.url}/dashboard/sandbox/settings/members`);
  await owner.fill("#invite-email", "fiona@team-browser.test");
  await owner.selectOption("#invite-role", "finance");
  await Promise.all([owner.waitForURL(/notice=invitation-sent/), owner.click("text=Send invitation")]);
  expect(await owner.textContent("main")).toContain("fiona@team-browser.test as Finance");
  await screenshot(owner, "team-members-invited");

  // The invited person, in a browser of their own, from the mail.
  const link = await mailLink("fiona@team-browser.test", /invited you/);
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  await page.goto(link);
  expect(await page.textContent("h1")).toContain("Join");
  await screenshot(page, "team-invitation");
  await page.fill("#password", "fiona's long password");
  await page.fill("#confirm", "fiona's long password");
  await Promise.all([page.waitForURL(/\/dashboard\/sandbox$/), page.click("button[type=submit]")]);

  // Enroll TOTP from the page's key; the recovery codes are shown once.
  await page.goto(`${svc.url}/dashboard/sandbox/settings/account/two-factor`);
  const base32 = (await page.textContent("#totp-key"))!.trim();
  expect(await page.locator("svg.qr").count()).toBe(1);
  await screenshot(page, "team-two-factor-enroll");
  await page.fill("#enroll-code", codeAt(base32));
  await Promise.all([page.waitForLoadState("load"), page.click("text=Turn on")]);
  expect(await page.locator(".recovery-codes li").count()).toBe(10);
  await screenshot(page, "team-two-factor-recovery-codes");

  // Out, and in again with the password and a code.
  await Promise.all([page.waitForURL(/sign-in/), page.click("header .sign-out button")]);
  await signInAs(page, "fiona@team-browser.test", "fiona's long password");
  expect(page.url()).toContain("/dashboard/two-factor");
  await screenshot(page, "team-two-factor-code");
  await page.fill("#code", codeAt(base32, 1));
  await Promise.all([page.waitForURL(/\/dashboard\/sandbox$/), page.click("button[type=submit]")]);

  // Allowed for Finance: the CSV export. Forbidden: API keys (not in the navigation, refused by URL).
  const csv = await page.request.get(`${svc.url}/dashboard/sandbox/transactions.csv`);
  expect(csv.status()).toBe(200);
  expect(await page.locator('nav.side a[href="/dashboard/sandbox/settings/api-keys"]').count()).toBe(0);
  const keys = await page.goto(`${svc.url}/dashboard/sandbox/settings/api-keys`);
  expect(keys!.status()).toBe(403);
  expect(await page.textContent("h1")).toBe("Not allowed for your role");
  await screenshot(page, "team-finance-refused-keys");
  await ctx.close();
  await ownerCtx.close();
}, 120_000);

test("password reset from its mail, then 'sign out every other device'", async () => {
  await merchantWithUser(svc, "gus@team-browser.test");
  const other = await browser.newContext();
  const elsewhere = await other.newPage();
  await signInAs(elsewhere, "gus@team-browser.test", TEST_PASSWORD);
  expect(elsewhere.url()).toContain("/dashboard/sandbox");

  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  await page.goto(`${svc.url}/dashboard/sign-in`);
  await Promise.all([page.waitForURL(/forgot-password/), page.click("text=Forgot your password?")]);
  await page.fill("#email", "gus@team-browser.test");
  await Promise.all([page.waitForLoadState("load"), page.click("text=Send me a link")]);
  expect(await page.textContent("main")).toContain("If an account uses that email");
  const link = await mailLink("gus@team-browser.test", /Reset your Paysession password/);
  await page.goto(link);
  await page.fill("#password", "gus's brand new password");
  await page.fill("#confirm", "gus's brand new password");
  await Promise.all([page.waitForURL(/notice=password-reset/), page.click("button[type=submit]")]);
  await screenshot(page, "team-password-reset-done");
  // The other browser was signed out by the reset.
  await elsewhere.reload();
  expect(elsewhere.url()).toContain("/dashboard/sign-in");

  // Two devices again; from one, sign out the other.
  await signInAs(elsewhere, "gus@team-browser.test", "gus's brand new password");
  await signInAs(page, "gus@team-browser.test", "gus's brand new password");
  await page.goto(`${svc.url}/dashboard/sandbox/settings/account`);
  expect(await page.locator("text=(this device)").count()).toBe(1);
  await screenshot(page, "team-devices");
  page.once("dialog", (d) => d.accept());
  await Promise.all([page.waitForURL(/notice=signed-out-others/), page.click("text=Sign out every other device")]);
  await elsewhere.reload();
  expect(elsewhere.url()).toContain("/dashboard/sign-in");
  await page.reload();
  expect(page.url()).toContain("/settings/account");
  await ctx.close();
  await other.close();
}, 120_000);
