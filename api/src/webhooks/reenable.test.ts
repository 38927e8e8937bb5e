/**
 * A delivery written by an event whose transaction raced a disable of its endpoint (the
 * writer saw the endpoint enabled, the disable's cancel did not see the uncommitted row) is
 * left `waiting` behind a canceled head: nothing would ever release it, and every later event
 * of that session would queue behind it. Re-enabling the endpoint must not leave it so.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../../testing/service.ts";

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false" });
});
afterAll(() => svc.close());

test("re-enabling an endpoint leaves no delivery waiting without an open one before it", async () => {
  const { sandboxKey: key } = await svc.merchant();
  const sql = svc.services.database.sql;
  const ep = (await svc.call("POST", "/webhook-endpoints", { auth: key, body: { url: "http://127.0.0.1:9/h" } })).body;
  const s = (await svc.call("POST", "/payment-sessions", { auth: key, body: { amount: "1.00", currency: "USD" } })).body;
  expect((await svc.call("POST", `/payment-sessions/${s.paymentSessionId}/cancel`, { auth: key })).status).toBe(200);
  const states = async () =>
    (await sql`select sequence, state from app.webhook_deliveries where endpoint_id = ${ep.id} order by sequence`).map((r) => [r.sequence, r.state]);
  expect(await states()).toEqual([[1, "pending"], [2, "waiting"]]);

  expect((await svc.call("POST", `/webhook-endpoints/${ep.id}`, { auth: key, body: { enabled: false } })).status).toBe(200);
  expect(await states()).toEqual([[1, "canceled"], [2, "canceled"]]);
  // The racing writer's row, committed just after the disable's cancel ran.
  await sql`update app.webhook_deliveries set state = 'waiting', next_attempt_at = null where endpoint_id = ${ep.id} and sequence = 2`;

  expect((await svc.call("POST", `/webhook-endpoints/${ep.id}`, { auth: key, body: { enabled: true } })).status).toBe(200);
  const orphans = await sql`
    select w.id from app.webhook_deliveries w
     where w.endpoint_id = ${ep.id} and w.state = 'waiting'
       and not exists (select 1 from app.webhook_deliveries o
                        where o.endpoint_id = w.endpoint_id and o.session_id = w.session_id and o.ordered
                          and o.sequence < w.sequence and o.state in ('waiting', 'pending', 'sending'))`;
  expect(orphans.length).toBe(0);
  expect(await states()).toEqual([[1, "canceled"], [2, "canceled"]]);
});
