/**
 * Automatic returns in the dashboard over HTTP against a real service and Postgres: the Refunds
 * settings page (on/off and the delay, saved by the API's own saveAutoReturnSetting with the
 * person's security-history line; a delay the API refuses is refused with its message; each
 * environment its own), and a session's automatic returns on its page with "Keep the money" (the
 * API's keep). Forged posts and another merchant's sessions change nothing. The timers are written
 * as the session step writes them (app.auto_returns).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { merchantWithUser, signIn, type Browser } from "../../../testing/dashboard.ts";
import { col, decodeRows, rowShape } from "../db/rows.ts";

let svc: TestService;
let a: Awaited<ReturnType<typeof merchantWithUser>>;
let b: Awaited<ReturnType<typeof merchantWithUser>>;
let asA: Browser;
let n = 0;

const Line = rowShape("test security line", { detail: col.json(Type.Record(Type.String(), Type.Unknown())), environment: col.nullable(col.text) });
const State = rowShape("test automatic return", { id: col.text, state: col.text });

beforeAll(async () => {
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false" });
  a = await merchantWithUser(svc, "ada@a.example");
  b = await merchantWithUser(svc, "bob@b.example");
  asA = await signIn(svc, "ada@a.example");
}, 60_000);
afterAll(() => svc.close());

const sql = () => svc.services.database.sql;
const lines = async (merchantId: string, action: string) =>
  decodeRows(Line, await sql()`select detail, environment from app.security_events where merchant_id = ${merchantId} and action = ${action} order by created_at`);
const settings = async (key: string) => (await svc.call("GET", "/refund-settings", { auth: key })).body;
const text = async (path: string) => {
  const res = await asA.get(path);
  return { status: res.status, text: await res.text() };
};

/** A session of `key`'s with automatic returns as the session step leaves them: one waiting, one returned, one skipped. */
async function sessionWithReturns(key: string, merchantId: string): Promise<{ id: string; refundId: string }> {
  const s = await svc.call("POST", "/payment-sessions", { auth: key, body: { amount: "3.00", currency: "USD", referenceId: `ar-${++n}` } });
  const id = s.body.paymentSessionId as string;
  const chainId = s.body.networks[0].chainId as number;
  const refundId = `rf_auto${String(n).padStart(17, "0")}`;
  await sql()`
    insert into app.auto_returns (id, session_id, merchant_id, environment, chain_id, reason, state, due_at, refund_id, outcome, created_at, decided_at) values
      (${`ar_w${n}`}, ${id}, ${merchantId}, 'sandbox', ${chainId}, 'overpayment', 'scheduled', now() + interval '3 hours', null, null, now() - interval '2 minutes', null),
      (${`ar_r${n}`}, ${id}, ${merchantId}, 'sandbox', ${chainId}, 'late_payment', 'refunded', now() - interval '1 hour', ${refundId}, null, now() - interval '1 minute', now()),
      (${`ar_s${n}`}, ${id}, ${merchantId}, 'sandbox', ${chainId}, 'underpaid_expired', 'skipped', now() - interval '1 hour', null, 'disabled', now(), now())`;
  return { id, refundId };
}
const statesOf = async (id: string) => decodeRows(State, await sql()`select id, state from app.auto_returns where session_id = ${id} order by created_at`).map((r) => r.state);

