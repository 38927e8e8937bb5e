/**
 * The checkout's sandbox helpers under /api/sandbox/: what they refuse. (What they do, on a
 * real chain, is shown in Chromium by api/src/checkout/checkout.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { PAYER_FAUCET_BURST } from "./payer-sandbox.ts";
import { predictedTestUsdtAddress } from "../../../shared/contracts/deploy.ts";

let svc: TestService;
let keys: Awaited<ReturnType<TestService["merchant"]>>;
beforeAll(async () => {
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false" });
  keys = await svc.merchant("Shop");
});
afterAll(() => svc.close());

const session = async (key: string) => (await svc.call("POST", "/payment-sessions", { auth: key, body: { amount: "3.00", currency: "USD" } })).body;

describe("payer sandbox helpers", () => {
  test("a production token: they do not exist (404), and nothing is minted", async () => {
    const s = await session(keys.liveKey);
    for (const path of ["/api/sandbox/faucet", "/api/sandbox/pay"]) {
      const r = await svc.call("POST", path, { auth: s.paymentSessionToken, body: { address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" } });
      expect([r.status, r.body.error.code]).toEqual([404, "route_not_found"]);
    }
  });

  test("bad input is a 4xx naming the parameter", async () => {
    const s = await session(keys.sandboxKey);
    const t = s.paymentSessionToken;
    const bad = async (body: unknown) => (await svc.call("POST", "/api/sandbox/faucet", { auth: t, body })).body.error;
    expect(await bad({})).toMatchObject({ code: "parameter_missing", param: "address" });
    expect(await bad({ address: "0x123" })).toMatchObject({ code: "parameter_invalid", param: "address" });
    expect(await bad({ address: "0x70997970c51812dc3a010c7d01b50e0d17dc79C8" })).toMatchObject({ code: "address_checksum_invalid" });
    expect(await bad({ address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", chainId: 1 })).toMatchObject({ code: "parameter_invalid", param: "chainId" });
  });

  test("tokenAddress: one of the session's stablecoins on that network is taken (the main one by default); any other is a 400 naming it, nothing minted", async () => {
    const s = await session(keys.sandboxKey);
    const t = s.paymentSessionToken;
    const tokens = s.networks[0].tokens as { tokenAddress: string; tokenSymbol: string }[];
    expect(tokens.map((x) => x.tokenSymbol)).toEqual(["TUSD", "tUSDT"]);
    const payer = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
    const faucet = (body: Record<string, unknown>) => svc.call("POST", "/api/sandbox/faucet", { auth: t, body: { address: payer, ...body } });

    // Refused before anything is minted or counted: not an address, a wrong checksum, a token the session does not take.
    const bad = async (tokenAddress: unknown) => {
      const r = await faucet({ tokenAddress });
      return { status: r.status, ...r.body.error };
    };
    expect(await bad("0x123")).toMatchObject({ status: 400, code: "parameter_invalid", param: "tokenAddress" });
    expect(await bad(42)).toMatchObject({ status: 400, code: "parameter_invalid", param: "tokenAddress" });
    expect(await bad("0xb18f89e5e0eca73d3da7a8e327f5ead35955a8F9")).toMatchObject({ status: 400, code: "address_checksum_invalid", param: "tokenAddress" });
    const other = await bad("0x2222222222222222222222222222222222222222");
    expect(other).toMatchObject({ status: 400, code: "parameter_invalid", param: "tokenAddress" });
    expect(other.message).toContain(`tUSDT ${predictedTestUsdtAddress()}`);

    // Taken (in any case): it goes on to the chain, which does not answer here (503), and counts one use each.
    expect((await faucet({ tokenAddress: predictedTestUsdtAddress() })).body.error.code).toBe("network_unavailable");
    expect((await faucet({ tokenAddress: predictedTestUsdtAddress().toLowerCase(), chainId: 31337 })).body.error.code).toBe("network_unavailable");
    expect((await faucet({ tokenAddress: tokens[0]!.tokenAddress })).body.error.code).toBe("network_unavailable");
    // Three uses so far, the refusals not among them: the next is limited.
    expect((await faucet({})).body.error.code).toBe("rate_limited");
  });

  test(`rate-limited per session: ${PAYER_FAUCET_BURST} calls, then 429 with Retry-After; another session has its own`, async () => {
    const a = (await session(keys.sandboxKey)).paymentSessionToken;
    const b = (await session(keys.sandboxKey)).paymentSessionToken;
    // This service's test network does not answer (closed port): each use is a 503 to retry, never a 500.
    const call = (t: string) => svc.call("POST", "/api/sandbox/faucet", { auth: t, body: { address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" } });
    for (let i = 0; i < PAYER_FAUCET_BURST; i++) expect((await call(a)).body.error.code).toBe("network_unavailable");
    const limited = await call(a);
    expect([limited.status, limited.body.error.code]).toEqual([429, "rate_limited"]);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await call(b)).body.error.code).toBe("network_unavailable");
  });

  test("pay: only while PENDING", async () => {
    const s = await session(keys.sandboxKey);
    await svc.call("POST", "/api/payment-sessions/cancel", { auth: s.paymentSessionToken, body: {} });
    const r = await svc.call("POST", "/api/sandbox/pay", { auth: s.paymentSessionToken, body: {} });
    expect([r.status, r.body.error.code]).toEqual([409, "session_not_pending"]);
  });
});
