/**
 * A create may be prepared from its key's last lookup (credentials/key-memo.ts); its statement
 * then checks that lookup again (sessions/create/statement.ts insertSessions, credentials/store.ts
 * KeyCheck). These tests hold the check to what a fresh lookup per create promised: a revoked key
 * creates nothing, and deposits commit to the settlement addresses in force when they are written.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { newId } from "../../../shared/ids.ts";
import { insertSessions, newSessionToken, type CreateOutcome, type NewSession } from "./create/statement.ts";
import { createClaim, readRecord } from "../credentials/idempotency-keys.ts";
import { createApiKey, createMerchant, lookupApiKeys, revokeApiKey, type KeyCheck } from "../credentials/store.ts";
import { hashSecret } from "../credentials/format.ts";
import { setSettlement } from "./settlements.ts";
import { KeyMemo } from "../credentials/key-memo.ts";

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc.close();
});

const sandboxChain = () => svc.services.networks.find((n) => n.environment === "sandbox")!.chainId;
const lookUp = async (secret: string) => (await lookupApiKeys(svc.services.database.sql, [hashSecret(secret)]))[0]!;

/** A sandbox session of this merchant, with one deposit committing to `settlement`, carrying `check`. */
function checkedSession(merchantId: string, check: KeyCheck | undefined, settlement = `0x${"1".repeat(40)}`): NewSession {
  const id = newId("paymentSession");
  return {
    id,
    merchantId,
    environment: "sandbox",
    input: { amountMinor: 100n, currency: "USD", metadata: {}, referenceId: null, expiresInSeconds: 900 },
    tokenGraceSeconds: 60,
    deposits: [{ chainId: sandboxChain(), address: `0x${id.slice(-20).padStart(40, "a").toLowerCase()}`, settlementAddress: settlement, tokenAddress: `0x${"c".repeat(40)}`, decimals: 6, requiredBaseUnits: 1_000_000n, confirmations: 1, tokens: [{ address: `0x${"c".repeat(40)}`, symbol: "TUSD", decimals: 6 }] }],
    keyCheck: check,
    token: newSessionToken("sandbox"),
  };
}

/** The session id of a written create, null for one not written. */
const idOf = (o: CreateOutcome | undefined) => (o?.written ? o.row.id : null);

/** Everything a create writes, for these session ids. */
async function written(ids: string[]) {
  const [r] = await svc.services.database.sql`
    select (select count(*)::int from app.payment_sessions where id = any(${ids})) as sessions,
           (select count(*)::int from app.session_deposits where session_id = any(${ids})) as deposits,
           (select count(*)::int from app.session_events where session_id = any(${ids})) as events,
           (select count(*)::int from app.webhook_deliveries where session_id = any(${ids})) as deliveries`;
  return r;
}

