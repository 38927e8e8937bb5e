/**
 * Verifying a Paysession webhook (Standard Webhooks): the signature is
 * `v1,` + base64 HMAC-SHA256 of `${webhook-id}.${webhook-timestamp}.${body}`, keyed with the
 * base64 part of your `whsec_…` secret. During a secret rotation the header carries several
 * signatures separated by spaces: accept the message if any matches. Refuse old timestamps
 * (replays) and compare in constant time. Any Standard Webhooks library does the same.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

const TOLERANCE_SECONDS = 5 * 60;

export function verifyWebhook(secret: string, headers: Headers, body: string, nowSeconds = Math.floor(Date.now() / 1000)): boolean {
  const id = headers.get("webhook-id");
  const timestamp = headers.get("webhook-timestamp");
  const signatures = headers.get("webhook-signature");
  if (!id || !timestamp || !signatures || !/^\d+$/.test(timestamp)) return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > TOLERANCE_SECONDS) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest();
  return signatures.split(" ").some((s) => {
    const [version, b64] = s.split(",");
    if (version !== "v1" || !b64) return false;
    const got = Buffer.from(b64, "base64");
    return got.length === expected.length && timingSafeEqual(got, expected);
  });
}
