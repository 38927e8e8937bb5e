import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Orders } from "./orders.ts";

test("a webhook that arrives before the create's answer is kept (found by the order id), and a restart keeps it all", () => {
  const dir = mkdtempSync(join(tmpdir(), "shop-orders-"));
  const orders = new Orders(dir);
  orders.create({ orderId: "order_1", amount: "12.34" });
  // PENDING arrives while the shop still waits for the create's answer.
  expect(orders.recordWebhook({ orderId: "order_1", paymentSessionId: "ps_1", id: "evt_1", status: "PENDING", reason: "created", sequence: 1 })).toBe(true);
  orders.attachSession("order_1", "ps_1");
  expect(orders.recordWebhook({ paymentSessionId: "ps_1", id: "evt_2", status: "FUNDED", reason: "paid", sequence: 2 })).toBe(true);
  expect(orders.recordWebhook({ orderId: "order_1", paymentSessionId: "ps_1", id: "evt_2", status: "FUNDED", reason: "paid", sequence: 2 })).toBe(true); // redelivery
  // Someone else's session naming our order id is not ours.
  expect(orders.recordWebhook({ orderId: "order_1", paymentSessionId: "ps_other", id: "evt_x", status: "SUCCEEDED", reason: "swept", sequence: 3 })).toBe(false);
  for (const o of [orders, new Orders(dir)]) {
    const order = o.bySessionId("ps_1")!;
    expect(order.orderId).toBe("order_1");
    expect(order.webhooks.map((w) => w.status)).toEqual(["PENDING", "FUNDED"]);
    expect(order.state).toBe("paid_settling");
  }
});