describe("a create's statement checks the key lookup it was prepared from", () => {
  test("written while the key and the settlement addresses are as read; otherwise null and nothing of it written", async () => {
    const m = await svc.merchant("Checked");
    const hook = await svc.call("POST", "/webhook-endpoints", { auth: m.sandboxKey, body: { url: "http://127.0.0.1:9/hook" } });
    expect(hook.status).toBe(201);
    const chainId = sandboxChain();
    const session = (check: KeyCheck | undefined, settlement: string) => checkedSession(m.merchant.id, check, settlement);
    const first = await lookUp(m.sandboxKey);
    expect(first.check).toEqual({ keyHash: hashSecret(m.sandboxKey), keyId: first.key.id, settlements: null }); // none set in sandbox
    const fine = session(first.check, `0x${"1".repeat(40)}`);
    expect(idOf((await insertSessions(svc.services.database.sql, [fine]))[0])).toBe(fine.id);
    expect(await written([fine.id])).toEqual({ sessions: 1, deposits: 1, events: 1, deliveries: 1 });

    // A settlement address set since the lookup: that create is not written, the one without a check is.
    const newSettlement = `0x${"5".repeat(40)}`;
    await setSettlement(svc.services.database.db, m.merchant.id, "sandbox", chainId, newSettlement);
    const stale = session(first.check, `0x${"1".repeat(40)}`);
    const unchecked = session(undefined, newSettlement);
    const answers = await insertSessions(svc.services.database.sql, [stale, unchecked]);
    expect(answers.map(idOf)).toEqual([null, unchecked.id]);
    expect(answers[0]).toEqual({ written: false, why: "key_changed" });
    expect(await written([stale.id])).toEqual({ sessions: 0, deposits: 0, events: 0, deliveries: 0 });
    expect(await written([unchecked.id])).toEqual({ sessions: 1, deposits: 1, events: 1, deliveries: 1 });

    // A fresh lookup reads the new address and holds; the same hash under another key's id does not.
    const second = await lookUp(m.sandboxKey);
    expect(second.settlements.get(chainId)).toBe(newSettlement);
    const again = session(second.check, newSettlement);
    const otherKey = await createApiKey(svc.services.database.db, m.merchant.id, "sandbox", "other");
    const borrowed = session({ ...second.check, keyId: otherKey.key.id }, newSettlement);
    const pair = await insertSessions(svc.services.database.sql, [again, borrowed]);
    expect(pair.map(idOf)).toEqual([again.id, null]);

    // The key must be the session's merchant's: another merchant's session under this key is not written.
    const stranger = await svc.merchant("Stranger");
    const foreign = { ...session(second.check, newSettlement), merchantId: stranger.merchant.id };
    expect((await insertSessions(svc.services.database.sql, [foreign])).map(idOf)).toEqual([null]);
    expect(await written([foreign.id])).toEqual({ sessions: 0, deposits: 0, events: 0, deliveries: 0 });

    // Revoked: nothing more with that key, whatever it was prepared from.
    expect(await revokeApiKey(svc.services.database.db, m.merchant.id, second.key.id)).toBeDefined();
    const revoked = session(second.check, newSettlement);
    expect((await insertSessions(svc.services.database.sql, [revoked])).map(idOf)).toEqual([null]);
    expect(await written([revoked.id, borrowed.id])).toEqual({ sessions: 0, deposits: 0, events: 0, deliveries: 0 });
  });

  test("one batch with two merchants' keys: each create is held to its own key's check", async () => {
    const a = await svc.merchant("Batch A");
    const b = await svc.merchant("Batch B");
    const chainId = sandboxChain();
    const [la, lb] = [await lookUp(a.sandboxKey), await lookUp(b.sandboxKey)];
    await setSettlement(svc.services.database.db, b.merchant.id, "sandbox", chainId, `0x${"6".repeat(40)}`); // b's lookup is now stale
    const list = [checkedSession(a.merchant.id, la.check), checkedSession(b.merchant.id, lb.check), checkedSession(a.merchant.id, la.check), checkedSession(b.merchant.id, lb.check)];
    const answers = await insertSessions(svc.services.database.sql, list);
    expect(answers.map((x) => x.written)).toEqual([true, false, true, false]);
    expect(await written(list.map((s) => s.id))).toEqual({ sessions: 2, deposits: 2, events: 2, deliveries: 0 });
  });
});

