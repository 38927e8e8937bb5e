/**
 * The webhooks guide's merchant handler is real code: taken from docs/webhooks.md as it stands, run
 * against events signed by our own signer, for all five statuses, a duplicate, a
 * tampered body, a test event, refund events (whose `data.status` is the refund's, never taken for
 * the payment's) and an account event.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { generateSecret, secretKey, webhookHeaders } from "./signing.ts";

const guide = readFileSync(resolve(import.meta.dir, "../../../docs/webhooks.md"), "utf8");
const dir = mkdtempSync(join(tmpdir(), "paysession-guide-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("the webhooks guide's handler verifies with standardwebhooks and handles all five statuses", async () => {
  const at = guide.indexOf("## A complete handler");
  expect(at).toBeGreaterThan(-1);
  const section = guide.slice(at);
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  expect(code).toBeDefined();
  expect(code).toContain('from "standardwebhooks"');
  for (const s of ["PENDING", "FUNDED", "SUCCEEDED", "CANCELED", "ERROR"]) expect(code).toContain(`case "${s}"`);
  const stubs = `
export const calls: unknown[][] = [];
const applied = new Map<string, number>();
async function markOrder(...args: unknown[]) { calls.push(args); }
export const refunds: unknown[][] = [];
async function markRefund(...args: unknown[]) { refunds.push(args); }
async function alreadyApplied(id: string, seq: number) { return (applied.get(id) ?? 0) >= seq; }
async function recordApplied(id: string, seq: number) { applied.set(id, seq); }
`;
  const file = join(dir, "handler.ts");
  writeFileSync(file, code!.replace('"standardwebhooks"', JSON.stringify(require.resolve("standardwebhooks"))) + stubs);
  const secret = generateSecret();
  process.env.PAYSESSION_WEBHOOK_SECRET = secret;
  const mod = await import(file);

  const send = (event: unknown, tamper = false) => {
    const body = JSON.stringify(event);
    const headers = webhookHeaders([secretKey(secret)], (event as { id: string }).id, Math.floor(Date.now() / 1000), body);
    return mod.POST(new Request("http://merchant.test/api/paysession", { method: "POST", headers, body: tamper ? body.replace("order_9", "order_6") : body }));
  };
  const statuses = ["PENDING", "FUNDED", "SUCCEEDED", "CANCELED", "ERROR"];
  for (const [i, status] of statuses.entries()) {
    const r: Response = await send({ id: `evt_${i}`, type: `payment_session.${status.toLowerCase()}`, data: { paymentSessionId: "ps_1", referenceId: "order_9", status, reason: "x", sequence: i + 1 } });
    expect([status, r.status]).toEqual([status, 200]);
  }
  expect(mod.calls.map((c: unknown[]) => c[1])).toEqual(["awaiting_payment", "paid_settling", "paid", "canceled", "needs_attention"]);
  const dup: Response = await send({ id: "evt_1", type: "payment_session.funded", data: { paymentSessionId: "ps_1", referenceId: "order_9", status: "FUNDED", sequence: 2 } });
  expect(await dup.text()).toBe("duplicate");
  const bad: Response = await send({ id: "evt_x", type: "payment_session.funded", data: { paymentSessionId: "ps_2", referenceId: "order_9", status: "FUNDED", sequence: 1 } }, true);
  expect(bad.status).toBe(400);
  const t: Response = await send({ id: "evt_t", type: "webhook.test", data: {} });
  expect(t.status).toBe(200);
  expect(mod.calls.length).toBe(5);
  // A refund's events, in the session's sequence: recorded as the refund's, the order's payment state untouched.
  for (const [i, [type, status]] of [["refund.created", "PENDING"], ["refund.canceled", "CANCELED"]].entries()) {
    const r: Response = await send({ id: `evt_r${i}`, type, data: { refundId: "rf_1", paymentSessionId: "ps_1", status, amount: "1.00", sequence: 6 + i } });
    expect([type, r.status]).toEqual([type, 200]);
  }
  expect(mod.refunds).toEqual([
    ["ps_1", "rf_1", "refund.created"],
    ["ps_1", "rf_1", "refund.canceled"],
  ]);
  const again: Response = await send({ id: "evt_r0", type: "refund.created", data: { refundId: "rf_1", paymentSessionId: "ps_1", status: "PENDING", sequence: 6 } });
  expect(await again.text()).toBe("duplicate");
  const account: Response = await send({ id: "evt_a", type: "settlement_address.updated", data: { chainId: 8453, address: "0x1" } });
  expect(account.status).toBe(200);
  expect(mod.calls.length).toBe(5);
  expect(mod.refunds.length).toBe(2);
});
