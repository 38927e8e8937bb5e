/**
 * The example shop: a small server and page that take a payment through Paysession, using
 * the three values the spec names, exactly:
 *   SERVICE_API_HOST                 the service's base address (sandbox or production)
 *   SERVICE_API_KEY                  the secret API key (this server only; never sent to the page)
 *   NEXT_PUBLIC_SERVICE_MERCHANT_ID  the public merchant id (handed to the page for the SDK)
 *
 *   GET  /                 the shop page (loads the SDK from SERVICE_API_HOST/sdk/v1/paysession.js)
 *   POST /orders           creates an order and its payment session (API key) → id and token for sdk.open
 *   GET  /orders/:id       the order as the webhooks left it
 *   POST /webhooks         Paysession's webhooks: signature verified, all five statuses handled
 *   GET  /pay-by-link      the same product as a payment link (docs/payment-links.md): no script, no order
 *                          of ours; made once (its Idempotency-Key), then the payer is sent to its page
 *   GET  /thanks           where the link sends the payer once paid (?paymentSessionId=…)
 *
 * The webhook secret is SERVICE_WEBHOOK_SECRET when set; otherwise the server registers its own
 * /webhooks URL with the service at start (or finds it registered) and reads the secret there.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { Orders, type PaymentStatus } from "./orders.ts";
import { verifyWebhook } from "./webhook.ts";

export interface MerchantExampleOptions {
  apiHost: string;
  apiKey: string;
  merchantId: string;
  port?: number;
  hostname?: string;
  dataDir: string;
  webhookSecret?: string;
  /** The shop's own address as the service reaches it (default http://<hostname>:<port>). */
  publicUrl?: string;
  /** The amount of the one product (default "12.34"). */
  price?: string;
  log?: (line: string) => void;
}

export interface MerchantExample {
  url: string;
  orders: Orders;
  stop(): Promise<void>;
}

const PUBLIC = join(import.meta.dir, "public");