describe("creates reuse their key's last lookup", () => {
  test("no lookup after the first; a settlement address set meanwhile is used from the next create on, and the refused attempt wrote nothing", async () => {
    const m = await svc.merchant("Reuse");
    const chainId = sandboxChain();
    const create = () => svc.call("POST", "/payment-sessions", { auth: m.sandboxKey, body: { amount: "3.00", currency: "USD" } });
    const lookups = () => svc.services.apiKeys.stats.items;
    expect((await create()).status).toBe(201);
    const afterFirst = lookups();
    for (let i = 0; i < 5; i++) expect((await create()).status).toBe(201);
    expect(lookups()).toBe(afterFirst); // five creates, no lookup

    const newSettlement = "0x7777777777777777777777777777777777777777";
    const put = await svc.call("PUT", `/settlement-addresses/${chainId}`, { auth: m.sandboxKey, body: { address: newSettlement } });
    expect(put.status).toBe(200);
    const made = await create();
    expect(made.status).toBe(201);
    const [deposit] = await svc.services.database.sql`select settlement_address, address from app.session_deposits where session_id = ${made.body.paymentSessionId}`;
    expect(deposit!.settlement_address).toBe(newSettlement);
    expect(made.body.networks[0].depositAddress.toLowerCase()).toBe(deposit!.address);
    // The PUT looked the key up (before its change); the create's check refused that lookup and looked it up again.
    expect(lookups()).toBe(afterFirst + 2);
    const [{ n }] = (await svc.services.database.sql`select count(*)::int as n from app.payment_sessions where merchant_id = ${m.merchant.id}`) as unknown as [{ n: number }];
    expect(n).toBe(7);

  });

  test("creates with an Idempotency-Key reuse the lookup too, use a settlement address set meanwhile, and replay their answer", async () => {
    const m = await svc.merchant("Reuse, keyed");
    const chainId = sandboxChain();
    const create = (key: string) => svc.call("POST", "/payment-sessions", { auth: m.sandboxKey, body: { amount: "4.00", currency: "USD" }, headers: { "idempotency-key": key } });
    const lookups = () => svc.services.apiKeys.stats.items;
    expect((await create(newId("event"))).status).toBe(201);
    const afterFirst = lookups();
    expect((await create(newId("event"))).status).toBe(201);
    expect(lookups()).toBe(afterFirst); // no lookup
    const newSettlement = "0x9999999999999999999999999999999999999999";
    expect((await svc.call("PUT", `/settlement-addresses/${chainId}`, { auth: m.sandboxKey, body: { address: newSettlement } })).status).toBe(200);
    const key = newId("event");
    const made = await create(key);
    expect(made.status).toBe(201);
    const [deposit] = await svc.services.database.sql`select settlement_address from app.session_deposits where session_id = ${made.body.paymentSessionId}`;
    expect(deposit!.settlement_address).toBe(newSettlement);
    expect(lookups()).toBe(afterFirst + 2); // the PUT's, and the create's after its check refused the remembered lookup
    const replay = await create(key);
    expect([replay.status, replay.headers.get("idempotent-replayed")]).toEqual([201, "true"]);
    expect(replay.body).toEqual(made.body);
    const [counts] = await svc.services.database.sql`
      select (select count(*)::int from app.payment_sessions where merchant_id = ${m.merchant.id}) as sessions,
             (select count(*)::int from app.idempotency_keys where merchant_id = ${m.merchant.id}) as keys,
             (select count(*)::int from app.idempotency_keys where merchant_id = ${m.merchant.id} and response_status = 201) as answered`;
    expect(counts).toEqual({ sessions: 3, keys: 3, answered: 3 });
  });

  test("a keyed create whose check failed claims nothing and writes nothing; its batch-mates are written, each key once", async () => {
    const a = await svc.merchant("Keyed batch A");
    const b = await svc.merchant("Keyed batch B");
    const chainId = sandboxChain();
    const [la, lb] = [await lookUp(a.sandboxKey), await lookUp(b.sandboxKey)];
    await setSettlement(svc.services.database.db, b.merchant.id, "sandbox", chainId, `0x${"4".repeat(40)}`);
    const claimOf = (merchantId: string, key: string) => ({ ctx: { secret: Buffer.alloc(32, 3), merchantId, environment: "sandbox" as const, endpoint: "POST /payment-sessions" }, key, hash: "0".repeat(64) });
    const keyed = (merchantId: string, check: KeyCheck, key: string) => {
      const session = checkedSession(merchantId, check);
      return { ...session, claim: createClaim(claimOf(merchantId, key), { sessionId: session.id, token: session.token.clear }) };
    };
    const shared = newId("event");
    const [fine, stale, twin] = [keyed(a.merchant.id, la.check, shared), keyed(b.merchant.id, lb.check, newId("event")), keyed(a.merchant.id, la.check, shared)];
    const outcomes = await insertSessions(svc.services.database.sql, [fine, stale, twin]);
    expect(outcomes.map((o) => (o.written ? "written" : o.why))).toEqual(["written", "key_changed", "idempotency_key_taken"]);
    const [counts] = await svc.services.database.sql`
      select (select count(*)::int from app.payment_sessions where id = any(${[fine.id, stale.id, twin.id]})) as sessions,
             (select count(*)::int from app.idempotency_keys where merchant_id = ${a.merchant.id}) as a_keys,
             (select count(*)::int from app.idempotency_keys where merchant_id = ${b.merchant.id}) as b_keys`;
    expect(counts).toEqual({ sessions: 1, a_keys: 1, b_keys: 0 });
    // The key's record names the first create's session and token, sealed; the same key again is taken.
    expect(await readRecord(svc.services.database.sql, claimOf(a.merchant.id, shared))).toEqual({ kind: "created", sessionId: fine.id, token: fine.token.clear });
    expect((await insertSessions(svc.services.database.sql, [keyed(a.merchant.id, la.check, shared)])).map((o) => (o.written ? "written" : o.why))).toEqual(["idempotency_key_taken"]);
    // Under another body, the record refuses it.
    expect(await readRecord(svc.services.database.sql, { ...claimOf(a.merchant.id, shared), hash: "1".repeat(64) })).toEqual({ kind: "reused" });
  });

  test("a production merchant who sets its first settlement address can create at once (the refusal before came from the reused lookup)", async () => {
    const merchant = await createMerchant(svc.services.database.db, "Onboarding");
    const live = (await createApiKey(svc.services.database.db, merchant.id, "production", "live")).secret;
    const create = () => svc.call("POST", "/payment-sessions", { auth: live, body: { amount: "3.00", currency: "USD" } });
    const first = await create();
    expect([first.status, first.body.error?.code]).toEqual([409, "settlement_address_missing"]);
    expect(svc.services.keyMemo.get(hashSecret(live))?.settlements.size).toBe(0); // remembered without an address
    const chainId = svc.services.networks.find((n) => n.environment === "production")!.chainId;
    const put = await svc.call("PUT", `/settlement-addresses/${chainId}`, { auth: live, body: { address: "0x8888888888888888888888888888888888888888" } });
    expect(put.status).toBe(200);
    const made = await create();
    expect(made.status).toBe(201);
    expect(made.body.networks.map((n: { chainId: number }) => n.chainId)).toEqual([chainId]);
    // With an Idempotency-Key as well (the lookup remembered without an address was replaced by the PUT's, before its change).
    const again = await createApiKey(svc.services.database.db, merchant.id, "production", "second");
    const keyed = () => svc.call("POST", "/payment-sessions", { auth: again.secret, body: { amount: "3.00", currency: "USD" }, headers: { "idempotency-key": newId("event") } });
    await setSettlement(svc.services.database.db, merchant.id, "production", 999_999, "0x8888888888888888888888888888888888888888"); // a network this server lacks: nothing offered there
    expect((await keyed()).status).toBe(201);
    await svc.services.database.sql`delete from app.merchant_settlements where merchant_id = ${merchant.id} and chain_id = ${chainId}`;
    const refused = await keyed(); // the address is gone: refused, not created for the old one
    expect([refused.status, refused.body.error?.code]).toEqual([409, "settlement_address_missing"]);
  });

  test("a key revoked after its lookup was remembered is answered 401 whatever else is wrong with the create, and nothing is written", async () => {
    const m = await svc.merchant("Revoked, bad body");
    expect((await svc.call("POST", "/payment-sessions", { auth: m.sandboxKey, body: { amount: "1.00", currency: "USD" } })).status).toBe(201);
    expect(svc.services.keyMemo.get(hashSecret(m.sandboxKey))).toBeDefined();
    const [keyRow] = await svc.services.database.sql`select id from app.api_keys where merchant_id = ${m.merchant.id} and environment = 'sandbox'`;
    await revokeApiKey(svc.services.database.db, m.merchant.id, keyRow!.id);
    for (const body of [{ amount: "-1", currency: "USD" }, { amount: "1.00", currency: "XYZ" }, { amount: "1.00" }, { amount: "1.00", currency: "USD" }]) {
      const r = await svc.call("POST", "/payment-sessions", { auth: m.sandboxKey, body });
      expect([r.status, r.body.error?.code]).toEqual([401, "api_key_revoked"]);
    }
    // With an Idempotency-Key: the same, and no key claimed.
    const [keyRow2] = await svc.services.database.sql`select id from app.api_keys where merchant_id = ${m.merchant.id} and environment = 'production'`;
    const live = svc.call("POST", "/payment-sessions", { auth: m.liveKey, body: { amount: "1.00", currency: "USD" }, headers: { "idempotency-key": newId("event") } });
    expect((await live).status).toBe(201);
    await revokeApiKey(svc.services.database.db, m.merchant.id, keyRow2!.id);
    for (const body of [{ amount: "-1", currency: "USD" }, { amount: "1.00", currency: "USD" }]) {
      const r = await svc.call("POST", "/payment-sessions", { auth: m.liveKey, body, headers: { "idempotency-key": newId("event") } });
      expect([r.status, r.body.error?.code]).toEqual([401, "api_key_revoked"]);
    }
    const [{ keys }] = (await svc.services.database.sql`select count(*)::int as keys from app.idempotency_keys where merchant_id = ${m.merchant.id}`) as unknown as [{ keys: number }];
    expect(keys).toBe(1);
    expect(svc.services.keyMemo.get(hashSecret(m.sandboxKey))).toBeUndefined();
    const [{ n }] = (await svc.services.database.sql`select count(*)::int as n from app.payment_sessions where merchant_id = ${m.merchant.id}`) as unknown as [{ n: number }];
    expect(n).toBe(2);
  });

  test("an unknown key is refused every time, and is not remembered", async () => {
    const bogus = "sk_test_" + "x".repeat(40);
    for (let i = 0; i < 3; i++) {
      const r = await svc.call("POST", "/payment-sessions", { auth: bogus, body: { amount: "3.00", currency: "USD" } });
      expect([r.status, r.body.error?.code]).toEqual([401, "api_key_invalid"]);
    }
    expect(svc.services.keyMemo.get(hashSecret(bogus))).toBeUndefined();
  });
});

