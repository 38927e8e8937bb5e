/**
 * The example shop and a refund's webhooks, against the real service: a refund's events carry the
 * refund's own status (PENDING, …, CANCELED), which must never move the order's payment state.
 * The service delivers them to the shop's registered endpoint, signed; the shop acknowledges them.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestService, type TestService } from "../../testing/service.ts";
import { FAST_WEBHOOK_ENV } from "../../testing/webhook-receiver.ts";
import { eventually } from "../../testing/eventually.ts";
import { startMerchantExample, type MerchantExample } from "./server.ts";

let svc: TestService;
let shop: MerchantExample;
let key: string;
beforeAll(async () => {
  svc = await startTestService(FAST_WEBHOOK_ENV);
  const m = await svc.merchant("Shop");
  key = m.sandboxKey;
  shop = await startMerchantExample({ apiHost: svc.url, apiKey: key, merchantId: m.merchant.sandboxPublicId, dataDir: mkdtempSync(join(tmpdir(), "shop-refunds-")) });
});
afterAll(async () => {
  await shop?.stop();
  await svc?.close();
});

test("refund.created and refund.canceled are acknowledged and leave the order's payment state alone", async () => {
  const order = (await (await fetch(`${shop.url}/orders`, { method: "POST" })).json()) as { orderId: string; paymentSessionId: string };
  await eventually(async () => (shop.orders.get(order.orderId)?.webhooks.length === 1 ? true : undefined), "payment_session.pending at the shop", 10_000);
  // What the session received, as its ledger records a confirmed payment.
  const [d] = await svc.services.database.sql`select chain_id from app.session_deposits where session_id = ${order.paymentSessionId} limit 1`;
  await svc.services.database.sql`
    insert into app.session_funds (session_id, chain_id, direction, tx_hash, log_index, amount, block_timestamp)
    values (${order.paymentSessionId}, ${d!.chain_id}, 'in', ${`0x${"5a".repeat(32)}`}, 0, 12340000, now())`;
  const r = await svc.call("POST", `/payment-sessions/${order.paymentSessionId}/refunds`, { auth: key, body: { amount: "1.00", reason: "requested_by_customer" } });
  expect(r.status).toBe(201);
  expect((await svc.call("POST", `/refunds/${r.body.refundId}/cancel`, { auth: key })).status).toBe(200);
  const events = await eventually(async () => {
    const page = await svc.call("GET", `/events?paymentSessionId=${order.paymentSessionId}`, { auth: key });
    const mine = page.body.data as { id: string; type: string; deliveries?: unknown }[];
    if (mine.length < 3) return undefined;
    const states = await Promise.all(mine.map(async (e) => (await svc.call("GET", `/events/${e.id}`, { auth: key })).body.deliveries[0]?.state));
    return states.every((s) => s === "succeeded") ? mine.map((e) => e.type) : undefined;
  }, "every event delivered to the shop and acknowledged", 15_000);
  expect(events).toEqual(["refund.canceled", "refund.created", "payment_session.pending"]);
  const o = shop.orders.get(order.orderId)!;
  expect(o.state).toBe("awaiting_payment");
  expect(o.webhooks.map((w) => w.status)).toEqual(["PENDING"]);
}, 30_000);
