import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { getAddress } from "viem";
import { startTestService, TEST_PRODUCTION_SETTLEMENT, type TestService } from "../../../testing/service.ts";
import { predictDepositAddress, predictedTestUsdtAddress, predictedTokenAddress, sessionSalt } from "../../../shared/contracts/addresses.ts";
import { DEFAULT_SANDBOX_SETTLEMENT } from "../config.ts";

let svc: TestService;
let key: string;
let liveKey: string;
beforeAll(async () => {
  svc = await startTestService();
  ({ sandboxKey: key, liveKey } = await svc.merchant("Acme"));
});
afterAll(async () => {
  await svc.close();
});

describe("create", () => {
  test("returns 201 with id, fresh token and the merchant's fields", async () => {
    const a = await svc.call("POST", "/payment-sessions", {
      auth: key,
      body: { amount: "12.34", currency: "USD", metadata: { orderId: "42" }, referenceId: "order_42", expiresInSeconds: 600 },
    });
    expect(a.status).toBe(201);
    expect(a.body.paymentSessionId).toMatch(/^ps_[0-9A-Za-z]{24}$/);
    expect(a.body.paymentSessionToken).toMatch(/^pst_test_[0-9A-Za-z]{40}$/);
    expect(a.body).toMatchObject({
      status: "PENDING",
      statusReason: "created",
      amount: "12.34",
      currency: "USD",
      environment: "sandbox",
      referenceId: "order_42",
      metadata: { orderId: "42" },
    });
    expect(a.body.merchantId).toMatch(/^mch_test_/);
    const created = Date.parse(a.body.createdAt);
    expect(Date.parse(a.body.expiresAt) - created).toBe(600_000);
    expect(Date.parse(a.body.tokenExpiresAt) - Date.parse(a.body.expiresAt)).toBe(3600_000);
    const b = await svc.call("POST", "/payment-sessions", { auth: key, body: { amount: "12.34", currency: "USD" } });
    expect(b.body.paymentSessionToken).not.toBe(a.body.paymentSessionToken);
    expect(b.body.paymentSessionId).not.toBe(a.body.paymentSessionId);
    expect(Date.parse(b.body.expiresAt) - Date.parse(b.body.createdAt)).toBe(1800_000);
  });

  test("lower-case currency is accepted and normalized", async () => {
    const r = await svc.call("POST", "/payment-sessions", { auth: key, body: { amount: "1.00", currency: "usd" } });
    expect(r.status).toBe(201);
    expect(r.body.currency).toBe("USD");
  });

  test("the token is stored only as a hash", async () => {
    const r = await svc.call("POST", "/payment-sessions", { auth: key, body: { amount: "5.00", currency: "USD" } });
    const rows = await svc.services.database.sql`select token_hash from app.payment_sessions where id = ${r.body.paymentSessionId}`;
    expect(rows[0]!.token_hash).toMatch(/^[0-9a-f]{64}$/);
    const leaked = await svc.services.database.sql.unsafe(
      `select count(*)::int as n from app.payment_sessions where token_hash = $1 or metadata::text like $2`,
      [r.body.paymentSessionToken, `%${r.body.paymentSessionToken}%`],
    );
    expect(leaked[0]!.n).toBe(0);
  });
});

