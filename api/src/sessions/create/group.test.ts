import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../../../testing/service.ts";
import { newId } from "../../../../shared/ids.ts";
import { CREATE_GROUP_LIMITS, createGroup } from "./group.ts";
import { findSessionById } from "../repository.ts";
import { insertSessions, newSessionToken, type NewSession } from "./statement.ts";
import { apiKeyLookups, revokeApiKey } from "../../credentials/store.ts";
import { hashSecret } from "../../credentials/format.ts";

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
    expect(batches).toBeLessThan(n); // grouped (a batch leaves only while fewer than maxInFlight are out)
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

  test("the row a create answers with is the row stored (only the id, created_at and metadata come back from the insert)", async () => {
    const sql = svc.services.database.sql;
    const deposit = (i: number) => ({
      chainId: 31337,
      address: `0x${String(i).padStart(40, "a")}`,
      settlementAddress: `0x${"b".repeat(40)}`,
      tokenAddress: `0x${"c".repeat(40)}`,
      decimals: 6,
      requiredBaseUnits: 1_234_000n,
      confirmations: 1,
      tokens: [{ address: `0x${"c".repeat(40)}`, symbol: "TUSD", decimals: 6 }],
    });
    const inputs: { metadata: Record<string, string>; referenceId: string | null; expiresInSeconds: number }[] = [
      // jsonb stores keys shorter first, then by bytes: the answer must show them as stored.
      { metadata: { zeta: "1", a: "2", "ünï": "3", bb: "" }, referenceId: "ref-1", expiresInSeconds: 900 },
      { metadata: {}, referenceId: null, expiresInSeconds: 86_400 },
      { metadata: { orderId: "x\"y\\z" }, referenceId: "ref-3", expiresInSeconds: 60 },
    ];
    const list: NewSession[] = inputs.map((x, i) => ({
      id: newId("paymentSession"),
      merchantId,
      environment: "sandbox" as const,
      input: { amountMinor: BigInt(1000 + i), currency: "USD" as const, ...x },
      tokenGraceSeconds: 3600,
      deposits: [deposit(i)],
      token: newSessionToken("sandbox"),
    }));
    const created = (await insertSessions(sql, list)).map((c) => (c.written ? c : expect.unreachable()));
    expect(created.map((c) => c.row.id)).toEqual(list.map((a) => a.id));
    for (const c of created) {
      const stored = await findSessionById(svc.services.database.db, c.row.id);
      expect(c.row).toEqual(stored!);
      expect(Object.keys(c.row.metadata)).toEqual(Object.keys(stored!.metadata));
    }
    expect(Object.keys(created[0]!.row.metadata)).toEqual(["a", "bb", "zeta", "ünï"]);
    // And through the API: a create's answer, but for its token, is what a retrieve shows.
    const answerIsRetrieve = async (body: Record<string, any>) => {
      const read = await svc.call("GET", `/payment-sessions/${body.paymentSessionId}`, { auth: key });
      const { paymentSessionToken, tokenExpiresAt, ...answer } = body;
      const { history, ...retrieved } = read.body;
      expect(answer).toEqual(retrieved);
      expect(typeof paymentSessionToken).toBe("string");
      return { answer, tokenExpiresAt: tokenExpiresAt as string };
    };
    const made = await svc.call("POST", "/payment-sessions", { auth: key, body: { amount: "5.00", currency: "USD", metadata: { long: "1", s: "2" }, expiresInSeconds: 1200 } });
    expect(made.status).toBe(201);
    const { answer, tokenExpiresAt } = await answerIsRetrieve(made.body);
    expect(Date.parse(tokenExpiresAt) - Date.parse(answer.expiresAt)).toBe(3600 * 1000);
    // With an Idempotency-Key (its record holds the session's id and token): the answer, then its replay, rebuilt.
    const keyed = { auth: key, body: { amount: "6.00", currency: "USD", metadata: { second: "1", first: "2" } }, headers: { "idempotency-key": `row-test-${newId("event")}` } };
    const k1 = await svc.call("POST", "/payment-sessions", keyed);
    const k2 = await svc.call("POST", "/payment-sessions", keyed);
    expect([k1.status, k2.status, k2.headers.get("idempotent-replayed")]).toEqual([201, 201, "true"]);
    expect(k2.body).toEqual(k1.body);
    expect(Object.keys((await answerIsRetrieve(k1.body)).answer.metadata)).toEqual(["first", "second"]);
  });

  test("one create refused by a constraint or an unstorable value does not fail the others in its batch", async () => {
    const sql = svc.services.database.sql;
    const group = createGroup(sql, { maxBatch: 10, maxInFlight: 1 });
    const input = { amountMinor: 100n, currency: "USD" as const, metadata: {}, referenceId: null, expiresInSeconds: 600 };
    const session = (id: string): NewSession => ({ id, merchantId, environment: "sandbox", input, tokenGraceSeconds: 60, deposits: [], token: newSessionToken("sandbox") });
    const taken = newId("paymentSession");
    await group.submit(session(taken));
    // Two submitted in the same turn leave together: one reuses an id (primary key), one is fine.
    const fine = newId("paymentSession");
    const [dup, ok] = await Promise.allSettled([group.submit(session(taken)), group.submit(session(fine))]);
    expect(dup.status).toBe("rejected");
    expect(String((dup as PromiseRejectedResult).reason?.code)).toBe("23505");
    expect(ok.status).toBe("fulfilled");
    const written = (ok as PromiseFulfilledResult<Awaited<ReturnType<typeof group.submit>>>).value;
    expect(written.written && written.row.id).toBe(fine);
    expect(group.stats).toEqual({ batches: 2, items: 3 }); // the pair went as one batch before being written one by one
    const [row] = await sql`select count(*)::int as n from app.payment_sessions where id = any(${[taken, fine]})`;
    expect(row?.n).toBe(2);
    // A value Postgres cannot store (validation refuses NUL before this point; here it is let
    // through on purpose) fails its own create only.
    const bad = newId("paymentSession");
    const good = newId("paymentSession");
    const [nul, fine2] = await Promise.allSettled([
      group.submit({ ...session(bad), input: { ...input, metadata: { note: "a\u0000b" } } }),
      group.submit(session(good)),
    ]);
    expect(nul.status).toBe("rejected");
    expect(String((nul as PromiseRejectedResult).reason?.code)).toMatch(/^22/);
    expect(fine2.status).toBe("fulfilled");
  });

  test("two merchants creating at once: every session, event and delivery is its own merchant's", async () => {
    const other = await svc.merchant("Other");
    const hooks = await Promise.all(
      [key, other.sandboxKey].map((k, i) => svc.call("POST", "/webhook-endpoints", { auth: k, body: { url: `http://127.0.0.1:9/hook-${i}` } })),
    );
    const keys = [key, other.sandboxKey];
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) => svc.call("POST", "/payment-sessions", { auth: keys[i % 2]!, body: { amount: "2.00", currency: "USD", referenceId: `m${i % 2}-${i}` } })),
    );
    expect(answers.every((a) => a.status === 201)).toBe(true);
    const sql = svc.services.database.sql;
    const ids = answers.map((a) => a.body.paymentSessionId as string);
    const rows = await sql`
      select s.reference_id, s.merchant_id, e.merchant_id as event_merchant, array_agg(ep.merchant_id) as delivery_merchants
        from app.payment_sessions s
        join app.session_events e on e.session_id = s.id
        join app.webhook_deliveries d on d.session_id = s.id
        join app.webhook_endpoints ep on ep.id = d.endpoint_id
       where s.id = any(${ids})
       group by s.reference_id, s.merchant_id, e.merchant_id`;
    expect(rows.length).toBe(60);
    for (const r of rows) {
      const owner = r.reference_id.startsWith("m0-") ? merchantId : other.merchant.id;
      expect(r.delivery_merchants.length).toBeGreaterThan(0);
      expect(new Set([r.merchant_id, r.event_merchant, ...r.delivery_merchants])).toEqual(new Set([owner]));
    }
    // And each merchant's API sees only its own.
    for (const [i, k] of keys.entries()) {
      for (const a of answers.filter((_, j) => j % 2 !== i).slice(0, 5)) {
        expect((await svc.call("GET", `/payment-sessions/${a.body.paymentSessionId}`, { auth: k })).status).toBe(404);
      }
    }
    expect(hooks.every((h) => h.status === 201)).toBe(true);
  });

  test("key lookups in one batch, some asking for the same key (asked once): each request gets its own key's answer", async () => {
    const a = await svc.merchant("Lookup A");
    const b = await svc.merchant("Lookup B");
    const group = apiKeyLookups(svc.services.database.sql);
    const asked = [a.sandboxKey, b.sandboxKey, a.sandboxKey, "sk_test_nosuchkey0000000000000000", b.sandboxKey, a.sandboxKey];
    const found = await Promise.all(asked.map((k) => group.submit(hashSecret(k)))); // one turn: one batch
    expect(group.stats).toEqual({ batches: 1, items: asked.length });
    expect(found.map((f) => f?.merchant.id)).toEqual([a.merchant.id, b.merchant.id, a.merchant.id, undefined, b.merchant.id, a.merchant.id]);
    expect(found[0]!.key.id).toBe(found[2]!.key.id);
    expect(found[1]!.key.id).toBe(found[4]!.key.id);
    expect(found[0]!.key.id).not.toBe(found[1]!.key.id);
    // Requests with the same key share one answer: it cannot be changed by any of them.
    expect(Object.isFrozen(found[0]) && Object.isFrozen(found[0]!.key) && Object.isFrozen(found[0]!.merchant)).toBe(true);
  });

  test("a revoked key is refused from the next request on, grouped lookups or not", async () => {
    const m = await svc.merchant("Revoked soon");
    const before = await Promise.all(Array.from({ length: 20 }, () => svc.call("POST", "/payment-sessions", { auth: m.sandboxKey, body: { amount: "1.00", currency: "USD" } })));
    expect(before.every((a) => a.status === 201)).toBe(true);
    const [keyRow] = await svc.services.database.sql`select id from app.api_keys where merchant_id = ${m.merchant.id} and environment = 'sandbox'`;
    expect(await revokeApiKey(svc.services.database.db, m.merchant.id, keyRow!.id)).toBeDefined();
    const after = await Promise.all(Array.from({ length: 40 }, () => svc.call("POST", "/payment-sessions", { auth: m.sandboxKey, body: { amount: "1.00", currency: "USD" } })));
    expect(after.map((a) => a.body.error?.code)).toEqual(Array(40).fill("api_key_revoked"));
    // Refused before anything was written (the creates reused the key's last lookup: their insert checked the key).
    const [written] = await svc.services.database.sql`select count(*)::int as n from app.payment_sessions where merchant_id = ${m.merchant.id}`;
    expect(written!.n).toBe(20);
  });
});