describe("KeyMemo", () => {
  const lookup = (id: string, revoked = false) =>
    ({ key: { id, revokedAt: revoked ? new Date() : null }, check: { keyHash: id, keyId: id, settlements: null } }) as never;

  test("keeps the last lookup per hash, forgets keys found gone or revoked, and holds at most its capacity (oldest out)", () => {
    const memo = new KeyMemo(2);
    memo.remember("h1", lookup("k1"));
    memo.remember("h2", lookup("k2"));
    expect(memo.get("h1")).toBeDefined();
    memo.remember("h3", lookup("k3"));
    expect([memo.get("h1"), memo.size]).toEqual([undefined, 2]);
    memo.remember("h2", undefined);
    expect(memo.get("h2")).toBeUndefined();
    memo.remember("h3", lookup("k3", true));
    expect([memo.get("h3"), memo.size]).toEqual([undefined, 0]);
  });
});

describe("retries of a reused lookup within the request's limits", () => {
  let limited: TestService | undefined;
  let slow: TestService | undefined;
  afterAll(async () => {
    await limited?.close();
    await slow?.close();
  });

  test("a key revoked after its lookup was remembered is answered 401, not 429, when over its rate limit", async () => {
    limited = await startTestService({ SERVICE_RATE_LIMIT_PER_SECOND: "1", SERVICE_RATE_LIMIT_BURST: "2" });
    const m = await limited.merchant("Limited");
    const create = () => limited!.call("POST", "/payment-sessions", { auth: m.sandboxKey, body: { amount: "1.00", currency: "USD" } });
    expect([(await create()).status, (await create()).status]).toEqual([201, 201]);
    const over = await create();
    expect([over.status, over.body.error?.code]).toEqual([429, "rate_limited"]);
    const [keyRow] = await limited.services.database.sql`select id from app.api_keys where merchant_id = ${m.merchant.id} and environment = 'sandbox'`;
    await revokeApiKey(limited.services.database.db, m.merchant.id, keyRow!.id);
    const revoked = await create();
    expect([revoked.status, revoked.body.error?.code]).toEqual([401, "api_key_revoked"]);
  });

  test("past the deadline a create whose check failed starts no new insert: its 503 means nothing was created", async () => {
    slow = await startTestService({ SERVICE_REQUEST_TIMEOUT_MS: "300" });
    const m = await slow.merchant("Late retry");
    const sql = slow.services.database.sql;
    const create = () => slow!.call("POST", "/payment-sessions", { auth: m.sandboxKey, body: { amount: "1.00", currency: "USD" } });
    expect((await create()).status).toBe(201); // the key's lookup is remembered
    await setSettlement(slow.services.database.db, m.merchant.id, "sandbox", slow.services.networks.find((n) => n.environment === "sandbox")!.chainId, `0x${"3".repeat(40)}`);
    // The first insert waits for a table lock past the deadline (on the wire: the grace applies);
    // a second insert, if one were started, would wait for the merchant row past the grace.
    const hold = (statement: string) => {
      let release!: () => void;
      let held!: () => void;
      const isHeld = new Promise<void>((r) => (held = r));
      const done = sql.begin(async (tx) => {
        await tx.unsafe(statement);
        held();
        await new Promise<void>((r) => (release = r));
      });
      return { isHeld, release: () => (release(), done) };
    };
    const table = hold("lock table app.payment_sessions in exclusive mode");
    const merchantRow = hold(`select 1 from app.merchants where id = '${m.merchant.id}' for update`);
    await Promise.all([table.isHeld, merchantRow.isHeld]);
    const answer = create();
    await Bun.sleep(700);
    await table.release(); // the first insert runs now, and its check fails (settlement replaced)
    const late = await answer;
    expect([late.status, late.body.error?.code]).toEqual([503, "service_unavailable"]);
    await merchantRow.release();
    await Bun.sleep(300);
    const [{ n }] = (await sql`select count(*)::int as n from app.payment_sessions where merchant_id = ${m.merchant.id}`) as unknown as [{ n: number }];
    expect(n).toBe(1); // the first create only
  }, 20_000);
});


