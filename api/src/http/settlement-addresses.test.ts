import { afterAll, beforeAll, expect, test } from "bun:test";
import { getAddress } from "viem";
import { startTestService, TEST_PRODUCTION_SETTLEMENT, type TestService } from "../../../testing/service.ts";

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
  expect(set.body).toMatchObject({ chainId: 8453, address: ADDR, isDefault: false });
  const list = await svc.call("GET", "/settlement-addresses", { auth: m.liveKey });
  expect(list.body.data.map((d: { address: string }) => d.address)).toEqual([ADDR]);
  const after = await svc.call("POST", "/payment-sessions", { auth: m.liveKey, body: { amount: "1.00", currency: "USD" } });
  const dep = await svc.services.database.sql`select session_id, settlement_address from app.session_deposits where session_id in ${svc.services.database.sql([before.body.paymentSessionId, after.body.paymentSessionId])} order by session_id = ${after.body.paymentSessionId}`;
  expect(dep.map((d) => d.settlement_address)).toEqual(["0x2222222222222222222222222222222222222222", ADDR.toLowerCase()]);
  const watched = await svc.services.database.sql`select kind from app.watched_addresses where address = ${ADDR.toLowerCase()}`;
  expect(watched.length).toBe(1);
  // Environments are separate: the sandbox list shows only the server's default.
  expect((await svc.call("GET", "/settlement-addresses", { auth: m.sandboxKey })).body.data).toEqual([
    { chainId: 31337, network: "Local test network (anvil)", address: getAddress(svc.config.sandboxSettlementAddress), isDefault: true, updatedAt: null },
  ]);
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

test("a sandbox merchant that set nothing sees where its funds go: the default address, per network and in each session", async () => {
  const m = await svc.merchant("Newcomer");
  const fallback = getAddress(svc.config.sandboxSettlementAddress);
  const list = await svc.call("GET", "/settlement-addresses", { auth: m.sandboxKey });
  expect(list.body.data).toEqual([{ chainId: 31337, network: "Local test network (anvil)", address: fallback, isDefault: true, updatedAt: null }]);
  const live = await svc.call("GET", "/settlement-addresses", { auth: m.liveKey });
  expect(live.body.data).toEqual([{ chainId: 8453, network: "Base", address: getAddress(TEST_PRODUCTION_SETTLEMENT), isDefault: false, updatedAt: expect.any(String) }]);

  const s = await svc.call("POST", "/payment-sessions", { auth: m.sandboxKey, body: { amount: "1.00", currency: "USD" } });
  expect(s.body.networks[0].settlementAddress).toBe(fallback);
  const got = await svc.call("GET", `/payment-sessions/${s.body.paymentSessionId}`, { auth: m.sandboxKey });
  expect(got.body.networks[0].settlementAddress).toBe(fallback);
  // The payer's view has no use for it.
  const pub = await svc.call("GET", "/api/payment-sessions", { auth: s.body.paymentSessionToken });
  expect(pub.body.networks[0].settlementAddress).toBeUndefined();

  // Once set, it is the merchant's, and no longer the default.
  await svc.call("PUT", "/settlement-addresses/31337", { auth: m.sandboxKey, body: { address: ADDR.toLowerCase() } });
  const after = await svc.call("GET", "/settlement-addresses", { auth: m.sandboxKey });
  expect(after.body.data).toEqual([{ chainId: 31337, network: "Local test network (anvil)", address: ADDR, isDefault: false, updatedAt: expect.any(String) }]);
  const s2 = await svc.call("POST", "/payment-sessions", { auth: m.sandboxKey, body: { amount: "1.00", currency: "USD" } });
  expect(s2.body.networks[0].settlementAddress).toBe(ADDR);
});

test("addresses leave the API in EIP-55 checksum form (sessions, lists, events) and are stored lowercase", async () => {
  const m = await svc.merchant("Checksums");
  const s = await svc.call("POST", "/payment-sessions", { auth: m.sandboxKey, body: { amount: "1.00", currency: "USD" } });
  const isChecksummed = (a: string) => a === getAddress(a) && a !== a.toLowerCase();
  const views = [
    s.body,
    (await svc.call("GET", `/payment-sessions/${s.body.paymentSessionId}`, { auth: m.sandboxKey })).body,
    (await svc.call("GET", "/payment-sessions", { auth: m.sandboxKey })).body.data[0],
    (await svc.call("GET", "/api/payment-sessions", { auth: s.body.paymentSessionToken })).body,
  ];
  const events = await svc.call("GET", `/events?paymentSessionId=${s.body.paymentSessionId}`, { auth: m.sandboxKey });
  views.push(events.body.data[0].data, (await svc.call("GET", `/events/${events.body.data[0].id}`, { auth: m.sandboxKey })).body.data);
  for (const v of views) {
    expect(v.networks.length).toBeGreaterThan(0);
    for (const n of v.networks) {
      expect(isChecksummed(n.depositAddress)).toBe(true);
      expect(isChecksummed(n.tokenAddress)).toBe(true);
      if (n.settlementAddress !== undefined) expect(isChecksummed(n.settlementAddress)).toBe(true);
    }
  }
  const [dep] = await svc.services.database.sql`select address, settlement_address, token_address from app.session_deposits where session_id = ${s.body.paymentSessionId}`;
  for (const a of Object.values(dep!)) expect(a).toBe(String(a).toLowerCase());
});

test("a mixed-case address with a wrong checksum is refused (400 address_checksum_invalid); lowercase and uppercase are taken", async () => {
  const m = await svc.merchant("Typo");
  const wrong = ADDR.slice(0, -1) + "c"; // ...79C8 -> ...79Cc: mixed case, checksum broken
  for (const [path, body] of [
    ["/settlement-addresses/31337", { address: wrong }],
    ["/sandbox/faucet", { address: wrong }],
  ] as const) {
    const r = await svc.call(path.startsWith("/sandbox") ? "POST" : "PUT", path, { auth: m.sandboxKey, body });
    expect({ path, status: r.status, code: r.body.error?.code, param: r.body.error?.param }).toEqual({ path, status: 400, code: "address_checksum_invalid", param: "address" });
  }
  expect(await svc.count("merchant_settlements")).toBeGreaterThan(0);
  const upper = "0x" + ADDR.slice(2).toUpperCase();
  for (const address of [ADDR.toLowerCase(), upper, ADDR]) {
    const r = await svc.call("PUT", "/settlement-addresses/31337", { auth: m.sandboxKey, body: { address } });
    expect({ address, status: r.status, got: r.body.address }).toEqual({ address, status: 200, got: ADDR });
  }
  const [row] = await svc.services.database.sql`select address from app.merchant_settlements where merchant_id = ${m.merchant.id} and chain_id = 31337`;
  expect(row!.address).toBe(ADDR.toLowerCase());
});