describe("the Refunds settings page", () => {
  test("shows the API's setting (off, 24 hours); saving turns it on with the delay, recorded; the API sees it; production is its own", async () => {
    const page = await text("/dashboard/sandbox/settings/refunds");
    expect(page.status).toBe(200);
    expect(page.text).toContain('<input type="checkbox" id="auto-on" name="automaticReturns" value="true">');
    expect(page.text).toContain('id="auto-delay" name="delay" value="24"');
    expect(page.text).toMatch(/<option value="hours" selected>hours<\/option>/);
    expect(page.text).toContain("Automatic returns are off");

    const res = await asA.post("/dashboard/sandbox/settings/refunds", { automaticReturns: "true", delay: "90", unit: "minutes" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/dashboard/sandbox/settings/refunds?notice=refund-settings-saved");
    expect(await settings(a.sandboxKey)).toEqual({ automaticReturns: true, delaySeconds: 5400 });
    expect(await settings(a.liveKey)).toEqual({ automaticReturns: false, delaySeconds: 86400 });
    expect((await lines(a.merchant.id, "refund_settings_changed")).map((l) => [l.environment, l.detail.automaticReturns, l.detail.delaySeconds, l.detail.via])).toEqual([["sandbox", true, 5400, "dashboard"]]);
    const after = await (await asA.follow(res)).text();
    expect(after).toContain("Refund settings saved.");
    expect(after).toContain('<input type="checkbox" id="auto-on" name="automaticReturns" value="true" checked>');
    expect(after).toContain('id="auto-delay" name="delay" value="90"');
    expect(after).toContain("Automatic returns are on");
    // Unchecked: off, the delay kept as sent.
    expect((await asA.post("/dashboard/sandbox/settings/refunds", { delay: "2", unit: "days" })).status).toBe(303);
    expect(await settings(a.sandboxKey)).toEqual({ automaticReturns: false, delaySeconds: 172800 });
    // The security history names the change.
    expect(await (await asA.get("/dashboard/sandbox/settings/security")).text()).toContain("Changed the refund settings");
  });

  test("a delay the API refuses (none, zero, over 30 days, not a number) is refused with its message and changes nothing; forged posts are 403", async () => {
    await svc.call("PUT", "/refund-settings", { auth: a.liveKey, body: { automaticReturns: true, delaySeconds: 600 } });
    const before = (await lines(a.merchant.id, "refund_settings_changed")).length;
    for (const [delay, unit] of [["0", "hours"], ["31", "days"], ["lots", "hours"], ["", "hours"], ["1", "weeks"]] as const) {
      const res = await asA.post("/dashboard/production/settings/refunds", { automaticReturns: "true", delay, unit });
      expect({ delay, unit, status: res.status }).toEqual({ delay, unit, status: 400 });
      expect(await res.text()).toContain("delay");
    }
    expect((await asA.post("/dashboard/production/settings/refunds", { delay: "1", unit: "hours" }, { csrf: null })).status).toBe(403);
    expect((await asA.post("/dashboard/production/settings/refunds", { delay: "1", unit: "hours" }, { headers: { origin: "https://evil.example" } })).status).toBe(403);
    expect(await settings(a.liveKey)).toEqual({ automaticReturns: true, delaySeconds: 600 });
    expect((await lines(a.merchant.id, "refund_settings_changed")).length).toBe(before);
    // 600 s is shown in minutes.
    expect((await text("/dashboard/production/settings/refunds")).text).toContain('id="auto-delay" name="delay" value="10"');
  });
});

describe("a session's automatic returns", () => {
  test("listed on its page with their states; Keep the money: waiting ones become kept (recorded), decided ones stay; again changes nothing", async () => {
    const { id, refundId } = await sessionWithReturns(a.sandboxKey, a.merchant.id);
    const page = (await text(`/dashboard/sandbox/transactions/${id}`)).text;
    const section = /<section aria-labelledby="ar">([\s\S]*?)<\/section>/.exec(page)![1]!;
    expect(section).toContain("Overpayment");
    expect(section).toMatch(/Scheduled: goes back by itself <time/);
    expect(section).toContain(`Returned by refund <a href="#${refundId}"><code>${refundId}</code></a>`);
    expect(section).toContain("Skipped: automatic returns were off when it fell due");
    expect(section).toContain(`action="/dashboard/sandbox/transactions/${id}/automatic-returns/keep"`);
    expect(section).toContain("Keep the money");

    const path = `/dashboard/sandbox/transactions/${id}/automatic-returns/keep`;
    expect((await asA.post(path, {}, { csrf: null })).status).toBe(403);
    expect((await asA.post(path, {}, { headers: { origin: "https://evil.example" } })).status).toBe(403);
    expect(await statesOf(id)).toEqual(["scheduled", "refunded", "skipped"]);

    const res = await asA.post(path);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/dashboard/sandbox/transactions/${id}?notice=automatic-returns-kept#ar`);
    expect(await statesOf(id)).toEqual(["kept", "refunded", "skipped"]);
    expect((await lines(a.merchant.id, "automatic_returns_kept")).map((l) => [l.detail.paymentSessionId, l.detail.kept, l.detail.via])).toEqual([[id, 1, "dashboard"]]);
    const after = await (await asA.follow(res)).text();
    expect(after).toContain("Kept: this payment&#39;s waiting automatic returns will not send anything back.");
    expect(after).toContain("Kept: you chose to keep the money");
    expect(after).not.toContain(path);
    // The API sees the same.
    expect((await svc.call("GET", `/payment-sessions/${id}/automatic-returns`, { auth: a.sandboxKey })).body.data.map((r: { status: string }) => r.status)).toEqual(["kept", "refunded", "skipped"]);
    expect((await asA.post(path)).status).toBe(303);
    expect(await statesOf(id)).toEqual(["kept", "refunded", "skipped"]);
  });

  test("another merchant's session: Keep is 404 and nothing of theirs changes; a session without returns shows no section", async () => {
    const theirs = await sessionWithReturns(b.sandboxKey, b.merchant.id);
    for (const env of ["sandbox", "production"]) {
      const res = await asA.post(`/dashboard/${env}/transactions/${theirs.id}/automatic-returns/keep`);
      expect({ env, status: res.status }).toEqual({ env, status: 404 });
    }
    expect(await statesOf(theirs.id)).toEqual(["scheduled", "refunded", "skipped"]);
    const plain = (await svc.call("POST", "/payment-sessions", { auth: a.sandboxKey, body: { amount: "1.00", currency: "USD" } })).body.paymentSessionId as string;
    expect((await text(`/dashboard/sandbox/transactions/${plain}`)).text).not.toContain('aria-labelledby="ar"');
  });
});
