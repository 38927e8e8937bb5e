/**
 * The dashboard home over HTTP against a real service and Postgres (home.browser.test.ts looks
 * at it in Chromium): the sums, counts and success rate of sessions in several states, networks
 * and days, per period; the attention lists; the kept past days following later changes; the
 * period checked; one merchant's and environment's figures only.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { merchantWithUser, signIn, type Browser } from "../../../testing/dashboard.ts";
import { seedSession } from "../../../testing/home-sessions.ts";
import { figures, periodDays } from "./home-figures.ts";
import { loadDays, today } from "./home.ts";

let svc: TestService;
let a: Awaited<ReturnType<typeof merchantWithUser>>;
let asA: Browser;
const ids: Record<string, string> = {};

beforeAll(async () => {
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false" });
  a = await merchantWithUser(svc, "home@a.example");
  const b = await merchantWithUser(svc, "other@b.example");
  asA = await signIn(svc, "home@a.example");
  const sql = svc.services.database.sql;
  const m = a.merchant.id;
  // Today.
  ids.today = await seedSession(sql, { merchantId: m, status: "SUCCEEDED", amount: "12.34", daysAgo: 0, paidOn: 31337 });
  await seedSession(sql, { merchantId: m, status: "SUCCEEDED", amount: "1.01", daysAgo: 0, paidOn: 31338 });
  await seedSession(sql, { merchantId: m, status: "PENDING", amount: "5.00", daysAgo: 0 });
  ids.fundedRecently = await seedSession(sql, { merchantId: m, status: "FUNDED", amount: "10.00", daysAgo: 0, paidOn: 31337, fundedMinutesAgo: 0 });
  // Two days ago.
  await seedSession(sql, { merchantId: m, status: "SUCCEEDED", amount: "100.00", daysAgo: 2, paidOn: 31337 });
  await seedSession(sql, { merchantId: m, status: "CANCELED", amount: "3.00", daysAgo: 2 });
  ids.error = await seedSession(sql, { merchantId: m, status: "ERROR", reason: "sweep_failed", amount: "7.00", daysAgo: 2, paidOn: 31337 });
  ids.stuck = await seedSession(sql, { merchantId: m, status: "FUNDED", amount: "20.00", daysAgo: 2, paidOn: 31338, fundedMinutesAgo: 180 });
  ids.pending = await seedSession(sql, { merchantId: m, status: "PENDING", amount: "4.00", daysAgo: 2 });
  // Ten and forty days ago.
  await seedSession(sql, { merchantId: m, status: "SUCCEEDED", amount: "50.00", daysAgo: 10, paidOn: 31337 });
  await seedSession(sql, { merchantId: m, status: "SUCCEEDED", amount: "999.00", daysAgo: 40, paidOn: 31337 });
  // Someone else's, and production's: never in A's sandbox figures.
  await seedSession(sql, { merchantId: m, environment: "production", status: "SUCCEEDED", amount: "77.00", daysAgo: 1, paidOn: 31337 });
  await seedSession(sql, { merchantId: b.merchant.id, status: "SUCCEEDED", amount: "55.55", daysAgo: 1, paidOn: 31337 });
  await seedSession(sql, { merchantId: b.merchant.id, status: "ERROR", amount: "66.66", daysAgo: 1 });
}, 60_000);
afterAll(() => svc.close());

const text = async (path: string) => {
  const res = await asA.get(path);
  return { status: res.status, body: await res.text() };
};
/** The volume table's totals, by column label. */
function totals(page: string): Record<string, string> {
  const head = [...(/<table class="list volume">[\s\S]*?<thead>([\s\S]*?)<\/thead>/.exec(page)?.[1] ?? "").matchAll(/<th scope="col" class="num">([^<]*)<\/th>/g)].map((m) => m[1]!);
  const foot = [...(/<table class="list volume">[\s\S]*?<tfoot>([\s\S]*?)<\/tfoot>/.exec(page)?.[1] ?? "").matchAll(/<td class="num">([^<]*)<\/td>/g)].map((m) => m[1]!);
  return Object.fromEntries(head.map((h, i) => [h, foot[i]!]));
}
/** The status table: status → sessions. */
function byStatus(page: string): Record<string, number> {
  return Object.fromEntries([...page.matchAll(/<span class="badge status-\w+">(\w+)<\/span><\/a><\/td><td class="num">([\d,]+)<\/td>/g)].map((m) => [m[1]!, Number(m[2]!.replace(/,/g, ""))]));
}
const rate = (page: string) => /<dt>Success rate<\/dt><dd class="figure">([^<]*)<\/dd>/.exec(page)?.[1];
const L1 = "Local test network (anvil) · TUSD";
const L2 = "Local test network 2 (anvil) · TUSD";