describe("the request deadline under group commit", () => {
  let slow: TestService;
  afterAll(async () => {
    await slow?.close();
  });

  test("creates answered 503 while waiting for their batch are never written; those on the wire are waited for", async () => {
    slow = await startTestService({ SERVICE_REQUEST_TIMEOUT_MS: "500" });
    const { sandboxKey } = await slow.merchant("Slow");
    const sql = slow.services.database.sql;
    // Another transaction holds a lock that makes every insert into payment_sessions wait.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const holder = sql.begin(async (tx) => {
      await tx`lock table app.payment_sessions in share mode`;
      locked();
      await held;
    });
    await isLocked;
    const create = () => slow.call("POST", "/payment-sessions", { auth: sandboxKey, body: { amount: "1.00", currency: "USD" } });
    // As many batches as may be out go out, one create each, and wait on the lock; the next
    // creates queue behind them.
    const onWire: ReturnType<typeof create>[] = [];
    for (let i = 0; i < CREATE_GROUP_LIMITS.maxInFlight; i++) {
      onWire.push(create());
      await Bun.sleep(100);
    }
    const t0 = performance.now();
    const queued = await Promise.all(Array.from({ length: 8 }, () => create()));
    const queuedMs = performance.now() - t0;
    expect(queued.map((a) => [a.status, a.body.error?.code])).toEqual(Array(8).fill([503, "service_unavailable"]));
    expect(queuedMs).toBeLessThan(1500); // answered at their deadline, not after the grace of a commit
    release();
    await holder;
    const wire = await Promise.all(onWire);
    // Each of those was on the wire: answered by its commit's outcome (or 503 after the grace).
    for (const a of wire) expect([201, 503]).toContain(a.status);
    const stats = slow.services.creates.stats;
    expect(stats.items).toBe(onWire.length); // the queued eight never joined a batch
    const [{ n }] = (await sql`select count(*)::int as n from app.payment_sessions`) as unknown as [{ n: number }];
    expect(n).toBe(onWire.length);
  }, 20_000);
});
