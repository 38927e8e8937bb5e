/**
 * Verifying a webhook (Standard Webhooks): the signed content is `${webhook-id}.${webhook-timestamp}.${body}`,
 * HMAC-SHA256 with the base64 key after `whsec_`; `webhook-signature` holds one `v1,<base64>` per
 * valid secret (two during a rotation), any of which may match. The timestamp must be within five
 * minutes (replays of old deliveries are refused). WebCrypto only: runs on Node 20+, Bun and Deno.
 */
import type { PaymentSessionEvent, RefundEvent, SettlementAddressUpdatedEvent, TestEventResult } from "./types.ts";

/** Whatever a delivery may carry: narrow on `type`. */
export type WebhookEvent = PaymentSessionEvent | RefundEvent | SettlementAddressUpdatedEvent | TestEventResult["event"];

export const WEBHOOK_TOLERANCE_SECONDS = 300;

export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError";
}

/**
 * The request's headers: a fetch `Headers` (anything with `get`) or Node's headers object. Said by
 * shape, not as the global `Headers`, so the declarations need neither the DOM nor `@types/node`.
 */
export type HeaderBag = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof headers.get === "function") return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  const v = bag[name] ?? bag[Object.keys(bag).find((k) => k.toLowerCase() === name) ?? ""];
  return Array.isArray(v) ? v[0] : v;
}

function fromBase64(b64: string): Uint8Array<ArrayBuffer> {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function toBase64(bytes: ArrayBuffer): string {
  let s = "";
  for (const b of new Uint8Array(bytes)) s += String.fromCharCode(b);
  return btoa(s);
}

/** Constant-time comparison of two strings of base64. */
function equal(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return d === 0;
}

/**
 * Checks a delivery and returns its event (a payment session event, a refund event such as `refund.succeeded`, an account event such as `settlement_address.updated`, or `webhook.test` from "send test"): narrow on `type`. `body` must be the raw request body, exactly as
 * received (parse it after verifying). Throws WebhookVerificationError when it does not verify.
 */
export async function verifyWebhook(
  body: string,
  headers: HeaderBag,
  secret: string,
  opts: { nowSeconds?: number; toleranceSeconds?: number } = {},
): Promise<WebhookEvent> {
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature header");
  const ts = Number(timestamp);
  const now = opts.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (!Number.isInteger(ts) || Math.abs(now - ts) > (opts.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS)) {
    throw new WebhookVerificationError("webhook-timestamp is too far from now");
  }
  if (!secret.startsWith("whsec_")) throw new WebhookVerificationError("the secret must be the endpoint's whsec_… secret");
  const key = await crypto.subtle.importKey("raw", fromBase64(secret.slice("whsec_".length)), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const expected = toBase64(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${id}.${ts}.${body}`)));
  const ok = signatures.split(" ").some((s) => s.startsWith("v1,") && equal(s.slice(3), expected));
  if (!ok) throw new WebhookVerificationError("no signature matches");
  return JSON.parse(body) as WebhookEvent;
}
