import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { freePort } from "../../../testing/ports.ts";
import { displayPrefix, hashSecret, mintCredential } from "../credentials/format.ts";
import { createApiKey, listApiKeys, revokeApiKey } from "../credentials/store.ts";

let svc: TestService;
let acme: Awaited<ReturnType<TestService["merchant"]>>;
let globex: Awaited<ReturnType<TestService["merchant"]>>;
beforeAll(async () => {
  svc = await startTestService();
  acme = await svc.merchant("Acme");
  globex = await svc.merchant("Globex");
});
afterAll(async () => {
  await svc.close();
});

const create = (auth: string) => svc.call("POST", "/payment-sessions", { auth, body: { amount: "10.00", currency: "USD" } });

describe("API key matrix", () => {
  test("each bad credential gets its own documented error, and nothing is written", async () => {
    const before = await svc.count("payment_sessions");
    const token = (await create(acme.sandboxKey)).body.paymentSessionToken as string;
    const cases: [string, Record<string, string>, number, string][] = [
      ["missing", {}, 401, "credentials_missing"],
      ["empty", { authorization: "" }, 401, "credentials_missing"],
      ["basic scheme", { authorization: `Basic ${btoa("a:b")}` }, 401, "credentials_malformed"],
      ["garbage", { authorization: "Bearer hello" }, 401, "credentials_malformed"],
      ["truncated key", { authorization: `Bearer ${acme.sandboxKey.slice(0, -1)}` }, 401, "credentials_malformed"],
      ["unknown key", { authorization: `Bearer ${mintCredential("api_key", "sandbox")}` }, 401, "api_key_invalid"],
      ["session token", { authorization: `Bearer ${token}` }, 401, "api_key_required"],
    ];
    for (const [name, headers, status, code] of cases) {
      const r = await svc.call("POST", "/payment-sessions", { headers, body: { amount: "10.00", currency: "USD" } });
      expect({ name, status: r.status, code: r.body.error?.code }).toEqual({ name, status, code });
      expect(r.body.error.requestId).toMatch(/^req_/);
      expect(r.headers.get("request-id")).toBe(r.body.error.requestId);
    }
    expect(await svc.count("payment_sessions")).toBe(before + 1);
  });

  test("a revoked key is refused from the very next request; its sibling keeps working", async () => {
    const m = await svc.merchant("Revoker");
    const second = await createApiKey(svc.services.database.db, m.merchant.id, "sandbox", "second");
    expect((await create(m.sandboxKey)).status).toBe(201);
    const keys = await listApiKeys(svc.services.database.db, m.merchant.id);
    const first = keys.find((k) => k.name === "test" && k.environment === "sandbox")!;
    expect(first.prefix).toBe(m.sandboxKey.slice(0, 12));
    expect(await revokeApiKey(svc.services.database.db, m.merchant.id, first.id)).toBeDefined();
    const r = await create(m.sandboxKey);
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe("api_key_revoked");
    expect((await create(second.secret)).status).toBe(201);
    // Revoking twice or another merchant's key does nothing.
    expect(await revokeApiKey(svc.services.database.db, m.merchant.id, first.id)).toBeUndefined();
    expect(await revokeApiKey(svc.services.database.db, acme.merchant.id, second.key.id)).toBeUndefined();
  });

  test("last-used time is recorded", async () => {
    const m = await svc.merchant("Toucher");
    await create(m.sandboxKey);
    await Bun.sleep(50);
    const keys = await listApiKeys(svc.services.database.db, m.merchant.id);
    expect(keys.find((k) => k.environment === "sandbox")!.lastUsedAt).toBeInstanceOf(Date);
    expect(keys.find((k) => k.environment === "production")!.lastUsedAt).toBeNull();
  });

  test("another merchant's session is 404 for retrieve and cancel, and stays PENDING", async () => {
    const c = await create(acme.sandboxKey);
    const id = c.body.paymentSessionId;
    for (const [method, path] of [
      ["GET", `/payment-sessions/${id}`],
      ["POST", `/payment-sessions/${id}/cancel`],
    ] as const) {
      const r = await svc.call(method, path, { auth: globex.sandboxKey });
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe("resource_not_found");
    }
    expect((await svc.call("GET", `/payment-sessions/${id}`, { auth: acme.sandboxKey })).body.status).toBe("PENDING");
  });

  test("sandbox and production data never mix", async () => {
    const live = await create(acme.liveKey);
    expect(live.body.environment).toBe("production");
    expect(live.body.paymentSessionToken).toMatch(/^pst_live_/);
    expect(live.body.merchantId).toBe(acme.merchant.livePublicId);
    const sandboxList = await svc.call("GET", "/payment-sessions?limit=100", { auth: acme.sandboxKey });
    expect(sandboxList.body.data.every((s: { environment: string }) => s.environment === "sandbox")).toBe(true);
    expect((await svc.call("GET", `/payment-sessions/${live.body.paymentSessionId}`, { auth: acme.sandboxKey })).status).toBe(404);
  });
});

describe("a key's environment is its stored row's, not its prefix's", () => {
  test("a row whose environment disagrees with its prefix acts in the row's environment", async () => {
    const m = await svc.merchant("Mislabelled");
    // A key shaped like a sandbox key whose row says production (a hand-made or migrated row).
    const secret = mintCredential("api_key", "sandbox");
    await svc.services.database.sql`
      insert into app.api_keys (id, merchant_id, environment, name, prefix, key_hash)
      values (${"key_mislabel" + Date.now()}, ${m.merchant.id}, 'production', 'odd', ${displayPrefix(secret)}, ${hashSecret(secret)})`;
    const c = await create(secret);
    expect(c.status).toBe(201);
    expect(c.body.environment).toBe("production");
    expect(c.body.merchantId).toBe(m.merchant.livePublicId);
    // It sees production data and not sandbox data.
    const sandboxSession = await create(m.sandboxKey);
    expect((await svc.call("GET", `/payment-sessions/${sandboxSession.body.paymentSessionId}`, { auth: secret })).status).toBe(404);
    expect((await svc.call("GET", `/payment-sessions/${c.body.paymentSessionId}`, { auth: m.liveKey })).status).toBe(200);
    // Sandbox tools do not exist for it.
    expect((await svc.call("POST", "/sandbox/faucet", { auth: secret, body: { address: "0x00000000000000000000000000000000000000a1" } })).status).toBe(404);
  });
});

