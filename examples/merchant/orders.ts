/**
 * The example shop's orders, kept in an append-only JSON-lines file (one line per order
 * created, per payment session attached and per webhook handled), read back at start: a restart
 * loses nothing. A real shop keeps them in its database; the shape of the handling is the same.
 *
 * The order is written *before* its payment session is created, and webhooks find it by the
 * session's `referenceId` (the order id): the session's first webhook (PENDING) can arrive before
 * the create's answer has reached the shop, and must not be dropped as "not one of ours".
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export type PaymentStatus = "PENDING" | "FUNDED" | "SUCCEEDED" | "CANCELED" | "ERROR";

export interface Order {
  orderId: string;
  amount: string;
  /** null until the create's answer arrives (a webhook may bring it first). */
  paymentSessionId: string | null;
  /** What the shop does with the order, decided by the webhooks (never by the browser). */
  state: "awaiting_payment" | "paid_settling" | "paid" | "canceled" | "needs_attention";
  /** Every webhook handled for this order, in the order received (id, status, reason). */
  webhooks: { id: string; status: PaymentStatus; reason: string; sequence: number }[];
}

type Line =
  | { kind: "order"; order: Omit<Order, "webhooks" | "state"> }
  | { kind: "session"; orderId: string; paymentSessionId: string }
  | { kind: "webhook"; orderId?: string; paymentSessionId: string; id: string; status: PaymentStatus; reason: string; sequence: number };

export class Orders {
  private readonly byId = new Map<string, Order>();
  private readonly bySession = new Map<string, Order>();
  private readonly file: string;

  constructor(dir: string) {
    mkdirSync(dir, { recursive: true });
    this.file = join(dir, "orders.jsonl");
    if (existsSync(this.file)) {
      for (const raw of readFileSync(this.file, "utf8").split("\n")) if (raw.trim()) this.apply(JSON.parse(raw) as Line);
    }
  }

  private write(line: Line) {
    appendFileSync(this.file, `${JSON.stringify(line)}\n`);
    this.apply(line);
  }

  private apply(line: Line) {
    if (line.kind === "order") {
      const order: Order = { ...line.order, state: "awaiting_payment", webhooks: [] };
      this.byId.set(order.orderId, order);
      if (order.paymentSessionId) this.bySession.set(order.paymentSessionId, order);
      return;
    }
    const order = this.find(line.orderId, line.paymentSessionId);
    if (!order) return;
    if (order.paymentSessionId === null) {
      order.paymentSessionId = line.paymentSessionId;
      this.bySession.set(line.paymentSessionId, order);
    }
    if (line.kind === "session") return;
    if (order.webhooks.some((w) => w.id === line.id)) return; // at-least-once: a redelivery is handled once
    order.webhooks.push({ id: line.id, status: line.status, reason: line.reason, sequence: line.sequence });
    // Deliveries come in order per session; the highest sequence decides the state all the same.
    const latest = order.webhooks.reduce((a, b) => (b.sequence > a.sequence ? b : a));
    order.state = stateOf(latest.status);
  }

  /** An order of the session's own: by the order id it was created with, else by session. */
  private find(orderId: string | undefined, paymentSessionId: string): Order | undefined {
    const byOrder = orderId === undefined ? undefined : this.byId.get(orderId);
    if (byOrder && (byOrder.paymentSessionId === null || byOrder.paymentSessionId === paymentSessionId)) return byOrder;
    return this.bySession.get(paymentSessionId);
  }

  create(order: { orderId: string; amount: string }): Order {
    this.write({ kind: "order", order: { ...order, paymentSessionId: null } });
    return this.byId.get(order.orderId)!;
  }

  /** The create's answer: the order's payment session (a webhook may have attached it already). */
  attachSession(orderId: string, paymentSessionId: string): void {
    if (this.byId.get(orderId)?.paymentSessionId === paymentSessionId) return;
    this.write({ kind: "session", orderId, paymentSessionId });
  }

  get(orderId: string): Order | undefined {
    return this.byId.get(orderId);
  }

  bySessionId(paymentSessionId: string): Order | undefined {
    return this.bySession.get(paymentSessionId);
  }

  /** false when the session is none of this shop's orders. */
  recordWebhook(w: { orderId?: string; paymentSessionId: string; id: string; status: PaymentStatus; reason: string; sequence: number }): boolean {
    if (!this.find(w.orderId, w.paymentSessionId)) return false;
    this.write({ kind: "webhook", ...w });
    return true;
  }
}

/** Every one of the five statuses, handled. */
export function stateOf(status: PaymentStatus): Order["state"] {
  switch (status) {
    case "PENDING":
      return "awaiting_payment"; // created: wait for the payer
    case "FUNDED":
      return "paid_settling"; // the money arrived: you may already confirm the order
    case "SUCCEEDED":
      return "paid"; // settled to your address: fulfil
    case "CANCELED":
      return "canceled"; // expired or canceled, nothing paid: release the stock
    case "ERROR":
      return "needs_attention"; // under-paid, paid too late, settlement failed…: look at it (funds are never lost)
  }
}
