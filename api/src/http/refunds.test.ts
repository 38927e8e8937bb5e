/**
 * The refund endpoints over HTTP against a real service: create (default and partial amounts,
 * Idempotency-Key, the errors of the catalogue), retrieve, the two lists with their pages, cancel,
 * and the session's `amountRefunded`. The money a session received is its ledger
 * (app.session_funds), written here as the actor writes a confirmed payment.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../../testing/service.ts";

let svc: TestService;
let key: string;
let otherKey: string;
beforeAll(async () => {
  svc = await startTestService({ SERVICE_REFUND_MAX_PER_REFUND: "4.00" });
  key = (await svc.merchant("Refunds")).sandboxKey;
  otherKey = (await svc.merchant("Someone else")).sandboxKey;
});
afterAll(async () => {
  await svc?.close();
});

const sql = () => svc.services.database.sql;
let n = 0;

/** A sandbox session that received `units` (6-decimal unit) of its first network's main token. */
async function paidSession(units: bigint, auth = key): Promise<string> {
  const r = await svc.call("POST", "/payment-sessions", { auth, body: { amount: "5.00", currency: "USD" } });
  expect(r.status).toBe(201);
  const id = r.body.paymentSessionId as string;
  if (units > 0n) {
    const [d] = await sql()`select chain_id from app.session_deposits where session_id = ${id} order by chain_id limit 1`;
    await sql()`
      insert into app.session_funds (session_id, chain_id, direction, tx_hash, log_index, amount, block_timestamp)
      values (${id}, ${d!.chain_id}, 'in', ${`0x${(++n).toString(16).padStart(64, "a")}`}, 0, ${units.toString()}::numeric, now())`;
  }
  return id;
}

const refund = (id: string, body: Record<string, unknown>, headers: Record<string, string> = {}, auth = key) =>
  svc.call("POST", `/payment-sessions/${id}/refunds`, { auth, body, headers });