describe("deposit addresses", () => {
  test("each session gets its CREATE2 deposit address on every network of its environment, registered as watched", async () => {
    const a = await svc.call("POST", "/payment-sessions", { auth: key, body: { amount: "12.34", currency: "USD" } });
    expect(a.body.networks).toEqual([
      {
        chainId: 31337,
        network: "Local test network (anvil)",
        tokenAddress: getAddress(predictedTokenAddress()),
        tokenSymbol: "TUSD",
        decimals: 6,
        depositAddress: getAddress(
          predictDepositAddress({
            settlement: getAddress(DEFAULT_SANDBOX_SETTLEMENT),
            sessionSalt: sessionSalt(a.body.paymentSessionId),
          }),
        ),
        amountBaseUnits: "12340000",
        confirmations: 1,
        // Every stablecoin the local network accepts, each with the amount in its own base units.
        tokens: [
          { tokenAddress: getAddress(predictedTokenAddress()), tokenSymbol: "TUSD", decimals: 6, amountBaseUnits: "12340000" },
          { tokenAddress: getAddress(predictedTestUsdtAddress()), tokenSymbol: "tUSDT", decimals: 6, amountBaseUnits: "12340000" },
        ],
        settlementAddress: getAddress(DEFAULT_SANDBOX_SETTLEMENT),
      },
    ]);
    const b = await svc.call("POST", "/payment-sessions", { auth: key, body: { amount: "12.34", currency: "USD" } });
    expect(b.body.networks[0].depositAddress).not.toBe(a.body.networks[0].depositAddress);
    const watched = await svc.services.database.sql`select kind from app.watched_addresses where address = ${a.body.networks[0].depositAddress.toLowerCase()}`;
    expect(watched.map((w) => w.kind)).toEqual(["deposit"]);
    // Retrieve and list show the same networks.
    const r = await svc.call("GET", `/payment-sessions/${a.body.paymentSessionId}`, { auth: key });
    expect(r.body.networks).toEqual(a.body.networks);
  });

  test("production: the merchant's settlement address; none set is a clear 409 and nothing is written", async () => {
    const live = await svc.call("POST", "/payment-sessions", { auth: liveKey, body: { amount: "5.00", currency: "USD" } });
    expect(live.status).toBe(201);
    expect(live.body.networks.map((n: { chainId: number }) => n.chainId)).toEqual([8453]);
    expect(live.body.networks[0].depositAddress).toBe(
      getAddress(predictDepositAddress({ settlement: getAddress(TEST_PRODUCTION_SETTLEMENT), sessionSalt: sessionSalt(live.body.paymentSessionId) })),
    );
    const bare = await svc.merchant("No settlement");
    await svc.services.database.sql`delete from app.merchant_settlements where merchant_id = ${bare.merchant.id}`;
    const before = await svc.count("payment_sessions");
    const refused = await svc.call("POST", "/payment-sessions", { auth: bare.liveKey, body: { amount: "5.00", currency: "USD" } });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("settlement_address_missing");
    expect(await svc.count("payment_sessions")).toBe(before);
    // Sandbox works without one: the default sandbox settlement address.
    expect((await svc.call("POST", "/payment-sessions", { auth: bare.sandboxKey, body: { amount: "5.00", currency: "USD" } })).status).toBe(201);
  });
});

describe("retrieve", () => {
  test("returns the session with its history", async () => {
    const c = await svc.call("POST", "/payment-sessions", { auth: key, body: { amount: "7.50", currency: "USD" } });
    const r = await svc.call("GET", `/payment-sessions/${c.body.paymentSessionId}`, { auth: key });
    expect(r.status).toBe(200);
    expect(r.body.paymentSessionToken).toBeUndefined();
    expect(r.body.amount).toBe("7.50");
    expect(r.body.history).toEqual([
      { sequence: 1, status: "PENDING", previousStatus: null, reason: "created", detail: {}, at: c.body.createdAt },
    ]);
  });

  test("unknown id and the other environment's sessions are 404", async () => {
    const c = await svc.call("POST", "/payment-sessions", { auth: key, body: { amount: "7.50", currency: "USD" } });
    expect((await svc.call("GET", "/payment-sessions/ps_doesnotexist", { auth: key })).body.error.code).toBe("resource_not_found");
    const other = await svc.call("GET", `/payment-sessions/${c.body.paymentSessionId}`, { auth: liveKey });
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe("resource_not_found");
  });
});

