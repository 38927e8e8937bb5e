import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { requestHash } from "./idempotency.ts";
import { RECORD_SEAL, withIdempotency } from "../credentials/idempotency-keys.ts";
import { seal, unseal } from "../credentials/seal.ts";

let svc: TestService;
let key: string;
beforeAll(async () => {
  svc = await startTestService();
  key = (await svc.merchant()).sandboxKey;
});
afterAll(async () => {
  await svc.close();
});

const post = (idem: string, body: unknown, auth = key) =>
  svc.call("POST", "/payment-sessions", { auth, body, headers: { "idempotency-key": idem } });

describe("pure parts", () => {
  test("request hash ignores key order, not values", () => {
    expect(requestHash({ a: "1", b: { c: 1, d: 2 } })).toBe(requestHash({ b: { d: 2, c: 1 }, a: "1" }));
    expect(requestHash({ a: "1" })).not.toBe(requestHash({ a: "2" }));
  });
  test("seal and unseal round-trip; a wrong key cannot open", () => {
    const plain = '{"paymentSessionToken":"pst_test_visible"}';
    const [k1, k2] = [Buffer.alloc(32, 1), Buffer.alloc(32, 2)];
    const s = seal(k1, plain, RECORD_SEAL);
    expect(s).not.toContain("pst_test");
    expect(seal(k1, plain, RECORD_SEAL)).not.toBe(s); // a fresh IV every time
    expect(unseal(k1, s, RECORD_SEAL)).toBe(plain);
    expect(() => unseal(k2, s, RECORD_SEAL)).toThrow();
  });
});

