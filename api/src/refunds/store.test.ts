/**
 * The refund cap against real Postgres: the sum of a session's refunds never exceeds what it
 * received, however many creates race (app.refund_totals' conditional update), and a cancel gives
 * the amount back. The money received is the session's ledger (app.session_funds), written here
 * as the actor writes it for a confirmed payment.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { ApiError } from "../errors.ts";
import { cancelRefund, createRefund, refundedOf, type RefundScope } from "./store.ts";

let svc: TestService;
let scope: RefundScope;
let key: string;
beforeAll(async () => {
  svc = await startTestService();
  const m = await svc.merchant("Refunds");
  key = m.sandboxKey;
  scope = { merchantId: m.merchant.id, environment: "sandbox" };
});
afterAll(async () => {
  await svc?.close();
});

const sql = () => svc.services.database.sql;
let n = 0;

/** A sandbox session with `parts` received on its first network: [token index, amount in its unit]. */
async function sessionPaid(parts: [number, bigint][]): Promise<{ id: string; chainId: number; tokens: string[] }> {
  const r = await svc.call("POST", "/payment-sessions", { auth: key, body: { amount: "5.00", currency: "USD" } });
  expect(r.status).toBe(201);
  const id = r.body.paymentSessionId as string;
  const [d] = await sql()`select chain_id, tokens from app.session_deposits where session_id = ${id} order by chain_id limit 1`;
  const tokens = (d!.tokens as { address: string }[]).map((t) => t.address);
  for (const [i, amount] of parts) {
    await sql()`
      insert into app.session_funds (session_id, chain_id, direction, tx_hash, log_index, amount, token_address, block_timestamp)
      values (${id}, ${d!.chain_id}, 'in', ${`0x${(++n).toString(16).padStart(64, "0")}`}, 0, ${amount.toString()}::numeric, ${tokens[i]!}, now())`;
  }
  return { id, chainId: d!.chain_id as number, tokens };
}

const create = (sessionId: string, amountMinor?: bigint, token?: string, on = sql()) =>
  on.begin((tx) =>
    createRefund(tx, scope, {
      sessionId,
      ask: { ...(amountMinor !== undefined ? { amountMinor } : {}), ...(token ? { token } : {}) },
      reason: "requested_by_customer",
      metadata: {},
      maxPerRefundMinor: 1_000_000n,
      indexerPresent: false,
    }),
  );

const codeOf = async (p: Promise<unknown>) => {
  try {
    await p;
    return "created";
  } catch (e) {
    if (e instanceof ApiError) return e.code;
    throw e;
  }
};

/**
 * Twenty creates that all read the session's totals before any of them writes: an outside
 * transaction holds the totals' row while they start, so each plans "everything" from the same
 * stale read and only the database's conditional update stands between them and twenty refunds.
 * Their own pool, one connection each: none waits for another's connection. A create that ends
 * before the holder lets go fails the test at once with what it ended with (a fresh-clone run
 * once waited 20 s for a twentieth waiter that had finished before the holder took the row), and
 * a wait that does not fill says what each of the pool's connections was doing.
 */
async function race(sessionId: string, amountMinor?: bigint): Promise<string[]> {
  const app = `refund-race-${++n}`;
  const pool = postgres(svc.databaseUrl, { max: 21, onnotice: () => {}, connection: { application_name: app } });
  try {
    await sql()`insert into app.refund_totals (session_id, chain_id, token_address)
                select session_id, chain_id, tokens->0->>'address' from app.session_deposits where session_id = ${sessionId} order by chain_id limit 1`;
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let held!: () => void;
    const holding = new Promise<void>((r) => (held = r));
    const holder = pool.begin(async (tx) => {
      await tx`select held from app.refund_totals where session_id = ${sessionId} for update`;
      held();
      await released;
    });
    // The creates start only once the row is held: started together, one of them could take the
    // row first and finish before the holder, and never be among the twenty waiting.
    await Promise.race([holding, holder]);
    let early: string | undefined;
    const creates = Array.from({ length: 20 }, () =>
      codeOf(create(sessionId, amountMinor, undefined, pool)).then(
        (o) => ((early ??= `a create ended before the holder let go: ${o}`), o),
        (e) => {
          early ??= `a create failed before the holder let go: ${e instanceof Error ? e.message : String(e)}`;
          throw e;
        },
      ),
    );
    const outcomes = Promise.all(creates);
    outcomes.catch(() => {}); // its rejection is awaited below; the wait must not see it unhandled
    try {
      const deadline = Date.now() + 60_000;
      for (;;) {
        if (early) throw new Error(early);
        const rows = await sql()`select state, wait_event_type, wait_event from pg_stat_activity where application_name = ${app}`;
        if (rows.filter((r) => r.wait_event_type === "Lock").length >= 20) break;
        if (Date.now() > deadline) {
          throw new Error(`fewer than twenty creates waiting on the totals' row after 60 s: ${JSON.stringify(rows.map((r) => [r.state, r.wait_event_type, r.wait_event]))}`);
        }
        await Bun.sleep(25);
      }
    } finally {
      // Released whatever happened: a failed wait must fail the test with its reason, not hang it
      // on a pool that cannot end while the holder's transaction is open.
      release();
    }
    await holder;
    return await outcomes;
  } finally {
    await pool.end();
  }
}