describe("the home page", () => {
  test("7 days: sums per network and token exactly, counts by status, success rate, attention lists", async () => {
    const { status, body } = await text("/dashboard/sandbox?days=7");
    expect(status).toBe(200);
    // Received: FUNDED and SUCCEEDED only (the ERROR session's 7.00 is not), both networks.
    expect(totals(body)).toEqual({ [L1]: "122.34", [L2]: "21.01" });
    expect(byStatus(body)).toEqual({ PENDING: 2, FUNDED: 2, SUCCEEDED: 3, CANCELED: 1, ERROR: 1 });
    expect(rate(body)).toBe("60.0 %"); // 3 SUCCEEDED of 5 ended
    expect(body).toContain("3 SUCCEEDED of 5 ended");
    // The chart: an SVG with a title and description, one bar segment per day and series with money.
    expect(body).toMatch(/<svg viewBox="0 0 720 240" role="img" aria-labelledby="chart-title chart-desc" data-bars="4">/);
    expect((body.match(/<rect class="bar /g) ?? []).length).toBe(4); // two days, two networks each
    // Attention: the ERROR one and the one FUNDED for 3 hours, linked; not the one FUNDED a moment ago.
    const attention = body.slice(body.indexOf('id="attention"'));
    expect(attention).toContain("ERROR, created in these 7 days: 1");
    expect(attention).toContain(`href="/dashboard/sandbox/transactions/${ids.error}"`);
    expect(attention).toContain("sweep_failed");
    expect(attention).toContain("FUNDED for more than 60 minutes: 1");
    expect(attention).toContain(`href="/dashboard/sandbox/transactions/${ids.stuck}"`);
    expect(attention).not.toContain(ids.fundedRecently);
    // Nobody else's money, nor production's.
    expect(body).not.toContain("55.55");
    expect(body).not.toContain("66.66");
    expect(body).not.toContain("77.00");
  });

  test("30 and 90 days take in the older days; the default is 30", async () => {
    const d30 = await text("/dashboard/sandbox?days=30");
    expect(totals(d30.body)).toEqual({ [L1]: "172.34", [L2]: "21.01" });
    expect(totals((await text("/dashboard/sandbox")).body)).toEqual(totals(d30.body));
    const d90 = await text("/dashboard/sandbox?days=90");
    expect(totals(d90.body)).toEqual({ [L1]: "1171.34", [L2]: "21.01" });
    expect(byStatus(d90.body).SUCCEEDED).toBe(5);
    expect(rate(d90.body)).toBe("71.4 %"); // 5 of 7
  });

  test("a kept past day follows a later change to one of its sessions", async () => {
    const before = await text("/dashboard/sandbox?days=7");
    expect(byStatus(before.body)).toMatchObject({ PENDING: 2, CANCELED: 1 });
    const sql = svc.services.database.sql;
    const [kept] = await sql`
      select count(*)::int as n from app.dashboard_days
       where merchant_id = ${a.merchant.id} and environment = 'sandbox' and day >= (now() at time zone 'UTC')::date - 6`;
    expect(kept!.n).toBe(6); // the week's six past days are kept; today is counted on each view
    // The merchant cancels the two-day-old PENDING session through the API.
    const canceled = await svc.call("POST", `/payment-sessions/${ids.pending}/cancel`, { auth: a.sandboxKey, body: {} });
    expect(canceled.status).toBe(200);
    const after = await text("/dashboard/sandbox?days=7");
    expect(byStatus(after.body)).toMatchObject({ PENDING: 1, CANCELED: 2 });
    expect(rate(after.body)).toBe("50.0 %");
  });

  test("the kept days give what counting every day afresh gives", async () => {
    const sql = svc.services.database.sql;
    const owner = { merchantId: a.merchant.id, environment: "sandbox" as const };
    const days = periodDays(await today(sql), 90);
    const kept = figures(days, await loadDays(sql, owner, days, days.at(-1)!));
    await sql`delete from app.dashboard_day_checks where merchant_id = ${owner.merchantId}`;
    const afresh = figures(days, await loadDays(sql, owner, days, days.at(-1)!));
    expect(kept).toEqual(afresh);
    expect(afresh.sessions).toBe(11);
  });

  test("a period other than 7, 30 or 90 days is a 400 that says so and shows 30 days", async () => {
    for (const bad of ["8", "abc", "<script>alert(1)</script>", "-7"]) {
      const res = await text(`/dashboard/sandbox?days=${encodeURIComponent(bad)}`);
      expect(res.status).toBe(400);
      expect(res.body).toContain("The period is 7, 30, 90 days; showing 30.");
      expect(res.body).not.toContain("<script>alert(1)");
      expect(totals(res.body)).toEqual({ [L1]: "172.34", [L2]: "21.01" });
    }
  });

  test("production shows its own figures; the nav and the environment switch lead to the home", async () => {
    const { body } = await text("/dashboard/production?days=7");
    expect(totals(body)).toEqual({ [L1]: "77.00" });
    expect(body).toContain('<a href="/dashboard/production" aria-current="page">Home</a>');
    expect(body).toContain('<a href="/dashboard/sandbox" class="env sandbox"');
    expect((await asA.get("/dashboard/staging")).status).toBe(404);
  });

  test("signed out, the home redirects to the sign-in (and back)", async () => {
    const res = await fetch(`${svc.url}/dashboard/sandbox?days=7`, { redirect: "manual" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/dashboard/sign-in?next=${encodeURIComponent("/dashboard/sandbox?days=7")}`);
  });
});
