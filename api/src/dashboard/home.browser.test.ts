/**
 * The dashboard home in Debian's Chromium (playwright-core) against a real service and Postgres:
 * sessions in several states, networks and days show with the right sums and counts, the chart
 * is drawn (an SVG with its bars and legend) and the table beside it carries the same numbers,
 * the period changes what is counted, axe-core finds no serious or critical violation, the page
 * breaks no rule of its CSP; screenshots (wide and phone-sized) go to artifacts/dashboard/.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { merchantWithUser, TEST_PASSWORD } from "../../../testing/dashboard.ts";
import { seedSession } from "../../../testing/home-sessions.ts";
import { launchChromium, screenshot, seriousViolations } from "../../../testing/browser.ts";

const EMAIL = "owner@home.example";
let svc: TestService;
let browser: Browser;
let page: Page;
const cspViolations: string[] = [];
let errorId: string;

beforeAll(async () => {
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false" });
  const { merchant } = await merchantWithUser(svc, EMAIL);
  const sql = svc.services.database.sql;
  const m = merchant.id;
  // Two networks over a week, a little every day, and one older day.
  for (let d = 0; d < 7; d++) {
    await seedSession(sql, { merchantId: m, status: "SUCCEEDED", amount: `${10 + d}.25`, daysAgo: d, paidOn: 31337 });
    if (d % 2 === 0) await seedSession(sql, { merchantId: m, status: "SUCCEEDED", amount: `${5 * (d + 1)}.50`, daysAgo: d, paidOn: 31338 });
  }
  await seedSession(sql, { merchantId: m, status: "SUCCEEDED", amount: "400.00", daysAgo: 20, paidOn: 31337 });
  await seedSession(sql, { merchantId: m, status: "PENDING", amount: "9.99", daysAgo: 0 });
  await seedSession(sql, { merchantId: m, status: "CANCELED", amount: "8.00", daysAgo: 1 });
  errorId = await seedSession(sql, { merchantId: m, status: "ERROR", reason: "reorged", amount: "6.00", daysAgo: 3, paidOn: 31337 });
  await seedSession(sql, { merchantId: m, status: "FUNDED", amount: "30.00", daysAgo: 4, paidOn: 31338, fundedMinutesAgo: 240 });
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on("console", (msg) => {
    if (/Content Security Policy|Refused to/i.test(msg.text())) cspViolations.push(msg.text());
  });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await svc?.close();
});

async function check(name: string) {
  expect({ page: name, violations: await seriousViolations(page) }).toEqual({ page: name, violations: [] });
  expect({ page: name, csp: cspViolations }).toEqual({ page: name, csp: [] });
  await screenshot(page, name);
}

const cells = (selector: string) => page.$$eval(selector, (els) => els.map((e) => e.textContent!.trim()));

test("the home: sums, counts, success rate, chart and table, attention, periods", async () => {
  await page.goto(`${svc.url}/dashboard/sandbox?days=7`);
  await page.fill("#email", EMAIL);
  await page.fill("#password", TEST_PASSWORD);
  await page.click("button[type=submit]");
  await page.waitForURL(/\/dashboard\/sandbox\?days=7$/);
  expect(await page.textContent("h1")).toBe("Home");
  expect(await page.getAttribute("nav.side a[aria-current=page]", "href")).toBe("/dashboard/sandbox");

  // The table's totals: 10.25 + … + 16.25 = 92.75 on the first network; 5.50 + 15.50 + 25.50 + 35.50 + 30.00 = 112.00 on the second
  // (the FUNDED 30.00 counts: its payment stands; the ERROR 6.00 does not).
  expect(await cells("table.volume thead th.num")).toEqual(["Local test network (anvil) · TUSD", "Local test network 2 (anvil) · TUSD"]);
  expect(await cells("table.volume tfoot td")).toEqual(["92.75", "112.00"]);
  expect(await cells("table.volume tbody tr:first-child td")).toEqual(["10.25", "5.50"]);
  expect(await cells("table.volume tbody th")).toHaveLength(7);

  // Counts by status and the success rate (11 SUCCEEDED of 13 ended).
  const statuses = await page.$$eval("#status-h + .status-grid tbody tr", (rows) => rows.map((r) => [r.querySelector(".badge")!.textContent, r.querySelector("td.num")!.textContent]));
  expect(Object.fromEntries(statuses)).toEqual({ PENDING: "1", FUNDED: "1", SUCCEEDED: "11", CANCELED: "1", ERROR: "1" });
  expect(await page.textContent(".summary-figures div:nth-child(2) dd.figure")).toBe("84.6 %");

  // The chart: drawn, titled, one segment per day and network with money (7 + 4 = 11), a legend.
  const svg = page.locator("figure.chart svg");
  expect(await svg.getAttribute("role")).toBe("img");
  expect(await page.textContent("figure.chart svg title#chart-title")).toContain("Received per day over 7 days");
  expect(await page.locator("figure.chart rect.bar").count()).toBe(11);
  expect(await cells("figure.chart .legend li")).toEqual(["Local test network (anvil) · TUSD", "Local test network 2 (anvil) · TUSD"]);
  const box = (await svg.boundingBox())!;
  expect(box.width).toBeGreaterThan(600);
  // The bars are painted in the stylesheet's colours (a class each), not black: the CSS applied.
  expect(await page.$eval("figure.chart rect.bar.s1", (r) => getComputedStyle(r).fill)).toBe("rgb(217, 130, 0)");

  // Needs attention: the ERROR session and the one FUNDED for 4 hours, each linked to its page.
  expect(await page.textContent("#attention")).toContain("ERROR, created in these 7 days: 1");
  expect(await page.textContent("#attention")).toContain("FUNDED for more than 60 minutes: 1");
  await check("20-home-week");

  // 30 days takes in the older 400.00; the link keeps the environment.
  await page.click("nav.period >> text=30 days");
  await page.waitForURL(/days=30$/);
  expect(await cells("table.volume tfoot td")).toEqual(["492.75", "112.00"]);
  expect(await page.locator("figure.chart rect.bar").count()).toBe(12);
  await check("21-home-month");

  await page.click(`#attention a[href$="/transactions/${errorId}"]`);
  await page.waitForURL(new RegExp(`/transactions/${errorId}$`));
  expect(await page.textContent(".summary .badge")).toBe("ERROR");

  // Production: nothing yet, said plainly.
  await page.goto(`${svc.url}/dashboard/production`);
  expect(await page.textContent("main")).toContain("No payments received in these 30 days.");
  expect(await page.locator("figure.chart").count()).toBe(0);
  await check("22-home-production-empty");

  // A phone.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${svc.url}/dashboard/sandbox?days=7`);
  await check("23-home-phone");
}, 120_000);
