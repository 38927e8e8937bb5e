/**
 * Refunds in the dashboard over HTTP against a real service and Postgres (the browser suite,
 * refunds.browser.test.ts, sends one on anvil through the sweeper): the form and its default,
 * the review that writes nothing, the create through the API's own store function with its
 * security-history line, errors shown in the form with nothing changed, forged posts, another
 * merchant's sessions and refunds, the production password above
 * SERVICE_DASHBOARD_REFUND_PASSWORD_ABOVE, the session's refunds and timeline, the list's badges,
 * cancel, and the refund balance page. The money received is the session's ledger
 * (app.session_funds), written as the actor writes it for a confirmed payment.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { merchantWithUser, signIn, TEST_PASSWORD, type Browser } from "../../../testing/dashboard.ts";
import { col, decodeRows, rowShape } from "../db/rows.ts";
import { balanceNeeds, refundBadge } from "./refunds.ts";
import { defaultAmount, refundFormBody } from "./pages/refund.ts";
import type { MerchantSessionView } from "../sessions/views.ts";
import { refundItems } from "./timeline.ts";

let svc: TestService;
let a: Awaited<ReturnType<typeof merchantWithUser>>;
let b: Awaited<ReturnType<typeof merchantWithUser>>;
let asA: Browser;
let n = 0;

const RefundRow = rowShape("test refund", { id: col.text, state: col.text, amount: col.text, session_id: col.text });
const Line = rowShape("test security line", { action: col.text, detail: col.json(Type.Record(Type.String(), Type.Unknown())), environment: col.nullable(col.text) });

beforeAll(async () => {
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false", SERVICE_DASHBOARD_REFUND_PASSWORD_ABOVE: "2.00" });
  a = await merchantWithUser(svc, "rita@r.example");
  b = await merchantWithUser(svc, "bert@b.example");
  asA = await signIn(svc, "rita@r.example");
}, 60_000);
afterAll(() => svc.close());

const sql = () => svc.services.database.sql;

/** A session of `key`'s with `minor` cents received on its first network (a ledger row, as the actor writes a confirmed payment). */
async function paidSession(key: string, amount: string, receivedMinor: bigint): Promise<string> {
  const s = await svc.call("POST", "/payment-sessions", { auth: key, body: { amount, currency: "USD", referenceId: `rf-${++n}` } });
  expect(s.status).toBe(201);
  const id = s.body.paymentSessionId as string;
  await sql()`
    insert into app.session_funds (session_id, chain_id, direction, tx_hash, log_index, amount, block_timestamp)
    select ${id}, chain_id, 'in', ${`0x${(0xabc000 + n).toString(16).padStart(64, "0")}`}, 0, ${(receivedMinor * 10n ** 4n).toString()}::numeric, now()
      from app.session_deposits where session_id = ${id} order by chain_id limit 1`;
  return id;
}
const refundsOf = async (id: string) => decodeRows(RefundRow, await sql()`select id, state, amount::text as amount, session_id from app.refunds where session_id = ${id} order by created_at`);
const lines = async (merchantId: string, action: string) =>
  decodeRows(Line, await sql()`select action, detail, environment from app.security_events where merchant_id = ${merchantId} and action = ${action} order by created_at`);
const page = async (br: Browser, path: string) => {
  const res = await br.get(path);
  return { status: res.status, text: await res.text() };
};