describe("retrieves reuse their key's last lookup, checked in their own statement", () => {
  test("no lookup once the key is remembered; a key revoked since is refused 401 and the session not shown, found or not", async () => {
    const m = await svc.merchant("Retrieve, revoked");
    const created = await svc.call("POST", "/payment-sessions", { auth: m.sandboxKey, body: { amount: "1.00", currency: "USD" } });
    expect(created.status).toBe(201);
    const path = `/payment-sessions/${created.body.paymentSessionId}`;
    const lookups = () => svc.services.apiKeys.stats.items;
    const before = lookups();
    const seen = await svc.call("GET", path, { auth: m.sandboxKey });
    expect([seen.status, seen.body.paymentSessionId, seen.body.history.map((h: { reason: string }) => h.reason)]).toEqual([200, created.body.paymentSessionId, ["created"]]);
    expect(lookups()).toBe(before); // answered from the remembered lookup
    const [keyRow] = await svc.services.database.sql`select id from app.api_keys where merchant_id = ${m.merchant.id} and environment = 'sandbox'`;
    await revokeApiKey(svc.services.database.db, m.merchant.id, keyRow!.id);
    expect(svc.services.keyMemo.get(hashSecret(m.sandboxKey))).toBeDefined(); // still remembered: the read's check must catch it
    for (const p of [path, `/payment-sessions/${newId("paymentSession")}`]) {
      const r = await svc.call("GET", p, { auth: m.sandboxKey });
      expect([r.status, r.body.error?.code, r.body.paymentSessionId]).toEqual([401, "api_key_revoked", undefined]);
    }
    expect(svc.services.keyMemo.get(hashSecret(m.sandboxKey))).toBeUndefined();
  });
});