describe("list", () => {
  test("pages through every session newest first, filters by status", async () => {
    const m = await svc.merchant("Lister");
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const r = await svc.call("POST", "/payment-sessions", { auth: m.sandboxKey, body: { amount: `${i + 1}.00`, currency: "USD" } });
      ids.push(r.body.paymentSessionId);
    }
    await svc.call("POST", `/payment-sessions/${ids[2]}/cancel`, { auth: m.sandboxKey });
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = `/payment-sessions?limit=3${cursor ? `&startingAfter=${cursor}` : ""}`;
      const page = await svc.call("GET", q, { auth: m.sandboxKey });
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((s: { paymentSessionId: string }) => s.paymentSessionId));
      expect(page.body.hasMore).toBe(page.body.nextCursor !== null);
      cursor = page.body.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());
    const canceled = await svc.call("GET", "/payment-sessions?status=CANCELED", { auth: m.sandboxKey });
    expect(canceled.body.data.map((s: { paymentSessionId: string }) => s.paymentSessionId)).toEqual([ids[2]]);
    // Another merchant's list does not include them.
    const mine = await svc.call("GET", "/payment-sessions?limit=100", { auth: key });
    expect(mine.body.data.some((s: { paymentSessionId: string }) => ids.includes(s.paymentSessionId))).toBe(false);
  });

  test("bad list parameters are 400 with the param named", async () => {
    for (const [q, param] of [
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["limit=abc", "limit"],
      ["status=PAID", "status"],
      ["startingAfter=ps_nope", "startingAfter"],
    ] as const) {
      const r = await svc.call("GET", `/payment-sessions?${q}`, { auth: key });
      expect(r.status).toBe(400);
      expect(r.body.error.param).toBe(param);
    }
  });
});

describe("cancel", () => {
  test("merchant cancels a pending session once; a second cancel is 409", async () => {
    const c = await svc.call("POST", "/payment-sessions", { auth: key, body: { amount: "3.00", currency: "USD" } });
    const id = c.body.paymentSessionId;
    const r = await svc.call("POST", `/payment-sessions/${id}/cancel`, { auth: key });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("CANCELED");
    expect(r.body.statusReason).toBe("canceled_by_merchant");
    expect(r.body.history.map((h: { status: string }) => h.status)).toEqual(["PENDING", "CANCELED"]);
    const again = await svc.call("POST", `/payment-sessions/${id}/cancel`, { auth: key });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("session_not_cancelable");
    const events = await svc.services.database.sql`select sequence from app.session_events where session_id = ${id} order by sequence`;
    expect(events.map((e) => e.sequence)).toEqual([1, 2]);
  });

  test("payer cancels with the session token", async () => {
    const c = await svc.call("POST", "/payment-sessions", { auth: key, body: { amount: "3.00", currency: "USD" } });
    const r = await svc.call("POST", "/api/payment-sessions/cancel", { auth: c.body.paymentSessionToken });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("CANCELED");
    const m = await svc.call("GET", `/payment-sessions/${c.body.paymentSessionId}`, { auth: key });
    expect(m.body.statusReason).toBe("canceled_by_payer");
  });

  test("concurrent cancels: exactly one succeeds, one event written", async () => {
    const c = await svc.call("POST", "/payment-sessions", { auth: key, body: { amount: "3.00", currency: "USD" } });
    const id = c.body.paymentSessionId;
    const results = await Promise.all([
      svc.call("POST", `/payment-sessions/${id}/cancel`, { auth: key }),
      svc.call("POST", `/payment-sessions/${id}/cancel`, { auth: key }),
      svc.call("POST", "/api/payment-sessions/cancel", { auth: c.body.paymentSessionToken }),
    ]);
    expect(results.filter((r) => r.status === 200).length).toBe(1);
    expect(results.filter((r) => r.status === 409).length).toBe(2);
    const events = await svc.services.database.sql`select count(*)::int as n from app.session_events where session_id = ${id}`;
    expect(events[0]!.n).toBe(2);
  });
});

