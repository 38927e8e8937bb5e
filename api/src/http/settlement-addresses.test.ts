import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestService, type TestService } from "../testing/service.ts";

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc.close();
});

const ADDR = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

test("a merchant sets a settlement address; new sessions' deposit addresses bind to it, older ones keep theirs", async () => {
  const m = await svc.merchant("Settler");
  const before = await svc.call("POST", "/payment-sessions", { auth: m.liveKey, body: { amount: "1.00", currency: "USD" } });
  const set = await svc.call("PUT", "/settlement-addresses/8453", { auth: m.liveKey, body: { address: ADDR } });
  expect(set.status).toBe(200);
  expect(set.body).toMatchObject({ chainId: 8453, address: ADDR.toLowerCase() });
  const list = await svc.call("GET", "/settlement-addresses", { auth: m.liveKey });
  expect(list.body.data.map((d: { address: string }) => d.address)).toEqual([ADDR.toLowerCase()]);
  const after = await svc.call("POST", "/payment-sessions", { auth: m.liveKey, body: { amount: "1.00", currency: "USD" } });
  const dep = await svc.services.database.sql`select session_id, settlement_address from app.session_deposits where session_id in ${svc.services.database.sql([before.body.paymentSessionId, after.body.paymentSessionId])} order by session_id = ${after.body.paymentSessionId}`;
  expect(dep.map((d) => d.settlement_address)).toEqual(["0x2222222222222222222222222222222222222222", ADDR.toLowerCase()]);
  const watched = await svc.services.database.sql`select kind from app.watched_addresses where address = ${ADDR.toLowerCase()}`;
  expect(watched.length).toBe(1);
  // Environments are separate: the sandbox list is empty.
  expect((await svc.call("GET", "/settlement-addresses", { auth: m.sandboxKey })).body.data).toEqual([]);
});

test("bad chain ids and addresses are 400 with the param named, and change nothing", async () => {
  const m = await svc.merchant("Careful");
  const cases: [string, unknown, string][] = [
    ["/settlement-addresses/31337", { address: ADDR }, "chainId"], // a sandbox network with a live key
    ["/settlement-addresses/999", { address: ADDR }, "chainId"],
    ["/settlement-addresses/abc", { address: ADDR }, "chainId"],
    ["/settlement-addresses/8453", { address: "0x0000000000000000000000000000000000000000" }, "address"],
    ["/settlement-addresses/8453", { address: "0x1234" }, "address"],
    ["/settlement-addresses/8453", { address: 5 }, "address"],
    ["/settlement-addresses/8453", {}, "address"],
    ["/settlement-addresses/8453", { address: ADDR, extra: 1 }, "extra"],
  ];
  const rows = await svc.count("merchant_settlements");
  for (const [path, body, param] of cases) {
    const r = await svc.call("PUT", path, { auth: m.liveKey, body });
    expect({ path, status: r.status, param: r.body.error?.param }).toEqual({ path, status: 400, param });
  }
  expect(await svc.count("merchant_settlements")).toBe(rows);
  expect((await svc.call("PUT", "/settlement-addresses/31337", { auth: m.sandboxKey, body: { address: ADDR } })).status).toBe(200);
});