describe("create", () => {
  test("a partial refund: 201 PENDING, its part in the token's base units; the session's amountRefunded follows", async () => {
    const id = await paidSession(5_000_000n);
    const r = await refund(id, { amount: "1.25", reason: "requested_by_customer", metadata: { returnId: "r-1" } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      paymentSessionId: id,
      status: "PENDING",
      amount: "1.25",
      currency: "USD",
      reason: "requested_by_customer",
      environment: "sandbox",
      metadata: { returnId: "r-1" },
      transactionHash: null,
      // No index in this service: who paid is unknown, and the refund waits for a destination.
      waitingReason: "destination_unknown",
    });
    expect(r.body.refundId).toMatch(/^rf_/);
    expect(r.body.parts).toHaveLength(1);
    expect(r.body.parts[0]).toMatchObject({ amount: "1.25", amountBaseUnits: "1250000", decimals: 6, destination: null });
    const s = await svc.call("GET", `/payment-sessions/${id}`, { auth: key });
    expect(s.body.amountRefunded).toBe("1.25");
    const list = await svc.call("GET", "/payment-sessions?limit=5", { auth: key });
    expect(list.body.data.find((x: { paymentSessionId: string }) => x.paymentSessionId === id).amountRefunded).toBe("1.25");
  });

  test("no amount: everything left to refund, to the sub-cent", async () => {
    const id = await paidSession(3_456_789n);
    const first = await refund(id, { amount: "1.00", reason: "overpayment" });
    expect(first.status).toBe(201);
    const rest = await refund(id, { reason: "other" });
    expect(rest.status).toBe(201);
    expect(rest.body.amount).toBe("2.456789");
    expect(rest.body.parts[0].amountBaseUnits).toBe("2456789");
    const more = await refund(id, { amount: "0.01", reason: "other" });
    expect(more.status).toBe(409);
    expect(more.body.error).toMatchObject({ code: "refund_exceeds_refundable", param: "amount" });
  });

  test("the errors: nothing received, above the rest, above the per-refund limit, another merchant's session, bad input", async () => {
    const empty = await paidSession(0n);
    expect((await refund(empty, { reason: "duplicate" })).body.error.code).toBe("session_not_refundable");
    const id = await paidSession(5_000_000n);
    const above = await refund(id, { amount: "5.01", reason: "duplicate" });
    expect([above.status, above.body.error.code]).toEqual([409, "refund_exceeds_refundable"]);
    expect(above.body.error.message).toContain("5.00 left");
    const tooLarge = await refund(id, { reason: "duplicate" }); // 5.00 > SERVICE_REFUND_MAX_PER_REFUND 4.00
    expect([tooLarge.status, tooLarge.body.error.code]).toEqual([400, "amount_too_large"]);
    const theirs = await paidSession(5_000_000n, otherKey);
    const foreign = await refund(theirs, { amount: "1.00", reason: "duplicate" });
    expect([foreign.status, foreign.body.error.code]).toEqual([404, "resource_not_found"]);
    expect((await refund("ps_000000000000000000000000", { reason: "duplicate" })).status).toBe(404);
    expect((await refund("nope", { reason: "duplicate" })).status).toBe(404);
    expect((await refund(id, { amount: "1", reason: "duplicate" })).body.error.code).toBe("amount_invalid");
    expect((await refund(id, { amount: "0.00", reason: "duplicate" })).body.error.code).toBe("amount_invalid");
    expect((await refund(id, { amount: "1.00", reason: "because" })).body.error).toMatchObject({ code: "parameter_invalid", param: "reason" });
    expect((await refund(id, { amount: "1.00" })).body.error).toMatchObject({ code: "parameter_missing", param: "reason" });
    expect((await refund(id, { amount: "1.00", reason: "other", to: "0x1" })).body.error).toMatchObject({ code: "parameter_unknown", param: "to" });
    expect((await refund(id, { amount: "1.00", reason: "other", token: "0x12" })).body.error).toMatchObject({ code: "parameter_invalid", param: "token" });
    // A network the session could not be paid on is a wrong ask (400 on chainId), not "too much" (409).
    for (const chainId of [1, 99999]) {
      const wrong = await refund(id, { amount: "1.00", reason: "other", chainId });
      expect([wrong.status, wrong.body.error.code, wrong.body.error.param]).toEqual([400, "parameter_invalid", "chainId"]);
    }
    expect((await refund(id, { amount: "1.00", reason: "other", token: "0x0000000000000000000000000000000000000001" })).body.error).toMatchObject({ code: "parameter_invalid", param: "token" });
    expect((await refund(id, { amount: "1.00", reason: "other", metadata: { "": "x" } })).body.error).toMatchObject({ code: "parameter_invalid", param: "metadata" });
    const [c] = await sql()`select count(*)::int as n from app.refunds where session_id in ${sql()([empty, id, theirs])}`;
    expect(c!.n).toBe(0); // none of those wrote anything
  });

  test("Idempotency-Key: the same key and body replay the refund; another body, or another session, is refused", async () => {
    const id = await paidSession(5_000_000n);
    const body = { amount: "2.00", reason: "requested_by_customer" };
    const first = await refund(id, body, { "idempotency-key": "refund-1" });
    const again = await refund(id, body, { "idempotency-key": "refund-1" });
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    const [c] = await sql()`select count(*)::int as n from app.refunds where session_id = ${id}`;
    expect(c!.n).toBe(1);
    expect((await refund(id, { ...body, amount: "2.01" }, { "idempotency-key": "refund-1" })).body.error.code).toBe("idempotency_key_reused");
    const other = await paidSession(5_000_000n);
    expect((await refund(other, body, { "idempotency-key": "refund-1" })).body.error.code).toBe("idempotency_key_reused");
    expect((await refund(id, body, { "idempotency-key": "" })).body.error.code).toBe("idempotency_key_invalid");
  });
});

