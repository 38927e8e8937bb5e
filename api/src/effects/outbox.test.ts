/**
 * The new sessions' deliveries (newSessionDeliveries) as the create statement takes them, run
 * against the real Postgres: one delivery per enabled endpoint, due at once, and the NOTIFY that
 * wakes the worker — which Postgres sends only when the statement's final select reads the
 * `notified` piece (a CTE that only selects is skipped when nothing reads it).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { newId } from "../../../shared/ids.ts";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { eventually } from "../../../testing/eventually.ts";
import { insertSession } from "../sessions/create/statement.ts";
import { newSessionDeliveries, WEBHOOK_CHANNEL } from "./webhook-outbox.ts";

let svc: TestService;
let notifications = 0;
let unlisten: () => Promise<void>;
beforeAll(async () => {
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false" });
  const l = await svc.services.database.sql.listen(WEBHOOK_CHANNEL, () => notifications++);
  unlisten = () => l.unlisten();
});
afterAll(async () => {
  await unlisten();
  await svc.close();
});

const input = { amountMinor: 100n, currency: "USD" as const, metadata: {}, referenceId: null, expiresInSeconds: 600 };

/** A merchant with two enabled endpoints and a disabled one. */
async function merchantWithEndpoints(): Promise<{ merchantId: string; enabled: string[] }> {
  const m = await svc.merchant();
  const ids: string[] = [];
  for (const n of [1, 2, 3]) {
    const ep = await svc.call("POST", "/webhook-endpoints", { auth: m.sandboxKey, body: { url: `http://127.0.0.1:9/h${n}` } });
    expect(ep.status).toBe(201);
    ids.push(ep.body.id);
  }
  expect((await svc.call("POST", `/webhook-endpoints/${ids[2]}`, { auth: m.sandboxKey, body: { enabled: false } })).status).toBe(200);
  return { merchantId: m.merchant.id, enabled: ids.slice(0, 2) };
}

test("the create statement writes the first event's deliveries, one per enabled endpoint, pending, and wakes the worker", async () => {
  const { merchantId, enabled } = await merchantWithEndpoints();
  const before = notifications;
  const id = newId("paymentSession");
  await insertSession(svc.services.database.sql, { id, deposits: [], merchantId, environment: "sandbox", input, tokenGraceSeconds: 60 });
  const rows = await svc.services.database.sql`
    select d.endpoint_id, d.state, d.sequence, d.ordered, d.next_attempt_at is not null as due, e.reason
      from app.webhook_deliveries d join app.session_events e on e.id = d.event_id
     where d.session_id = ${id} order by d.endpoint_id`;
  expect(rows.map((r) => r.endpoint_id).sort()).toEqual([...enabled].sort());
  for (const r of rows) expect([r.state, r.sequence, r.ordered, r.due, r.reason]).toEqual(["pending", 1, true, true, "created"]);
  await eventually(() => notifications > before, "the NOTIFY of the create", 3000);
});

test("the pieces in a statement of their own: the NOTIFY goes only when the final select reads `notified`; the deliveries are written either way", async () => {
  const { merchantId, enabled } = await merchantWithEndpoints();
  const sql = svc.services.database.sql;
  const run = async (readNotified: boolean) => {
    const sessionId = newId("paymentSession");
    const atCreate = notifications;
    await insertSession(sql, { id: sessionId, deposits: [], merchantId, environment: "sandbox", input, tokenGraceSeconds: 60 });
    await eventually(() => notifications > atCreate, "the create's own NOTIFY, out of the way", 3000);
    // A second event of that session, written with the pieces, as the create statement writes its first.
    const d = newSessionDeliveries(sql, "ev");
    const before = notifications;
    const [row] = await sql`
      with ev as (
        insert into app.session_events (id, session_id, merchant_id, environment, sequence, status, previous_status, reason, detail)
        values (${newId("event")}, ${sessionId}, ${merchantId}, 'sandbox', 2, 'PENDING', 'PENDING', 'created', '{}'::jsonb)
        returning id, session_id, merchant_id, environment, sequence
      ), ${d.ctes}
      select ${readNotified ? d.notified : sql`0::bigint`} as notified`;
    const [{ n }] = (await sql`select count(*)::int as n from app.webhook_deliveries where session_id = ${sessionId} and sequence = 2`) as unknown as [{ n: number }];
    expect(n).toBe(enabled.length);
    // Given time to arrive: a NOTIFY left out must not come late either.
    await Bun.sleep(300);
    return { notified: Number(row!.notified), arrived: notifications > before };
  };
  expect(await run(true)).toEqual({ notified: 1, arrived: true });
  expect(await run(false)).toEqual({ notified: 0, arrived: false });
});
