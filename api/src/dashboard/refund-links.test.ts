/**
 * Refund links in the dashboard over HTTP against a real service and Postgres: the form's
 * destination choice (the address that paid, or a link with "require my approval" and its
 * lifetime) through the API's own create; the session page's claim URL with its copy button and
 * the link's claim state; the payer's claim on the real page; the Approvals list with the claimed
 * address; Approve through the API's own approveRefund, with its CSRF token, its security-history
 * line and, in production above SERVICE_DASHBOARD_REFUND_PASSWORD_ABOVE, the password again;
 * forged posts and another merchant's refunds change nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { merchantWithUser, signIn, TEST_PASSWORD, type Browser } from "../../../testing/dashboard.ts";
import { col, decodeRows, rowShape } from "../db/rows.ts";

let svc: TestService;
let a: Awaited<ReturnType<typeof merchantWithUser>>;
let b: Awaited<ReturnType<typeof merchantWithUser>>;
let asA: Browser;
let n = 0;

const RefundRow = rowShape("test refund", { id: col.text, state: col.text, waiting_reason: col.nullable(col.text), expires_in: col.nullable(col.int), require_approval: col.nullable(col.bool) });
const Line = rowShape("test security line", { action: col.text, detail: col.json(Type.Record(Type.String(), Type.Unknown())), environment: col.nullable(col.text) });
const PAYER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

beforeAll(async () => {
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false", SERVICE_DASHBOARD_REFUND_PASSWORD_ABOVE: "2.00" });
  a = await merchantWithUser(svc, "lina@l.example");
  b = await merchantWithUser(svc, "otto@o.example");
  asA = await signIn(svc, "lina@l.example");
}, 60_000);
afterAll(() => svc.close());

const sql = () => svc.services.database.sql;

async function paidSession(key: string, amount: string, receivedMinor: bigint): Promise<string> {
  const s = await svc.call("POST", "/payment-sessions", { auth: key, body: { amount, currency: "USD", referenceId: `rl-${++n}` } });
  expect(s.status).toBe(201);
  const id = s.body.paymentSessionId as string;
  await sql()`
    insert into app.session_funds (session_id, chain_id, direction, tx_hash, log_index, amount, block_timestamp)
    select ${id}, chain_id, 'in', ${`0x${(0xdef000 + n).toString(16).padStart(64, "0")}`}, 0, ${(receivedMinor * 10n ** 4n).toString()}::numeric, now()
      from app.session_deposits where session_id = ${id} order by chain_id limit 1`;
  return id;
}
const refundsOf = async (id: string) =>
  decodeRows(
    RefundRow,
    await sql()`
      select r.id, r.state, r.waiting_reason, round(extract(epoch from l.expires_at - r.created_at))::int as expires_in, l.require_approval
        from app.refunds r left join app.refund_links l on l.refund_id = r.id
       where r.session_id = ${id} order by r.created_at`,
  );
const lines = async (merchantId: string, action: string) =>
  decodeRows(Line, await sql()`select action, detail, environment from app.security_events where merchant_id = ${merchantId} and action = ${action} order by created_at`);
const text = async (br: Browser, path: string) => {
  const res = await br.get(path);
  return { status: res.status, text: await res.text() };
};
/** The payer's claim on the refund page, as their browser posts it. */
const claim = (claimUrl: string, address: string) =>
  fetch(`${svc.url}${new URL(claimUrl).pathname}`, { method: "POST", redirect: "manual", headers: { "content-type": "application/x-www-form-urlencoded" }, body: `address=${address}` });
const claimUrlOf = async (key: string, refundId: string) => (await svc.call("GET", `/refunds/${refundId}`, { auth: key })).body.claimUrl as string;