describe("the refund form and its review", () => {
  test("the form offers the refundable rest and the API's reasons; the review shows amount, token and network and writes nothing", async () => {
    const id = await paidSession(a.sandboxKey, "3.00", 300n);
    const detail = await page(asA, `/dashboard/sandbox/transactions/${id}`);
    expect(detail.text).toContain(`href="/dashboard/sandbox/transactions/${id}/refund"`);
    const form = await page(asA, `/dashboard/sandbox/transactions/${id}/refund`);
    expect(form.status).toBe(200);
    expect(form.text).toContain(`id="refund-amount" name="amount" value="3.00"`);
    for (const r of ["requested_by_customer", "duplicate", "overpayment", "late_payment", "underpaid_expired", "other"]) expect(form.text).toContain(`value="${r}"`);
    expect(form.text).toContain(`action="/dashboard/sandbox/transactions/${id}/refund/review"`);

    const review = await page(asA, `/dashboard/sandbox/transactions/${id}/refund/review?amount=1.25&reason=duplicate`);
    expect(review.status).toBe(200);
    expect(review.text).toMatch(/id="review-amount"><strong>1\.25 USD<\/strong>/);
    expect(review.text).toContain("TUSD");
    expect(review.text).toMatch(/id="review-network">[^<]+<span class="muted">\(chain 31337\)/);
    // Without an index of who paid, there is no destination yet: the review says the refund will wait.
    expect(review.text).toContain("the refund will wait for one");
    expect(review.text).toContain(`action="/dashboard/sandbox/transactions/${id}/refunds"`);
    expect(review.text).not.toContain('name="password"'); // the sandbox never asks
    expect(await refundsOf(id)).toEqual([]);
  });

  test("errors are shown in the form with the API's message and status, and nothing is written", async () => {
    const id = await paidSession(a.sandboxKey, "3.00", 300n);
    const over = await page(asA, `/dashboard/sandbox/transactions/${id}/refund/review?amount=3.01&reason=duplicate`);
    expect(over.status).toBe(409);
    expect(over.text).toContain("The amount is above what is left to refund of this payment session (3.00 left).");
    expect(over.text).toContain(`value="3.01"`); // what was typed stays in the form
    const bad = await page(asA, `/dashboard/sandbox/transactions/${id}/refund/review?amount=1.5&reason=duplicate`);
    expect(bad.status).toBe(400);
    expect(bad.text).toContain("exactly two decimal places");
    const noReason = await page(asA, `/dashboard/sandbox/transactions/${id}/refund/review?amount=1.00&reason=because`);
    expect(noReason.status).toBe(400);
    expect(noReason.text).toContain("Choose the reason for the refund.");
    // A session that received nothing: not refundable, and no form to fill.
    const unpaid = (await svc.call("POST", "/payment-sessions", { auth: a.sandboxKey, body: { amount: "2.00", currency: "USD" } })).body.paymentSessionId as string;
    expect(await (await asA.get(`/dashboard/sandbox/transactions/${unpaid}`)).text()).not.toContain("/refund\"");
    const none = await page(asA, `/dashboard/sandbox/transactions/${unpaid}/refund/review?reason=other`);
    expect(none.status).toBe(409);
    expect(none.text).toContain("The payment session has received no money that can be refunded.");
    expect(none.text).not.toContain("Review the refund");
    // The same refusals on the create itself.
    const posted = await asA.post(`/dashboard/sandbox/transactions/${id}/refunds`, { amount: "9.00", reason: "duplicate" });
    expect(posted.status).toBe(409);
    expect(await posted.text()).toContain("above what is left to refund");
    // A malformed network is refused, not dropped for the default one (chainId=0 once made a refund).
    for (const chainId of ["0", "-1", "x", "99999"]) {
      const wrongNet = await asA.post(`/dashboard/sandbox/transactions/${id}/refunds`, { amount: "0.50", reason: "duplicate", chainId });
      expect(wrongNet.status).toBe(400);
      expect(await wrongNet.text()).toContain("chainId is not a network this payment session could be paid on.");
    }
    expect(await refundsOf(id)).toEqual([]);
    expect(await refundsOf(unpaid)).toEqual([]);
  });
});