test("refund balances: an address per network of the environment, known before it is funded; no chain here, so no balance", async () => {
  const r = await svc.call("GET", "/refund-balances", { auth: key });
  expect(r.status).toBe(200);
  const sandbox = r.body.data as { chainId: number; address: string; tokens: { balanceBaseUnits: string | null }[] }[];
  expect(sandbox.length).toBeGreaterThan(0);
  expect(sandbox[0]!.address).toMatch(/^0x[0-9a-fA-F]{40}$/);
  expect(sandbox[0]!.tokens[0]!.balanceBaseUnits).toBeNull(); // the test networks' RPC is a closed port
  const other = (await svc.call("GET", "/refund-balances", { auth: otherKey })).body.data as { address: string }[];
  expect(other[0]!.address).not.toBe(sandbox[0]!.address);
});

describe("read, list, cancel", () => {
  test("retrieve: the merchant's own only", async () => {
    const id = await paidSession(5_000_000n);
    const created = (await refund(id, { amount: "1.00", reason: "other" })).body;
    const got = await svc.call("GET", `/refunds/${created.refundId}`, { auth: key });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created);
    expect((await svc.call("GET", `/refunds/${created.refundId}`, { auth: otherKey })).body.error.code).toBe("resource_not_found");
    expect((await svc.call("GET", "/refunds/rf_000000000000000000000000", { auth: key })).status).toBe(404);
    expect((await svc.call("GET", "/refunds/x", { auth: key })).status).toBe(404);
  });

  test("lists: newest first, paged with startingAfter; a session's only its own", async () => {
    const id = await paidSession(5_000_000n);
    const made: string[] = [];
    for (const amount of ["0.10", "0.20", "0.30"]) made.push((await refund(id, { amount, reason: "other" })).body.refundId);
    const p1 = await svc.call("GET", `/payment-sessions/${id}/refunds?limit=2`, { auth: key });
    expect(p1.status).toBe(200);
    expect(p1.body.data.map((r: { refundId: string }) => r.refundId)).toEqual([made[2], made[1]]);
    expect(p1.body.hasMore).toBe(true);
    const p2 = await svc.call("GET", `/payment-sessions/${id}/refunds?limit=2&startingAfter=${p1.body.nextCursor}`, { auth: key });
    expect(p2.body).toMatchObject({ hasMore: false, nextCursor: null });
    expect(p2.body.data.map((r: { refundId: string }) => r.refundId)).toEqual([made[0]]);
    const all = await svc.call("GET", "/refunds?limit=1", { auth: key });
    expect(all.body.data[0].refundId).toBe(made[2]);
    expect((await svc.call("GET", `/payment-sessions/${id}/refunds`, { auth: otherKey })).status).toBe(404);
    expect((await svc.call("GET", "/refunds?limit=0", { auth: key })).body.error.code).toBe("parameter_invalid");
    expect((await svc.call("GET", "/refunds?startingAfter=rf_000000000000000000000000", { auth: key })).body.error.param).toBe("startingAfter");
    const theirs = (await svc.call("GET", "/refunds", { auth: otherKey })).body.data as { paymentSessionId: string }[];
    expect(theirs.some((r) => r.paymentSessionId === id)).toBe(false);
  });

  test("cancel while PENDING gives the amount back; once canceled, 409; another merchant's, 404", async () => {
    const id = await paidSession(2_000_000n);
    const r = (await refund(id, { reason: "other" })).body;
    expect((await svc.call("POST", `/refunds/${r.refundId}/cancel`, { auth: otherKey, body: {} })).status).toBe(404);
    const canceled = await svc.call("POST", `/refunds/${r.refundId}/cancel`, { auth: key, body: {} });
    expect(canceled.status).toBe(200);
    expect(canceled.body).toMatchObject({ status: "CANCELED", waitingReason: null });
    expect(canceled.body.finishedAt).not.toBeNull();
    expect((await svc.call("GET", `/payment-sessions/${id}`, { auth: key })).body.amountRefunded).toBe("0.00");
    const again = await svc.call("POST", `/refunds/${r.refundId}/cancel`, { auth: key, body: {} });
    expect([again.status, again.body.error.code]).toEqual([409, "refund_not_cancelable"]);
    expect((await svc.call("POST", `/refunds/${r.refundId}/cancel`, { auth: key, body: { now: true } })).body.error.code).toBe("parameter_unknown");
    expect((await refund(id, { reason: "other" })).body.amount).toBe("2.00");
  });
});