describe("session token scoping", () => {
  test("a token reads its own session only", async () => {
    const a = await create(acme.sandboxKey);
    const b = await create(acme.sandboxKey);
    const own = await svc.call("GET", `/api/payment-sessions?paymentSessionId=${a.body.paymentSessionId}`, { auth: a.body.paymentSessionToken });
    expect(own.status).toBe(200);
    expect(own.body.paymentSessionId).toBe(a.body.paymentSessionId);
    const other = await svc.call("GET", `/api/payment-sessions?paymentSessionId=${b.body.paymentSessionId}`, { auth: a.body.paymentSessionToken });
    expect(other.status).toBe(403);
    expect(other.body.error.code).toBe("session_token_mismatch");
    // Another merchant's session, named with this token: the same refusal, nothing leaked.
    const g = await create(globex.sandboxKey);
    const cross = await svc.call("GET", `/api/payment-sessions?paymentSessionId=${g.body.paymentSessionId}`, { auth: a.body.paymentSessionToken });
    expect(cross.status).toBe(403);
    expect(JSON.stringify(cross.body)).not.toContain("Globex");
  });

  test("an expired token is refused; an unknown one is invalid; an API key is not a token", async () => {
    const c = await create(acme.sandboxKey);
    await svc.services.database.sql`update app.payment_sessions set token_expires_at = now() - interval '1 second' where id = ${c.body.paymentSessionId}`;
    const r = await svc.call("GET", "/api/payment-sessions", { auth: c.body.paymentSessionToken });
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe("session_token_expired");
    const cancel = await svc.call("POST", "/api/payment-sessions/cancel", { auth: c.body.paymentSessionToken });
    expect(cancel.body.error.code).toBe("session_token_expired");
    expect((await svc.call("GET", `/payment-sessions/${c.body.paymentSessionId}`, { auth: acme.sandboxKey })).body.status).toBe("PENDING");
    const unknown = await svc.call("GET", "/api/payment-sessions", { auth: mintCredential("session_token", "sandbox") });
    expect(unknown.body.error.code).toBe("session_token_invalid");
    const key = await svc.call("GET", "/api/payment-sessions", { auth: acme.sandboxKey });
    expect(key.status).toBe(401);
    expect(key.body.error.code).toBe("session_token_required");
    // Errors on browser routes carry CORS headers so the page can read them.
    expect(key.headers.get("access-control-allow-origin")).toBe("*");
  });

  test("a token with its environment tag altered is invalid", async () => {
    const c = await create(acme.sandboxKey);
    const forged = c.body.paymentSessionToken.replace("pst_test_", "pst_live_");
    const r = await svc.call("GET", "/api/payment-sessions", { auth: forged });
    expect(r.body.error.code).toBe("session_token_invalid");
  });
});

describe("rate limit and environments by base address", () => {
  test("per-key rate limit answers 429 with Retry-After; other keys unaffected", async () => {
    const limited = await startTestService({ SERVICE_RATE_LIMIT_PER_SECOND: "1", SERVICE_RATE_LIMIT_BURST: "2" });
    try {
      const m = await limited.merchant();
      const other = await limited.merchant("Other");
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        statuses.push((await limited.call("GET", "/payment-sessions", { auth: m.sandboxKey })).status);
      }
      expect(statuses).toEqual([200, 200, 429]);
      const r = await limited.call("GET", "/payment-sessions", { auth: m.sandboxKey });
      expect(r.body.error.code).toBe("rate_limited");
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect((await limited.call("GET", "/payment-sessions", { auth: other.sandboxKey })).status).toBe(200);
    } finally {
      await limited.close();
    }
  });

  test("when the two base addresses differ, a credential at the other environment's address is 403", async () => {
    const port = await freePort();
    const split = await startTestService({
      SERVICE_PORT: String(port),
      SERVICE_PUBLIC_URL: `http://127.0.0.1:${port}`,
      SERVICE_SANDBOX_PUBLIC_URL: `http://localhost:${port}`,
    });
    try {
      const m = await split.merchant();
      const sandboxAtSandbox = await split.call("GET", "/payment-sessions", { auth: m.sandboxKey, base: `http://localhost:${port}` });
      expect(sandboxAtSandbox.status).toBe(200);
      const sandboxAtLive = await split.call("GET", "/payment-sessions", { auth: m.sandboxKey, base: `http://127.0.0.1:${port}` });
      expect(sandboxAtLive.status).toBe(403);
      expect(sandboxAtLive.body.error.code).toBe("environment_mismatch");
      const liveAtSandbox = await split.call("POST", "/payment-sessions", {
        auth: m.liveKey,
        base: `http://localhost:${port}`,
        body: { amount: "1.00", currency: "USD" },
      });
      expect(liveAtSandbox.body.error.code).toBe("environment_mismatch");
      expect(await split.count("payment_sessions")).toBe(0);
      expect((await split.call("GET", "/payment-sessions", { auth: m.liveKey, base: `http://127.0.0.1:${port}` })).status).toBe(200);
    } finally {
      await split.close();
    }
  });
});