export async function startMerchantExample(opts: MerchantExampleOptions): Promise<MerchantExample> {
  const apiHost = opts.apiHost.replace(/\/$/, "");
  const orders = new Orders(opts.dataDir);
  const log = opts.log ?? (() => {});
  const price = opts.price ?? "12.34";
  let webhookSecret = opts.webhookSecret;

  const api = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${apiHost}${path}`, {
      method,
      headers: { authorization: `Bearer ${opts.apiKey}`, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json().catch(() => ({}))) as any;
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${json?.error?.code ?? ""} ${json?.error?.message ?? ""}`);
    return json;
  };

  // The page is static; the SDK comes from the service, the merchant id from a meta tag. Its
  // own CSP allows scripts from itself and the service only, and frames from the service only.
  const page = readFileSync(join(PUBLIC, "index.html"), "utf8")
    .replaceAll("__API_HOST__", apiHost)
    .replaceAll("__MERCHANT_ID__", opts.merchantId)
    .replaceAll("__PRICE__", price);
  const csp = `default-src 'self'; script-src 'self' ${apiHost}; frame-src ${apiHost}; connect-src 'self'; style-src 'self'; img-src 'self' data:; base-uri 'none'`;

  const shopUrl = () => `http://${server.hostname}:${server.port}`;
  const server = Bun.serve({
    port: opts.port ?? 0,
    hostname: opts.hostname ?? "127.0.0.1",
    async fetch(req) {
      const url = new URL(req.url);
      try {
        if (req.method === "GET" && url.pathname === "/") return new Response(page, { headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": csp } });
        if (req.method === "GET" && (url.pathname === "/app.js" || url.pathname === "/shop.css")) {
          const type = url.pathname.endsWith(".js") ? "text/javascript" : "text/css";
          return new Response(Bun.file(join(PUBLIC, url.pathname.slice(1))), { headers: { "content-type": `${type}; charset=utf-8` } });
        }
        if (req.method === "POST" && url.pathname === "/orders") {
          const orderId = `order_${randomUUID().slice(0, 8)}`;
          // The order first: the session's first webhook may arrive before the create's answer, and
          // finds the order by the session's referenceId. The server creates the session with its
          // secret key; the page gets only id and token.
          orders.create({ orderId, amount: price });
          const s = await api("POST", "/payment-sessions", { amount: price, currency: "USD", referenceId: orderId }, { "idempotency-key": orderId });
          orders.attachSession(orderId, s.paymentSessionId);
          return Response.json({ orderId, paymentSessionId: s.paymentSessionId, paymentSessionToken: s.paymentSessionToken });
        }
        if (req.method === "GET" && url.pathname === "/pay-by-link") {
          // The link needs no server at payment time: the service's page starts each session. Its
          // redirect comes back here (http only to this machine, and only in the sandbox).
          const back = `${(opts.publicUrl ?? shopUrl()).replace(/\/$/, "")}/thanks`;
          const redirect = back.startsWith("https://") || /^http:\/\/(localhost|127\.0\.0\.1)[:/]/.test(back) ? { redirectUrl: back } : {};
          const link = await api("POST", "/payment-links", { amount: price, description: "A very good mug", ...redirect }, { "idempotency-key": `example-shop-link-${price}` });
          return new Response(null, { status: 303, headers: { location: link.url } });
        }
        if (req.method === "GET" && url.pathname === "/thanks") {
          // A courtesy page, not proof of payment: the webhooks say what was paid.
          const id = (url.searchParams.get("paymentSessionId") ?? "").replace(/[^0-9A-Za-z_]/g, "");
          return new Response(`<!doctype html><meta charset="utf-8"><title>Thanks</title><link rel="stylesheet" href="/shop.css"><main><h1>Thank you</h1><p>Payment <code>${id}</code> received.</p></main>`, {
            headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": csp },
          });
        }
        const m = /^\/orders\/(order_[a-z0-9-]+)$/.exec(url.pathname);
        if (req.method === "GET" && m) {
          const order = orders.get(m[1]!);
          return order ? Response.json(order) : Response.json({ error: "no such order" }, { status: 404 });
        }
        if (req.method === "POST" && url.pathname === "/webhooks") {
          const body = await req.text();
          if (!webhookSecret || !verifyWebhook(webhookSecret, req.headers, body)) return new Response("bad signature", { status: 400 });
          const event = JSON.parse(body) as { id: string; type: string; data: { paymentSessionId: string; referenceId: string | null; status: PaymentStatus; reason: string; sequence: number } };
          if (event.type === "webhook.test") return new Response("ok");
          if (event.type.startsWith("refund.")) {
            // A refund's event: its data is the refund (its own status: PENDING, SENT, SUCCEEDED, …), not the payment's.
            log(`webhook ${event.type} for ${event.data.paymentSessionId}`);
            return new Response("ok");
          }
          const known = orders.recordWebhook({ orderId: event.data.referenceId ?? undefined, paymentSessionId: event.data.paymentSessionId, id: event.id, status: event.data.status, reason: event.data.reason, sequence: event.data.sequence });
          log(`webhook ${event.data.status} (${event.data.reason}) for ${event.data.paymentSessionId}${known ? "" : " (not one of ours)"}`);
          return new Response("ok"); // 2xx: handled (or not ours; a retry would not change that)
        }
        return new Response("not found", { status: 404 });
      } catch (err) {
        log(`error: ${(err as Error).message}`);
        return Response.json({ error: (err as Error).message }, { status: 502 });
      }
    },
  });
  const url = shopUrl();
  const webhookUrl = `${(opts.publicUrl ?? url).replace(/\/$/, "")}/webhooks`;

  if (!webhookSecret) {
    try {
      webhookSecret = await registerWebhook();
    } catch (err) {
      await server.stop(true);
      throw err;
    }
  }

  async function registerWebhook(): Promise<string> {
    const list = await api("GET", "/webhook-endpoints");
    const found = (list.data as { id: string; url: string; enabled: boolean }[]).find((e) => e.url === webhookUrl);
    if (found) {
      if (!found.enabled) await api("POST", `/webhook-endpoints/${found.id}`, { enabled: true });
      return (await api("GET", `/webhook-endpoints/${found.id}/secret`)).secret;
    }
    return (await api("POST", "/webhook-endpoints", { url: webhookUrl, description: "example shop (bun run dev)" })).secret;
  }

  return {
    url,
    orders,
    async stop() {
      await server.stop(true);
    },
  };
}