describe("the form's destination", () => {
  test("the form offers the address that paid (default) or a refund link with approval and lifetime; the review says a link and carries the choice", async () => {
    const id = await paidSession(a.sandboxKey, "3.00", 300n);
    const form = (await text(asA, `/dashboard/sandbox/transactions/${id}/refund`)).text;
    expect(form).toMatch(/<input type="radio" id="dest-payer" name="destination" value="payer" checked>/);
    expect(form).toMatch(/<input type="radio" id="dest-link" name="destination" value="link">/);
    expect(form).toContain('<input type="checkbox" id="link-approval" name="requireApproval" value="true">');
    expect(form).toMatch(/<select id="link-lifetime" name="linkExpiresInSeconds">[\s\S]*<option value="604800" selected>7 days<\/option>/);

    const review = await text(asA, `/dashboard/sandbox/transactions/${id}/refund/review?amount=1.00&reason=other&destination=link&requireApproval=true&linkExpiresInSeconds=86400`);
    expect(review.status).toBe(200);
    expect(review.text).toContain("a refund link: the payer names the address");
    expect(review.text).toContain("You approve it after the claim");
    expect(review.text).toContain('<input type="hidden" name="destination" value="link">');
    expect(review.text).toContain('<input type="hidden" name="requireApproval" value="true">');
    expect(review.text).toContain('<input type="hidden" name="linkExpiresInSeconds" value="86400">');
    // "Change it" goes back to the form with the choice kept.
    expect(review.text).toMatch(/href="[^"]*destination=link[^"]*"/);
    expect(await refundsOf(id)).toEqual([]);
    // A lifetime the API refuses is refused here with its message, and nothing is written.
    const bad = await asA.post(`/dashboard/sandbox/transactions/${id}/refunds`, { amount: "1.00", reason: "other", destination: "link", linkExpiresInSeconds: "60" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("linkExpiresInSeconds");
    expect(await refundsOf(id)).toEqual([]);
  });

  test("a forged create of a link (no token, another origin) is 403 and creates nothing", async () => {
    const id = await paidSession(a.sandboxKey, "3.00", 300n);
    const fields = { amount: "1.00", reason: "other", destination: "link" };
    expect((await asA.post(`/dashboard/sandbox/transactions/${id}/refunds`, fields, { csrf: null })).status).toBe(403);
    expect((await asA.post(`/dashboard/sandbox/transactions/${id}/refunds`, fields, { headers: { origin: "https://evil.example" } })).status).toBe(403);
    expect(await refundsOf(id)).toEqual([]);
  });
});

describe("a link refund from creation to approval", () => {
  test("create → the page shows the claim URL with a copy button, open → the payer claims → Approvals lists it with the address → Approve sends it, recorded", async () => {
    const id = await paidSession(a.sandboxKey, "3.00", 300n);
    const res = await asA.post(`/dashboard/sandbox/transactions/${id}/refunds`, { amount: "1.50", reason: "requested_by_customer", destination: "link", requireApproval: "true", linkExpiresInSeconds: "3600" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/dashboard/sandbox/transactions/${id}?notice=refund-link-created#rf`);
    const [r] = await refundsOf(id);
    expect(r).toMatchObject({ state: "PENDING", waiting_reason: "awaiting_claim", expires_in: 3600, require_approval: true });
    const url = await claimUrlOf(a.sandboxKey, r!.id);
    expect(url).toMatch(/\/refund\/rl_[0-9A-Za-z]{40}$/);

    const page = await (await asA.follow(res)).text();
    expect(page).toContain(`<code id="claim-${r!.id}" class="claim-url">${url}</code> <button type="button" class="copy" data-copy="#claim-${r!.id}">Copy</button>`);
    expect(page).toMatch(new RegExp(`id="claim-state-${r!.id}">Not claimed yet`));
    expect(page).toContain("you approve it after the claim");

    // Not approvable before the claim: the Approvals list does not have it.
    expect((await text(asA, "/dashboard/sandbox/refund-approvals")).text).not.toContain(r!.id);
    const early = await asA.post(`/dashboard/sandbox/refunds/${r!.id}/approve`);
    expect(early.status).toBe(409);
    expect(await early.text()).toContain("its link has not been claimed yet");

    expect((await claim(url, PAYER)).status).toBe(303);
    const claimed = await text(asA, `/dashboard/sandbox/transactions/${id}`);
    expect(claimed.text).toMatch(new RegExp(`id="claim-state-${r!.id}">Claimed by <(?:a|code)[^>]*>${PAYER}</(?:a|code)>`));
    expect(claimed.text).toContain("waiting for your approval");
    expect(claimed.text).toContain(`href="/dashboard/sandbox/refund-approvals#approve-${r!.id}"`);

    const approvals = await text(asA, "/dashboard/sandbox/refund-approvals");
    expect(approvals.status).toBe(200);
    const item = new RegExp(`<tr id="approve-${r!.id}">([\\s\\S]*?)</tr>`).exec(approvals.text)![1]!;
    expect(item).toContain("1.50 USD");
    expect(item).toContain(PAYER);
    expect(item).toContain(`href="/dashboard/sandbox/transactions/${id}#rf"`);
    expect(item).toContain(`action="/dashboard/sandbox/refunds/${r!.id}/approve"`);
    expect(item).not.toContain('name="password"'); // the sandbox never asks

    // Forged approvals change nothing.
    expect((await asA.post(`/dashboard/sandbox/refunds/${r!.id}/approve`, {}, { csrf: null })).status).toBe(403);
    expect((await asA.post(`/dashboard/sandbox/refunds/${r!.id}/approve`, {}, { headers: { origin: "https://evil.example" } })).status).toBe(403);
    expect((await refundsOf(id))[0]!.waiting_reason).toBe("awaiting_approval");

    const ok = await asA.post(`/dashboard/sandbox/refunds/${r!.id}/approve`);
    expect(ok.status).toBe(303);
    expect(ok.headers.get("location")).toBe("/dashboard/sandbox/refund-approvals?notice=refund-approved");
    expect((await refundsOf(id))[0]).toMatchObject({ state: "PENDING", waiting_reason: null });
    expect((await lines(a.merchant.id, "refund_approved")).map((l) => [l.detail.refundId, l.detail.via, l.environment])).toEqual([[r!.id, "dashboard", "sandbox"]]);
    const after = await (await asA.follow(ok)).text();
    expect(after).toContain("Refund approved.");
    expect(after).not.toContain(`id="approve-${r!.id}"`);
    // Twice is refused with the API's reason.
    const again = await asA.post(`/dashboard/sandbox/refunds/${r!.id}/approve`);
    expect(again.status).toBe(409);
    expect(await again.text()).toContain("Only a claimed refund waiting for approval can be approved");
  });

  test("another merchant's refund is 404 on Approve and never listed; production's list does not show the sandbox's", async () => {
    const theirs = await paidSession(b.sandboxKey, "3.00", 300n);
    const made = await svc.call("POST", `/payment-sessions/${theirs}/refunds`, { auth: b.sandboxKey, body: { amount: "1.00", reason: "other", destination: "link", requireApproval: true } });
    expect((await claim(made.body.claimUrl, PAYER)).status).toBe(303);
    const rid = made.body.refundId as string;
    for (const env of ["sandbox", "production"]) {
      const res = await asA.post(`/dashboard/${env}/refunds/${rid}/approve`, { password: TEST_PASSWORD });
      expect({ env, status: res.status }).toEqual({ env, status: 404 });
      expect((await text(asA, `/dashboard/${env}/refund-approvals`)).text).not.toContain(rid);
    }
    expect((await refundsOf(theirs))[0]!.waiting_reason).toBe("awaiting_approval");
    // A link of A's in the sandbox is not on production's list.
    const mine = await paidSession(a.sandboxKey, "3.00", 300n);
    const own = await svc.call("POST", `/payment-sessions/${mine}/refunds`, { auth: a.sandboxKey, body: { amount: "1.00", reason: "other", destination: "link", requireApproval: true } });
    expect((await claim(own.body.claimUrl, PAYER)).status).toBe(303);
    expect((await text(asA, "/dashboard/sandbox/refund-approvals")).text).toContain(own.body.refundId);
    expect((await text(asA, "/dashboard/production/refund-approvals")).text).not.toContain(own.body.refundId);
  });

  test("production: an approval above the threshold asks for the password (missing or wrong: 403, recorded, not approved); at or below it, not", async () => {
    const id = await paidSession(a.liveKey, "5.00", 500n);
    const big = await svc.call("POST", `/payment-sessions/${id}/refunds`, { auth: a.liveKey, body: { amount: "2.01", reason: "other", destination: "link", requireApproval: true } });
    const small = await svc.call("POST", `/payment-sessions/${id}/refunds`, { auth: a.liveKey, body: { amount: "2.00", reason: "other", destination: "link", requireApproval: true } });
    for (const r of [big, small]) expect((await claim(r.body.claimUrl, PAYER)).status).toBe(303);
    const list = (await text(asA, "/dashboard/production/refund-approvals")).text;
    const row = (rid: string) => new RegExp(`<tr id="approve-${rid}">([\\s\\S]*?)</tr>`).exec(list)![1]!;
    expect(row(big.body.refundId)).toContain('name="password" type="password"');
    expect(row(small.body.refundId)).not.toContain('name="password"');
    const path = `/dashboard/production/refunds/${big.body.refundId}/approve`;
    const none = await asA.post(path);
    expect(none.status).toBe(403);
    expect(await none.text()).toContain("Wrong password: nothing was approved.");
    expect((await asA.post(path, { password: "not the password" })).status).toBe(403);
    const refused = (await lines(a.merchant.id, "refund_refused")).filter((l) => l.detail.refundId === big.body.refundId);
    expect(refused.map((l) => [l.environment, l.detail.approval])).toEqual([
      ["production", true],
      ["production", true],
    ]);
    expect((await refundsOf(id)).map((r) => r.waiting_reason)).toEqual(["awaiting_approval", "awaiting_approval"]);
    expect((await asA.post(path, { password: TEST_PASSWORD })).status).toBe(303);
    expect((await asA.post(`/dashboard/production/refunds/${small.body.refundId}/approve`)).status).toBe(303);
    expect((await refundsOf(id)).map((r) => r.waiting_reason)).toEqual([null, null]);
  });
});