test("twenty simultaneous 'refund everything' creates: exactly one wins, the rest refund_exceeds_refundable", async () => {
  const s = await sessionPaid([[0, 5_000_000n]]);
  const outcomes = await race(s.id);
  expect(outcomes.filter((o) => o === "created")).toHaveLength(1);
  expect(outcomes.filter((o) => o === "refund_exceeds_refundable")).toHaveLength(19);
  const [t] = await sql()`select held::text as held from app.refund_totals where session_id = ${s.id}`;
  expect(t!.held).toBe("5000000");
  const [c] = await sql()`select count(*)::int as n, sum(amount)::text as total from app.refunds where session_id = ${s.id}`;
  expect(c).toEqual({ n: 1, total: "5000000" });
  expect((await refundedOf(sql(), [s.id])).get(s.id)).toBe("5.00");
}, 90_000);

test("twenty simultaneous partial creates of 0.30 over 5.00: sixteen fit, never more than received", async () => {
  const s = await sessionPaid([[0, 5_000_000n]]);
  const outcomes = await race(s.id, 30n);
  expect(outcomes.filter((o) => o === "created")).toHaveLength(16); // 16 × 0.30 = 4.80; a 17th would be 5.10
  expect(outcomes.filter((o) => o === "refund_exceeds_refundable")).toHaveLength(4);
  const [c] = await sql()`select sum(amount)::text as total from app.refunds where session_id = ${s.id}`;
  expect(c!.total).toBe("4800000");
}, 90_000);

test("paid in two tokens: split in proportion, each part within its token, the totals per token", async () => {
  const s = await sessionPaid([
    [0, 1_000_000n],
    [1, 3_000_000n],
  ]);
  const r = await create(s.id, 200n);
  expect(r.parts.map((p) => [p.token, p.amount, p.baseUnits])).toEqual([
    [s.tokens[0]!, "500000", "500000"],
    [s.tokens[1]!, "1500000", "1500000"],
  ]);
  const totals = await sql()`select token_address, held::text as held from app.refund_totals where session_id = ${s.id} order by held::numeric`;
  expect(totals.map((t) => [t.token_address, t.held])).toEqual([
    [s.tokens[0], "500000"],
    [s.tokens[1], "1500000"],
  ]);
  // Naming the token: only its rest counts.
  expect(await codeOf(create(s.id, 51n, s.tokens[0]))).toBe("refund_exceeds_refundable");
  const rest = await create(s.id, undefined, s.tokens[0]);
  expect(rest.amount).toBe("500000");
});

test("nothing received: session_not_refundable; another merchant's session: not found", async () => {
  const s = await sessionPaid([]);
  expect(await codeOf(create(s.id))).toBe("session_not_refundable");
  const other = await svc.merchant("Someone else");
  const theirs = await svc.call("POST", "/payment-sessions", { auth: other.sandboxKey, body: { amount: "5.00", currency: "USD" } });
  expect(await codeOf(create(theirs.body.paymentSessionId))).toBe("resource_not_found");
});

test("a payment the chain took back is not money received; unknown payers leave the destination for later", async () => {
  const s = await sessionPaid([[0, 2_000_000n]]);
  await sql()`update app.session_funds set reverted_at = now() where session_id = ${s.id}`;
  expect(await codeOf(create(s.id))).toBe("session_not_refundable");
  const t = await sessionPaid([[0, 2_000_000n]]);
  const r = await create(t.id);
  expect(r).toMatchObject({ state: "PENDING", waitingReason: "destination_unknown" });
  expect(r.parts[0]!.destination).toBeNull();
});

test("a cancel gives the amount back; a canceled refund cannot be canceled again", async () => {
  const s = await sessionPaid([[0, 1_000_000n]]);
  const r = await create(s.id);
  expect(await codeOf(create(s.id, 1n))).toBe("refund_exceeds_refundable");
  const canceled = await cancelRefund(sql(), scope, r.id);
  expect(canceled.state).toBe("CANCELED");
  expect((await refundedOf(sql(), [s.id])).get(s.id)).toBe("0.00");
  expect(await codeOf(cancelRefund(sql(), scope, r.id))).toBe("refund_not_cancelable");
  expect(await codeOf(cancelRefund(sql(), { ...scope, environment: "production" }, r.id))).toBe("resource_not_found");
  const again = await create(s.id);
  expect(again.amount).toBe("1000000");
});

test("the cap holds even against a writer that skips the code's own checks", async () => {
  const s = await sessionPaid([[0, 1_000_000n]]);
  await create(s.id);
  const [t] = await sql()`select held::text as held from app.refund_totals where session_id = ${s.id}`;
  expect(t!.held).toBe("1000000");
  // Giving back more than is held is refused by the table itself.
  await expect(sql()`update app.refund_totals set held = held - 2000000 where session_id = ${s.id}`).rejects.toThrow(/refund_totals_held_chk/);
});
