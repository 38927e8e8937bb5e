/**
 * The claim's rows are decoded against their documented shape (db/rows.ts) as they come back
 * from the real Postgres: typed values for the worker, and a loud RowShapeMismatch naming the
 * statement and the column when the schema drifts from what the statement was written for.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { TransactionSql } from "postgres";
import { startTestService, type TestService } from "../../../../testing/service.ts";
import { RowShapeMismatch } from "../../db/rows.ts";
import { claimDeliveries, type ClaimLimits } from "./claim-deliveries.ts";

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false" });
});
afterAll(() => svc.close());

const limits: ClaimLimits = { limit: 10, excludedEndpoints: [], endpointConcurrency: 4, leaseMs: 60_000 };

/** Runs `fn` in a transaction that is always rolled back, so the claim (and any DDL) leaves nothing behind. */
async function rolledBack<T>(fn: (tx: TransactionSql) => Promise<T>): Promise<T> {
  let out: { value: T } | undefined;
  const undo = new Error("roll back");
  await svc.services.database.sql
    .begin(async (tx) => {
      out = { value: await fn(tx) };
      throw undo;
    })
    .catch((e) => {
      if (e !== undo) throw e;
    });
  return out!.value;
}

test("a session event's and an account event's deliveries come back typed, told apart by account_event_id", async () => {
  const { sandboxKey: key } = await svc.merchant();
  const ep = (await svc.call("POST", "/webhook-endpoints", { auth: key, body: { url: "http://127.0.0.1:9/h" } })).body;
  const s = (await svc.call("POST", "/payment-sessions", { auth: key, body: { amount: "1.00", currency: "USD" } })).body;
  expect((await svc.call("PUT", "/settlement-addresses/31337", { auth: key, body: { address: "0x1111111111111111111111111111111111111111" } })).status).toBe(200);

  const rows = await rolledBack((tx) => claimDeliveries(tx, limits));
  expect(rows.length).toBe(2);
  for (const r of rows) {
    expect(r.endpoint_id).toBe(ep.id);
    expect(r.environment).toBe("sandbox");
    expect(typeof r.delivery_id).toBe("bigint");
    expect(r.claim).toBe(1);
    expect(r.refund_event_id).toBeNull();
    if (r.account_event_id === null && r.refund_event_id === null) {
      expect(r.status).toBe("PENDING");
      expect(r.reason).toBe("created");
      expect(r.sequence).toBe(1);
      expect(r.event_created_at).toBeInstanceOf(Date);
      expect(r.session.id).toBe(s.paymentSessionId);
      expect(r.session.token_hash).toBeUndefined();
      expect(Array.isArray(r.deposits)).toBe(true);
    } else if (r.account_event_id !== null) {
      expect(r.account_type).toBe("settlement_address.updated");
      expect(r.account_created_at).toBeInstanceOf(Date);
      expect(r.account_data.address).toBe("0x1111111111111111111111111111111111111111");
    }
  }
  expect(rows.filter((r) => r.account_event_id === null).length).toBe(1);
});

test("a column whose type changed under the statement: RowShapeMismatch naming the claim and the column", async () => {
  // The session event's `sequence` widened to bigint (postgres.js then hands back a JS bigint):
  // the claim names it at once instead of letting a bigint travel into the webhook's body.
  const error = await rolledBack(async (tx) => {
    await tx`alter table app.session_events alter column sequence type bigint`;
    return claimDeliveries(tx, limits).then(
      () => undefined,
      (e: unknown) => e,
    );
  });
  expect(error).toBeInstanceOf(RowShapeMismatch);
  expect(String(error)).toContain('"claim deliveries (session event)"');
  expect(String(error)).toContain("/sequence");

  // Rolled back: the same claim decodes again.
  expect((await rolledBack((tx) => claimDeliveries(tx, limits))).length).toBeGreaterThan(0);
});
