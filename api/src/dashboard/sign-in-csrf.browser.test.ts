/**
 * Sign-in CSRF in Debian's Chromium against a real service: a page on another port of the same
 * host (another origin, but the same site, and cookies know no ports) plants the sign-in form's
 * cookie and posts the form with the attacker's own email and password. Were that accepted,
 * the victim's browser would be signed into the attacker's account, where the victim might
 * then create keys or set a settlement address. The service must refuse it and leave the
 * browser signed out; the same form filled on the dashboard's own page still signs in.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { merchantWithUser, TEST_PASSWORD } from "../../../testing/dashboard.ts";
import { launchChromium, screenshot } from "../../../testing/browser.ts";

const ATTACKER = "mallory@attacker.example";
const PLANTED = "A".repeat(40);

let svc: TestService;
let browser: Browser;
let attackerSite: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false" });
  await merchantWithUser(svc, ATTACKER);
  const target = `${svc.url}/dashboard/sign-in`;
  // The attacker's page: plants the cookie for the dashboard's path, then posts the form there.
  attackerSite = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: () =>
      new Response(
        `<!doctype html><html><body><form id="f" method="post" action="${target}">
<input name="_csrf" value="${PLANTED}"><input name="email" value="${ATTACKER}"><input name="password" value="${TEST_PASSWORD}">
</form><script>document.getElementById("f").submit()</script></body></html>`,
        { headers: { "content-type": "text/html", "set-cookie": `ps_dashboard_pre=${PLANTED}; Path=/dashboard; SameSite=Strict` } },
      ),
  });
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  attackerSite?.stop(true);
  await svc?.close();
});

test("a sign-in posted by a page on another port of the host, with a planted cookie, is refused", async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const answered = page.waitForResponse((r) => r.url() === `${svc.url}/dashboard/sign-in` && r.request().method() === "POST");
  await page.goto(`http://127.0.0.1:${attackerSite.port}/`);
  const res = await answered;
  // The planted cookie did reach the service: only the origin check stands in the way.
  expect(await res.request().headerValue("cookie")).toContain(`ps_dashboard_pre=${PLANTED}`);
  expect(res.status()).toBe(403);
  expect((await context.cookies(`${svc.url}/dashboard/`)).some((c) => c.name === "ps_dashboard")).toBe(false);
  await page.goto(`${svc.url}/dashboard/sandbox/transactions`);
  expect(page.url()).toContain("/dashboard/sign-in");
  await screenshot(page, "sign-in-csrf-refused");

  // The dashboard's own form, in the same browser, signs in as before (and back to the page asked for).
  await page.fill("#email", ATTACKER);
  await page.fill("#password", TEST_PASSWORD);
  await Promise.all([page.waitForURL(/\/dashboard\/sandbox\/transactions$/), page.click("button[type=submit]")]);
  expect((await context.cookies(`${svc.url}/dashboard/`)).some((c) => c.name === "ps_dashboard")).toBe(true);
  await context.close();
}, 60_000);