describe("Idempotency-Key", () => {
  test("same key and body replays the first response, token included, and writes nothing", async () => {
    const body = { amount: "20.00", currency: "USD", metadata: { a: "1", b: "2" } };
    const first = await post("order-1", body);
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const rows = await svc.count("payment_sessions");
    const second = await post("order-1", { metadata: { b: "2", a: "1" }, currency: "USD", amount: "20.00" });
    expect(second.status).toBe(201);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.body).toEqual(first.body);
    expect(await svc.count("payment_sessions")).toBe(rows);
  });

  test("same key with a different body is 422 and writes nothing", async () => {
    await post("order-2", { amount: "20.00", currency: "USD" });
    const rows = await svc.count("payment_sessions");
    const r = await post("order-2", { amount: "21.00", currency: "USD" });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe("idempotency_key_reused");
    expect(r.body.error.param).toBe("Idempotency-Key");
    expect(await svc.count("payment_sessions")).toBe(rows);
  });

  test("concurrent duplicates create one session and all get its response", async () => {
    const rows = await svc.count("payment_sessions");
    const results = await Promise.all(Array.from({ length: 12 }, () => post("order-3", { amount: "30.00", currency: "USD" })));
    expect(results.every((r) => r.status === 201)).toBe(true);
    expect(new Set(results.map((r) => r.body.paymentSessionId)).size).toBe(1);
    expect(new Set(results.map((r) => r.body.paymentSessionToken)).size).toBe(1);
    expect(results.filter((r) => r.headers.get("idempotent-replayed") === "true").length).toBe(11);
    expect(await svc.count("payment_sessions")).toBe(rows + 1);
  });

  test("a failed first request leaves the key free", async () => {
    const bad = await post("order-4", { amount: "0.00", currency: "USD" });
    expect(bad.status).toBe(400);
    const good = await post("order-4", { amount: "4.00", currency: "USD" });
    expect(good.status).toBe(201);
  });

  test("keys are per merchant", async () => {
    const other = (await svc.merchant("Other")).sandboxKey;
    const a = await post("shared-key", { amount: "5.00", currency: "USD" });
    const b = await post("shared-key", { amount: "5.00", currency: "USD" }, other);
    expect(b.status).toBe(201);
    expect(b.body.paymentSessionId).not.toBe(a.body.paymentSessionId);
  });

  test("after 24 hours a key may be used afresh", async () => {
    const a = await post("old-key", { amount: "6.00", currency: "USD" });
    await svc.services.database.sql`update app.idempotency_keys set created_at = now() - interval '25 hours'`;
    const b = await post("old-key", { amount: "7.00", currency: "USD" });
    expect(b.status).toBe(201);
    expect(b.body.paymentSessionId).not.toBe(a.body.paymentSessionId);
  });

  test("the stored record holds neither the key nor the token in clear", async () => {
    const r = await post("secret-check-key", { amount: "8.00", currency: "USD" });
    const dump = await svc.services.database.sql`select row_to_json(i)::text as t from app.idempotency_keys i`;
    const all = dump.map((d) => d.t as string).join("\n");
    expect(all).not.toContain("secret-check-key");
    expect(all).not.toContain(r.body.paymentSessionToken);
    expect(all).not.toContain(r.body.paymentSessionId);
  });

  test("a database reader who guesses a low-entropy key finds neither the row nor the response (keyed with the service's secret)", async () => {
    const idem = "order-1042";
    const r = await post(idem, { amount: "9.00", currency: "USD" });
    expect(r.status).toBe(201);
    const rows = await svc.services.database.sql`select key_hash, request_hash, response_sealed from app.idempotency_keys`;
    // What a reader without SERVICE_ENCRYPTION_KEY can compute from the guessed key and body.
    const unkeyed = (purpose: string) => createHash("sha256").update(`paysession:idempotency:${purpose}:`).update(idem).digest();
    expect(rows.map((x) => x.key_hash)).not.toContain(unkeyed("lookup").toString("hex"));
    expect(rows.map((x) => x.request_hash)).not.toContain(requestHash({ amount: "9.00", currency: "USD" }));
    for (const row of rows) {
      const [iv, tag, ct] = (row.response_sealed as string).split(".").slice(-3).map((p) => Buffer.from(p, "base64")) as [Buffer, Buffer, Buffer];
      const d = createDecipheriv("aes-256-gcm", unkeyed("seal"), iv);
      d.setAuthTag(tag);
      expect(() => Buffer.concat([d.update(ct), d.final()])).toThrow();
    }
    // The same key still replays for its caller.
    expect((await post(idem, { amount: "9.00", currency: "USD" })).body.paymentSessionToken).toBe(r.body.paymentSessionToken);
  });

  test("a row stored before the keyed derivations (v1) still replays until it expires, and still refuses another body", async () => {
    const m = await svc.merchant("Upgraded");
    const first = await svc.call("POST", "/payment-sessions", { auth: m.sandboxKey, body: { amount: "3.00", currency: "USD" } });
    const idem = "order-before-upgrade";
    const v1 = (purpose: string) => createHash("sha256").update(`paysession:idempotency:${purpose}:`).update(idem).digest();
    const iv = randomBytes(12);
    const c = createCipheriv("aes-256-gcm", v1("seal"), iv);
    const ct = Buffer.concat([c.update(JSON.stringify(first.body), "utf8"), c.final()]);
    const sealed = [iv, c.getAuthTag(), ct].map((b) => b.toString("base64")).join(".");
    await svc.services.database.sql`
      insert into app.idempotency_keys (merchant_id, environment, key_hash, endpoint, request_hash, response_status, response_sealed)
      values (${m.merchant.id}, 'sandbox', ${v1("lookup").toString("hex")}, 'POST /payment-sessions',
              ${requestHash({ amount: "3.00", currency: "USD" })}, 201, ${sealed})`;
    const rows = await svc.count("payment_sessions");
    const again = await post(idem, { currency: "USD", amount: "3.00" }, m.sandboxKey);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body.paymentSessionToken).toBe(first.body.paymentSessionToken);
    expect((await post(idem, { amount: "4.00", currency: "USD" }, m.sandboxKey)).body.error.code).toBe("idempotency_key_reused");
    expect(await svc.count("payment_sessions")).toBe(rows);
  });

  test("grouped: many keyed creates at once share statements, each keeps its own key and answer", async () => {
    const before = { ...svc.services.creates.stats };
    const n = 40;
    const first = await Promise.all(Array.from({ length: n }, (_, i) => post(`grouped-${i}`, { amount: `${i + 1}.00`, currency: "USD" })));
    expect(first.map((r) => r.status)).toEqual(Array(n).fill(201));
    const stats = svc.services.creates.stats;
    expect(stats.items - before.items).toBe(n);
    expect(stats.batches - before.batches).toBeLessThan(n);
    expect(first.map((r) => r.body.amount)).toEqual(first.map((_, i) => `${i + 1}.00`));
    // Every key replays its own first answer, token included, again all at once.
    const again = await Promise.all(Array.from({ length: n }, (_, i) => post(`grouped-${i}`, { amount: `${i + 1}.00`, currency: "USD" })));
    expect(again.every((r) => r.headers.get("idempotent-replayed") === "true")).toBe(true);
    expect(again.map((r) => [r.body.paymentSessionId, r.body.paymentSessionToken])).toEqual(first.map((r) => [r.body.paymentSessionId, r.body.paymentSessionToken]));
  });

  test("grouped: in one burst, duplicates of a key, another body under a taken key, and two merchants sharing a key", async () => {
    const other = (await svc.merchant("Burst")).sandboxKey;
    const rows = await svc.count("payment_sessions");
    const burst = await Promise.all([
      ...Array.from({ length: 6 }, () => post("burst-dup", { amount: "7.00", currency: "USD" })),
      post("burst-dup", { amount: "8.00", currency: "USD" }),
      post("burst-shared", { amount: "9.00", currency: "USD" }),
      post("burst-shared", { amount: "9.00", currency: "USD" }, other),
    ]);
    const dups = burst.slice(0, 6);
    const otherBody = burst[6]!;
    // The key's first body wins; the other body is refused, or it won and the duplicates are refused.
    const winners = [...dups, otherBody].filter((r) => r.status === 201);
    expect(new Set(winners.map((r) => r.body.paymentSessionId)).size).toBe(1);
    expect(winners.filter((r) => r.headers.get("idempotent-replayed") !== "true").length).toBe(1);
    for (const r of [...dups, otherBody].filter((r) => r.status !== 201)) expect(r.body.error.code).toBe("idempotency_key_reused");
    const [mine, theirs] = [burst[7]!, burst[8]!];
    expect([mine.status, theirs.status]).toEqual([201, 201]);
    expect(mine.body.paymentSessionId).not.toBe(theirs.body.paymentSessionId);
    expect(await svc.count("payment_sessions")).toBe(rows + 3);
  });

  test("a replay is the first answer as it was, after the session moved on (rebuilt from the session: the record holds only its id and token)", async () => {
    const first = await post("replay-after-cancel", { amount: "2.50", currency: "USD", metadata: { b: "1", a: "2" } });
    expect(first.status).toBe(201);
    const canceled = await svc.call("POST", `/payment-sessions/${first.body.paymentSessionId}/cancel`, { auth: key, body: {} });
    expect(canceled.body.status).toBe("CANCELED");
    const again = await post("replay-after-cancel", { amount: "2.50", currency: "USD", metadata: { b: "1", a: "2" } });
    expect([again.status, again.headers.get("idempotent-replayed")]).toEqual([201, "true"]);
    expect(again.body).toEqual(first.body);
    expect(JSON.stringify(again.body)).toBe(JSON.stringify(first.body));
  });

  test("a record holding a whole answer (written by the build before) still replays that answer", async () => {
    const m = await svc.merchant("Whole answers");
    const stored = { paymentSessionId: "ps_from_the_build_before", status: "PENDING", amount: "3.00" };
    const ctx = { secret: svc.services.encryptionKey, merchantId: m.merchant.id, environment: "sandbox" as const, endpoint: "POST /payment-sessions" };
    await withIdempotency(svc.services.database.sql, ctx, "whole-answer", requestHash({ amount: "3.00", currency: "USD" }), async () => ({ status: 201, body: stored }));
    const rows = await svc.count("payment_sessions");
    const again = await post("whole-answer", { amount: "3.00", currency: "USD" }, m.sandboxKey);
    expect([again.status, again.headers.get("idempotent-replayed"), again.body]).toEqual([201, "true", stored]);
    expect((await post("whole-answer", { amount: "4.00", currency: "USD" }, m.sandboxKey)).body.error.code).toBe("idempotency_key_reused");
    expect(await svc.count("payment_sessions")).toBe(rows);
  });

  test("an unusable Idempotency-Key header is 400", async () => {
    for (const bad of ["", "x".repeat(256), "has space"]) {
      const r = await post(bad, { amount: "1.00", currency: "USD" });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("idempotency_key_invalid");
    }
  });
});
