/**
 * Sandbox tools' refusals that need no chain: a real service whose networks' RPC is never
 * contacted (testing/service.ts). The tools' happy paths are in sandbox.test.ts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../../testing/service.ts";

let svc: TestService;
let key: string;
beforeAll(async () => {
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false" });
  key = (await svc.merchant()).sandboxKey;
});
afterAll(() => svc.close());

const create = async () => (await svc.call("POST", "/payment-sessions", { auth: key, body: { amount: "1.00", currency: "USD" } })).body.paymentSessionId as string;
const setStatus = (id: string, status: string) => svc.services.database.sql`update app.payment_sessions set status = ${status} where id = ${id}`;
const armed = async (id: string) => (await svc.services.database.sql`select force_sweep_failure from app.payment_sessions where id = ${id}`)[0]!.force_sweep_failure as boolean;

test("fail-next-sweep is refused with 409 session_finished on a SUCCEEDED, CANCELED or ERROR session, and arms nothing", async () => {
  for (const status of ["SUCCEEDED", "CANCELED", "ERROR"]) {
    const id = await create();
    await setStatus(id, status);
    const r = await svc.call("POST", `/sandbox/payment-sessions/${id}/fail-next-sweep`, { auth: key, body: {} });
    expect({ status, http: r.status, code: r.body.error?.code }).toEqual({ status, http: 409, code: "session_finished" });
    expect(r.body.error.message).toContain(status);
    expect(await armed(id)).toBe(false);
  }
});

test("fail-next-sweep is accepted on a PENDING or FUNDED session", async () => {
  for (const status of ["PENDING", "FUNDED"]) {
    const id = await create();
    await setStatus(id, status);
    const r = await svc.call("POST", `/sandbox/payment-sessions/${id}/fail-next-sweep`, { auth: key, body: {} });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ paymentSessionId: id, failNextSweep: true });
    expect(await armed(id)).toBe(true);
  }
});