describe("creating and canceling", () => {
  test("a forged post (no CSRF token, a wrong one, another origin) is 403 and creates nothing", async () => {
    const id = await paidSession(a.sandboxKey, "3.00", 300n);
    const path = `/dashboard/sandbox/transactions/${id}/refunds`;
    expect((await asA.post(path, { amount: "1.00", reason: "duplicate" }, { csrf: null })).status).toBe(403);
    expect((await asA.post(path, { amount: "1.00", reason: "duplicate" }, { csrf: "x".repeat(40) })).status).toBe(403);
    expect((await asA.post(path, { amount: "1.00", reason: "duplicate" }, { headers: { origin: "https://evil.example" } })).status).toBe(403);
    expect(await refundsOf(id)).toEqual([]);
  });

  test("the create is the API's: the refund, its total and its security-history line; the page lists it with Cancel, on the timeline; the list's badge", async () => {
    const id = await paidSession(a.sandboxKey, "3.00", 300n);
    const res = await asA.post(`/dashboard/sandbox/transactions/${id}/refunds`, { amount: "1.25", reason: "requested_by_customer" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/dashboard/sandbox/transactions/${id}?notice=refund-created#rf`);
    const [r] = await refundsOf(id);
    expect(r).toMatchObject({ state: "PENDING", amount: "1250000" });
    // The API sees the very refund, and the session's amountRefunded.
    const api = await svc.call("GET", `/payment-sessions/${id}/refunds`, { auth: a.sandboxKey });
    expect(api.body.data.map((x: { refundId: string }) => x.refundId)).toEqual([r!.id]);
    expect(api.body.data[0]).toMatchObject({ amount: "1.25", reason: "requested_by_customer", status: "PENDING", waitingReason: "destination_unknown" });
    expect((await svc.call("GET", `/payment-sessions/${id}`, { auth: a.sandboxKey })).body.amountRefunded).toBe("1.25");
    const created = (await lines(a.merchant.id, "refund_created")).find((l) => l.detail.refundId === r!.id);
    expect(created).toMatchObject({ environment: "sandbox", detail: { paymentSessionId: id, amount: "1.25", via: "dashboard" } });

    const detail = await (await asA.follow(res)).text();
    expect(detail).toContain("Refund created.");
    const row = /<tr id="(rf_[A-Za-z0-9]+)">([\s\S]*?)<\/tr>/.exec(detail)!;
    expect(row[1]).toBe(r!.id);
    expect(row[2]).toContain("PENDING");
    expect(row[2]).toContain("1.25 USD");
    expect(row[2]).toContain("destination_unknown");
    expect(row[2]).toContain(`action="/dashboard/sandbox/transactions/${id}/refunds/${r!.id}/cancel"`);
    expect(detail).toMatch(/<strong>Refund asked for<\/strong><p>A refund of 1\.25 USD/);
    expect(detail).toContain(`<strong id="amount-refunded">1.25 USD</strong>`);

    const list = await (await asA.get(`/dashboard/sandbox/transactions?q=${encodeURIComponent((await svc.call("GET", `/payment-sessions/${id}`, { auth: a.sandboxKey })).body.referenceId)}`)).text();
    expect(list).toContain(`<span class="badge status-partly_refunded">Partly refunded</span> <span class="small muted">1.25 refunded</span>`);
    // The rest (the form's default, empty: everything): Refunded.
    expect((await asA.post(`/dashboard/sandbox/transactions/${id}/refunds`, { amount: "", reason: "other" })).status).toBe(303);
    const full = await (await asA.get(`/dashboard/sandbox/transactions/rows?q=${encodeURIComponent((await svc.call("GET", `/payment-sessions/${id}`, { auth: a.sandboxKey })).body.referenceId)}`)).text();
    expect(full).toContain(`<span class="badge status-refunded">Refunded</span> <span class="small muted">3.00 refunded</span>`);
    // Nothing left: the page offers no Refund action any more, and a further one is refused.
    expect(await (await asA.get(`/dashboard/sandbox/transactions/${id}`)).text()).not.toContain('id="refund-link"');
    expect((await asA.post(`/dashboard/sandbox/transactions/${id}/refunds`, { amount: "0.01", reason: "other" })).status).toBe(409);
    expect((await refundsOf(id)).length).toBe(2);
  });

  test("Cancel: not without the token; then CANCELED, its amount refundable again, recorded; again is refused with the reason", async () => {
    const id = await paidSession(a.sandboxKey, "3.00", 300n);
    expect((await asA.post(`/dashboard/sandbox/transactions/${id}/refunds`, { amount: "2.00", reason: "duplicate" })).status).toBe(303);
    const [r] = await refundsOf(id);
    const path = `/dashboard/sandbox/transactions/${id}/refunds/${r!.id}/cancel`;
    expect((await asA.post(path, {}, { csrf: null })).status).toBe(403);
    expect((await refundsOf(id))[0]!.state).toBe("PENDING");
    const res = await asA.post(path);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/dashboard/sandbox/transactions/${id}?notice=refund-canceled#rf`);
    expect((await refundsOf(id))[0]!.state).toBe("CANCELED");
    expect((await lines(a.merchant.id, "refund_canceled")).map((l) => l.detail.refundId)).toContain(r!.id);
    const after = await (await asA.follow(res)).text();
    expect(after).toContain("The refund is canceled");
    expect(after).toMatch(/<strong>Refund canceled<\/strong>/);
    expect(after).not.toContain(path);
    expect(await (await asA.get(`/dashboard/sandbox/transactions/${id}/refund`)).text()).toContain(`value="3.00"`);
    const again = await asA.post(path);
    expect(again.status).toBe(409);
    expect(await again.text()).toContain("Only a PENDING refund can be canceled: this one is CANCELED.");
  });
});

describe("another merchant's sessions and refunds", () => {
  test("are 404 through every refund page and action, and nothing of theirs changes", async () => {
    const theirs = await paidSession(b.sandboxKey, "3.00", 300n);
    const theirRefund = (await svc.call("POST", `/payment-sessions/${theirs}/refunds`, { auth: b.sandboxKey, body: { amount: "1.00", reason: "other" } })).body.refundId as string;
    const mine = await paidSession(a.sandboxKey, "3.00", 300n);
    for (const path of [`/dashboard/sandbox/transactions/${theirs}/refund`, `/dashboard/sandbox/transactions/${theirs}/refund/review?amount=1.00&reason=other`, `/dashboard/production/transactions/${mine}/refund`]) {
      const res = await page(asA, path);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
      expect(res.text).not.toContain(theirRefund);
    }
    for (const path of [`/dashboard/sandbox/transactions/${theirs}/refunds`, `/dashboard/sandbox/transactions/${theirs}/refunds/${theirRefund}/cancel`, `/dashboard/sandbox/transactions/${mine}/refunds/${theirRefund}/cancel`]) {
      const res = await asA.post(path, { amount: "1.00", reason: "other" });
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
    }
    expect((await refundsOf(theirs)).map((r) => [r.id, r.state])).toEqual([[theirRefund, "PENDING"]]);
    expect(await refundsOf(mine)).toEqual([]);
  });
});

describe("production: the password again above SERVICE_DASHBOARD_REFUND_PASSWORD_ABOVE", () => {
  test("above it: asked on the review, refused without it or with a wrong one (recorded, nothing refunded), accepted with it; at or below it and in the sandbox: not asked", async () => {
    const id = await paidSession(a.liveKey, "5.00", 500n);
    const review = await (await asA.get(`/dashboard/production/transactions/${id}/refund/review?amount=2.01&reason=duplicate`)).text();
    expect(review).toContain('name="password" type="password"');
    expect(review).toContain("a production refund above 2.00 USD");
    const path = `/dashboard/production/transactions/${id}/refunds`;
    const none = await asA.post(path, { amount: "2.01", reason: "duplicate" });
    expect(none.status).toBe(403);
    expect(await none.text()).toContain("Wrong password: nothing was refunded.");
    expect((await asA.post(path, { amount: "2.01", reason: "duplicate", password: "not the password" })).status).toBe(403);
    expect(await refundsOf(id)).toEqual([]);
    expect((await lines(a.merchant.id, "refund_refused")).filter((l) => l.environment === "production").length).toBe(2);
    // The whole rest (no amount typed) is above it too.
    expect((await asA.post(path, { amount: "", reason: "duplicate" })).status).toBe(403);
    expect((await asA.post(path, { amount: "2.01", reason: "duplicate", password: TEST_PASSWORD })).status).toBe(303);
    expect((await refundsOf(id)).map((r) => r.amount)).toEqual(["2010000"]);
    // At the threshold: no password.
    expect(await (await asA.get(`/dashboard/production/transactions/${id}/refund/review?amount=2.00&reason=duplicate`)).text()).not.toContain('name="password"');
    expect((await asA.post(path, { amount: "2.00", reason: "duplicate" })).status).toBe(303);
    // The sandbox never asks, whatever the amount.
    const sandbox = await paidSession(a.sandboxKey, "5.00", 500n);
    expect((await asA.post(`/dashboard/sandbox/transactions/${sandbox}/refunds`, { amount: "4.00", reason: "duplicate" })).status).toBe(303);
  });
});

describe("the refund balance page", () => {
  test("per network of the environment: the funding address the API shows, copyable; refunds waiting for money; the faucet only in the sandbox and only with the token", async () => {
    const api = (await svc.call("GET", "/refund-balances", { auth: a.sandboxKey })).body.data as { chainId: number; address: string }[];
    const res = await page(asA, "/dashboard/sandbox/refund-balance");
    expect(res.status).toBe(200);
    for (const bal of api) {
      expect(res.text).toContain(`<code id="vault-${bal.chainId}">${bal.address}</code> <button type="button" class="copy" data-copy="#vault-${bal.chainId}">Copy</button>`);
    }
    // The test service's networks do not answer: the balance says so, never a 500.
    expect(res.text).toContain("not read (the network did not answer)");
    expect(res.text).toContain("Fund from faucet");
    const prod = await page(asA, "/dashboard/production/refund-balance");
    expect(prod.status).toBe(200);
    expect(prod.text).not.toContain("Fund from faucet");
    expect(prod.text).not.toContain(api[0]!.address); // production's balance is another address
    // A refund the sweeper held back for want of money is listed, linked to its payment.
    const id = await paidSession(a.sandboxKey, "3.00", 300n);
    const r = (await svc.call("POST", `/payment-sessions/${id}/refunds`, { auth: a.sandboxKey, body: { amount: "1.00", reason: "other" } })).body.refundId as string;
    await sql()`update app.refunds set waiting_reason = 'insufficient_refund_balance' where id = ${r}`;
    expect((await page(asA, "/dashboard/sandbox/refund-balance")).text).toMatch(new RegExp(`<code>${r}</code></td><td><a class="mono" href="/dashboard/sandbox/transactions/${id}#rf">`));
    expect((await page(asA, "/dashboard/production/refund-balance")).text).not.toContain(r);
    // Funding: a forged post is refused; production has no faucet; an unreachable network is a 503 shown on the page.
    expect((await asA.post("/dashboard/sandbox/refund-balance/fund", { amount: "10.00" }, { csrf: null })).status).toBe(403);
    // Production has no faucet: no role may use it there (dashboard/permissions.ts).
    expect((await asA.post("/dashboard/production/refund-balance/fund", { amount: "10.00" })).status).toBe(403);
    const down = await asA.post("/dashboard/sandbox/refund-balance/fund", { amount: "10.00", chainId: "31337" });
    expect(down.status).toBe(503);
    expect(await down.text()).toContain("did not answer");
    const bad = await asA.post("/dashboard/sandbox/refund-balance/fund", { amount: "ten", chainId: "31337" });
    expect(bad.status).toBe(400);
  });
});

describe("pure parts", () => {
  test("the list's badge", () => {
    expect(refundBadge(0n, 100n)).toBeUndefined();
    expect(refundBadge(1n, 100n)).toBe("partly_refunded");
    expect(refundBadge(100n, 100n)).toBe("refunded");
  });

  test("the form's default: the rest in cents, or empty (everything) when it has more places or spans networks", () => {
    const rest = (chainId: number, r: bigint) => ({ chainId, token: "0xt", symbol: "TUSD", decimals: 6, unitDecimals: 6, received: r, held: 0n, rest: r });
    expect(defaultAmount([rest(1, 3_000_000n)])).toBe("3.00");
    expect(defaultAmount([rest(1, 3_000_001n)])).toBe("");
    expect(defaultAmount([rest(1, 1_000_000n), rest(2, 1_000_000n)])).toBe("");
    expect(defaultAmount([])).toBe("");
  });

  test("money left on two networks: the form asks which (the create would otherwise refuse, naming chainId)", () => {
    const rest = (chainId: number, r: bigint) => ({ chainId, token: "0xt", symbol: "TUSD", decimals: 6, unitDecimals: 6, received: r, held: 0n, rest: r });
    const v = { paymentSessionId: "ps_x", amount: "2.00", currency: "USD", status: "SUCCEEDED", referenceId: null } as unknown as MerchantSessionView;
    const two = refundFormBody("sandbox", v, [rest(31337, 1_000_000n), rest(31338, 1_000_000n)], { amount: "", reason: "", chainId: "31338" }).toString();
    expect(two).toContain('<select id="refund-chain" name="chainId" required>');
    expect(two).toMatch(/<option value="31338" selected>/);
    const one = refundFormBody("sandbox", v, [rest(31337, 1_000_000n), rest(31338, 0n)], { amount: "", reason: "", chainId: "" }).toString();
    expect(one).not.toContain('name="chainId"');
  });

  test("what waiting refunds need of each balance; low only when read and below it; refunds without a destination need nothing", () => {
    const balances = [{ chainId: 1, network: "One", address: "0xv", tokens: [{ tokenAddress: "0xAA", tokenSymbol: "A", decimals: 6, balanceBaseUnits: "150", balance: "0.000150" }, { tokenAddress: "0xBB", tokenSymbol: "B", decimals: 6, balanceBaseUnits: null, balance: null }] }];
    const part = (token: string, baseUnits: string, destination: string | null) => ({ token, symbol: "x", decimals: 6, amount: baseUnits, baseUnits, destination });
    const needs = balanceNeeds(balances, [
      { chainId: 1, state: "PENDING", parts: [part("0xaa", "100", "0xd")] },
      { chainId: 1, state: "PENDING", parts: [part("0xaa", "100", "0xd"), part("0xbb", "5", "0xd")] },
      { chainId: 1, state: "PENDING", parts: [part("0xaa", "999", null)] },
      { chainId: 2, state: "PENDING", parts: [part("0xaa", "999", "0xd")] },
      // Paid from the merchant's own wallet: needs nothing of the balance.
      { chainId: 1, state: "PENDING", funding: "merchant_wallet", parts: [part("0xaa", "1000", "0xe")] },
    ]);
    expect(needs.map((x) => [x.tokenSymbol, x.neededBaseUnits, x.low])).toEqual([
      ["A", 200n, true],
      ["B", 5n, false],
    ]);
  });

  test("a refund's steps on the timeline", () => {
    const base = { refundId: "rf_1", amount: "1.00", currency: "USD", reason: "duplicate" as const, parts: [{ tokenAddress: "0x", tokenSymbol: "TUSD", decimals: 6, amount: "1.00", amountBaseUnits: "1000000", destination: null }], failureReason: null, funding: "balance" as const };
    // A refund the merchant's wallet paid says so on the timeline.
    expect(refundItems([{ ...base, funding: "merchant_wallet", status: "SENT", createdAt: "t1", sentAt: "t2", finishedAt: null }])[1]!.text).toContain("from your own wallet");
    expect(refundItems([{ ...base, status: "SUCCEEDED", createdAt: "t1", sentAt: "t2", finishedAt: "t3" }]).map((i) => [i.at, i.title])).toEqual([
      ["t1", "Refund asked for"],
      ["t2", "Refund sent"],
      ["t3", "Refunded"],
    ]);
    expect(refundItems([{ ...base, status: "PENDING", createdAt: "t1", sentAt: null, finishedAt: null }]).map((i) => i.title)).toEqual(["Refund asked for"]);
    expect(refundItems([{ ...base, status: "FAILED", failureReason: "reverted", createdAt: "t1", sentAt: "t2", finishedAt: "t3" }]).at(-1)!.text).toContain("(reverted)");
    // A refund to a link: its claim (and, with approval, the approval) are steps of their own.
    const claimed = { ...base, parts: [{ ...base.parts[0]!, destination: "0xPayer" }], requireApproval: true, claimedAt: "t2", createdAt: "t1", finishedAt: null };
    const waiting = refundItems([{ ...claimed, status: "PENDING", sentAt: null, approvedAt: null }]);
    expect(waiting.map((i) => [i.at, i.title])).toEqual([
      ["t1", "Refund asked for"],
      ["t2", "Refund link claimed"],
    ]);
    expect(waiting[1]!.text).toContain("0xPayer");
    expect(waiting[1]!.text).toContain("waits for your approval");
    expect(refundItems([{ ...claimed, status: "SENT", approvedAt: "t3", sentAt: "t4" }]).map((i) => [i.at, i.title])).toEqual([
      ["t1", "Refund asked for"],
      ["t2", "Refund link claimed"],
      ["t3", "Refund approved"],
      ["t4", "Refund sent"],
    ]);
    expect(refundItems([{ ...claimed, requireApproval: false, status: "PENDING", sentAt: null, approvedAt: null }])[1]!.text).toContain("goes out now");
  });
});
