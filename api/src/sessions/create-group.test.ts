import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { newId } from "../../../shared/ids.ts";
import { createGroup } from "./create-group.ts";
import type { NewSession } from "./repository.ts";

let svc: TestService;
let key: string;
let merchantId: string;
beforeAll(async () => {
  svc = await startTestService();
  const m = await svc.merchant("Grouped");
  key = m.sandboxKey;
  merchantId = m.merchant.id;
});
afterAll(async () => {
  await svc.close();
});

describe("creates with group commit", () => {
  test("many creates at once: fewer statements than creates, and each create whole and its own", async () => {
    const endpoint = await svc.call("POST", "/webhook-endpoints", { auth: key, body: { url: "http://127.0.0.1:9/hook" } });
    expect(endpoint.status).toBe(201);
    const before = { ...svc.services.creates.stats };
    const n = 80;
    const answers = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        svc.call("POST", "/payment-sessions", { auth: key, body: { amount: `${i + 1}.00`, currency: "USD", referenceId: `order-${i}`, metadata: { i: String(i) } } }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(n).fill(201));
    const batches = svc.services.creates.stats.batches - before.batches;
    expect(svc.services.creates.stats.items - before.items).toBe(n);
    expect(batches).toBeLessThan(n); // grouped (a batch leaves only while fewer than 2 are out)
    // Each answer is its own session: its amount, reference, metadata, deposit and token.
    expect(new Set(answers.map((a) => a.body.paymentSessionId)).size).toBe(n);
    expect(new Set(answers.map((a) => a.body.paymentSessionToken)).size).toBe(n);
    expect(new Set(answers.map((a) => a.body.networks[0].depositAddress)).size).toBe(n);
    for (const [i, a] of answers.entries()) {
      expect(a.body).toMatchObject({ amount: `${i + 1}.00`, referenceId: `order-${i}`, metadata: { i: String(i) }, status: "PENDING" });
    }
    // The token of each opens that session and no other.
    for (const a of answers.slice(0, 10)) {
      const pub = await svc.call("GET", "/api/payment-sessions", { auth: a.body.paymentSessionToken });
      expect(pub.body.paymentSessionId).toBe(a.body.paymentSessionId);
    }
    const sql = svc.services.database.sql;
    const ids = answers.map((a) => a.body.paymentSessionId as string);
    const [rows] = await sql`
      select (select count(*)::int from app.payment_sessions where id = any(${ids})) as sessions,
             (select count(*)::int from app.session_deposits where session_id = any(${ids})) as deposits,
             (select count(*)::int from app.session_events where session_id = any(${ids}) and sequence = 1 and reason = 'created') as events,
             (select count(*)::int from app.webhook_deliveries where session_id = any(${ids}) and endpoint_id = ${endpoint.body.id}) as deliveries`;
    expect(rows).toEqual({ sessions: n, deposits: n, events: n, deliveries: n });
  });

  test("one create refused by a constraint does not fail the others in its batch", async () => {
    const sql = svc.services.database.sql;
    const group = createGroup(sql, { maxBatch: 10, maxInFlight: 1 });
    const input = { amountMinor: 100n, currency: "USD" as const, metadata: {}, referenceId: null, expiresInSeconds: 600 };
    const session = (id: string): NewSession => ({ id, merchantId, environment: "sandbox", input, tokenGraceSeconds: 60, deposits: [] });
    const taken = newId("paymentSession");
    await group.submit(session(taken));
    // Two submitted in the same turn leave together: one reuses an id (primary key), one is fine.
    const fine = newId("paymentSession");
    const [dup, ok] = await Promise.allSettled([group.submit(session(taken)), group.submit(session(fine))]);
    expect(dup.status).toBe("rejected");
    expect(String((dup as PromiseRejectedResult).reason?.code)).toBe("23505");
    expect(ok.status).toBe("fulfilled");
    expect((ok as PromiseFulfilledResult<{ row: { id: string } }>).value.row.id).toBe(fine);
    expect(group.stats).toEqual({ batches: 2, items: 3 }); // the pair went as one batch before being written one by one
    const [row] = await sql`select count(*)::int as n from app.payment_sessions where id = any(${[taken, fine]})`;
    expect(row?.n).toBe(2);
  });
});