describe("public view", () => {
  test("shows what a checkout needs and nothing the merchant keeps private", async () => {
    const c = await svc.call("POST", "/payment-sessions", {
      auth: key,
      body: { amount: "9.99", currency: "USD", metadata: { secret: "internal" }, referenceId: "ref_1" },
    });
    const r = await svc.call("GET", "/api/payment-sessions", { auth: c.body.paymentSessionToken });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      paymentSessionId: c.body.paymentSessionId,
      status: "PENDING",
      amount: "9.99",
      currency: "USD",
      environment: "sandbox",
      statusReason: "created",
      merchantName: "Acme",
      // Public (NEXT_PUBLIC_SERVICE_MERCHANT_ID): the SDK checks the session is its merchant's.
      merchantId: c.body.merchantId,
      expiresAt: c.body.expiresAt,
      createdAt: c.body.createdAt,
      tokenExpiresAt: c.body.tokenExpiresAt,
      // The merchant's view also says where the funds settle; the payer's does not. It has what
      // a wallet needs to add the network (the RPC address given to payers' wallets).
      networks: c.body.networks.map(({ settlementAddress: _, ...n }: Record<string, unknown>) => ({
        ...n,
        rpcUrl: "http://127.0.0.1:9",
        nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
        explorerUrl: null,
        // What to sign to pay by authorization: none here, the network's RPC does not answer.
        gasless: null,
      })),
      payments: [],
    });
    expect(r.body.networks.length).toBe(1);
    expect(r.headers.get("access-control-allow-origin")).toBe("*");
  });

  test("conditional polling: the ETag answers 304 while nothing changed, 200 once the status did", async () => {
    const c = await svc.call("POST", "/payment-sessions", { auth: key, body: { amount: "5.00", currency: "USD" } });
    const token = c.body.paymentSessionToken;
    const first = await svc.call("GET", "/api/payment-sessions", { auth: token });
    const etag = first.headers.get("etag")!;
    expect(etag).toMatch(/^W\/"/);
    const same = await svc.call("GET", "/api/payment-sessions", { auth: token, headers: { "if-none-match": etag } });
    expect(same.status).toBe(304);
    expect(same.body).toBe("");
    expect((await svc.call("POST", "/api/payment-sessions/cancel", { auth: token, body: {} })).status).toBe(200);
    const changed = await svc.call("GET", "/api/payment-sessions", { auth: token, headers: { "if-none-match": etag } });
    expect(changed.status).toBe(200);
    expect([changed.body.status, changed.body.statusReason]).toEqual(["CANCELED", "canceled_by_payer"]);
  });

  test("CORS preflight on /api/ only; server endpoints send no CORS headers", async () => {
    const pre = await fetch(`${svc.url}/api/payment-sessions`, {
      method: "OPTIONS",
      headers: { origin: "https://shop.example", "access-control-request-method": "GET", "access-control-request-headers": "authorization" },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-headers")).toContain("authorization");
    const server = await svc.call("GET", "/payment-sessions", { auth: key, headers: { origin: "https://shop.example" } });
    expect(server.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("health and docs", () => {
  test("healthz, readyz, swagger json lists every route with both auth schemes", async () => {
    expect((await svc.call("GET", "/healthz")).body).toEqual({ status: "ok" });
    const ready = (await svc.call("GET", "/readyz")).body;
    expect(ready.status).toBe("ready");
    expect(ready.networks.map((n: { key: string; ready: boolean }) => [n.key, n.ready])).toEqual([["local", true], ["base", true]]);
    const spec = (await svc.call("GET", "/docs/json")).body;
    expect(Object.keys(spec.components.securitySchemes).sort()).toEqual(["apiKey", "sessionToken"]);
    for (const [path, method] of [
      ["/payment-sessions", "post"],
      ["/payment-sessions", "get"],
      ["/payment-sessions/{id}", "get"],
      ["/payment-sessions/{id}/cancel", "post"],
      ["/api/payment-sessions", "get"],
      ["/api/payment-sessions/cancel", "post"],
    ] as const) {
      const op = spec.paths[path]?.[method];
      expect(op).toBeDefined();
      expect(op.responses["401"].content["application/json"].example.error.code).toBeString();
    }
    expect(spec.paths["/payment-sessions"].post.requestBody.content["application/json"].schema.properties.amount.examples).toEqual(["12.34"]);
    const ui = await fetch(`${svc.url}/docs`);
    expect(ui.status).toBe(200);
    expect(await ui.text()).toContain("swagger");
  });
});
