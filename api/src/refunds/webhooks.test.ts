/**
 * A refund's webhooks on real Postgres, through the session events' outbox and the real delivery
 * worker to a real receiver: each event verified as a Standard Webhook against the endpoint's
 * secret, in its session's order, carrying the refund as GET /refunds/{id} shows it; the failed and
 * canceled ends; retries that send the same bytes whatever the refund did since; and an event
 * written while no worker runs, delivered once one starts (the outbox keeps it). The money the
 * session received is its ledger (app.session_funds), written as the actor writes it; the relayer's
 * steps are the sweeper's own functions (bindRefundsSent, recordRefundsMined), fed a transaction
 * recorded here and a reverted receipt. webhooks-chain.test.ts sends one for real on anvil.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolve } from "node:path";
import { Webhook } from "standardwebhooks";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { FAST_WEBHOOK_ENV, startReceiver, type Received } from "../../../testing/webhook-receiver.ts";
import { eventually } from "../../../testing/eventually.ts";
import { bindRefundsSent, recordRefundsMined } from "../sweeps/send-refunds.ts";
import type { SweepChain } from "../sweeps/chain.ts";

let svc: TestService;
const rcv = startReceiver();
beforeAll(async () => {
  svc = await startTestService(FAST_WEBHOOK_ENV);
});
afterAll(async () => {
  await svc?.close();
  await rcv.stop();
});

const sql = () => svc.services.database.sql;
let n = 0;

interface Setup {
  key: string;
  secret: string;
  path: string;
}

async function merchantWithEndpoint(s: TestService, name: string): Promise<Setup> {
  const { sandboxKey: key } = await s.merchant(name);
  const path = `/${name}`;
  const ep = await s.call("POST", "/webhook-endpoints", { auth: key, body: { url: `${rcv.url}${path}` } });
  expect(ep.status).toBe(201);
  return { key, secret: ep.body.secret, path };
}

/** A sandbox session that received `amount` (its unit) on its first network, in its first token. */
async function sessionPaid(s: TestService, key: string, amount = 5_000_000n): Promise<string> {
  const r = await s.call("POST", "/payment-sessions", { auth: key, body: { amount: "5.00", currency: "USD" } });
  expect(r.status).toBe(201);
  const id = r.body.paymentSessionId as string;
  const [d] = await s.services.database.sql`select chain_id, tokens from app.session_deposits where session_id = ${id} order by chain_id limit 1`;
  await s.services.database.sql`
    insert into app.session_funds (session_id, chain_id, direction, tx_hash, log_index, amount, token_address, block_timestamp)
    values (${id}, ${d!.chain_id}, 'in', ${`0x${(++n).toString(16).padStart(64, "0")}`}, 0, ${amount.toString()}::numeric, ${(d!.tokens as { address: string }[])[0]!.address}, now())`;
  return id;
}

const of = (path: string) => rcv.received.filter((r) => r.path === path);

async function received(path: string, count: number): Promise<Received[]> {
  return eventually(async () => (of(path).length >= count ? of(path) : undefined), `${count} webhooks at ${path}`, 15_000);
}

/** Every delivery verified against the endpoint's secret, as a receiver with the standardwebhooks package does. */
function verified(secret: string, rs: Received[]): any[] {
  const wh = new Webhook(secret);
  return rs.map((r) => wh.verify(r.body, r.headers));
}

/** A relayer transaction of kind refund, recorded as the sweeper records one, and the refunds bound to it (SENT). */
async function sentInTransaction(refundIds: string[]): Promise<{ txId: string; hash: string }> {
  const txId = `stx_test${++n}`;
  const hash = `0x${"ab".repeat(31)}${(n % 256).toString(16).padStart(2, "0")}`;
  await sql().begin(async (tx) => {
    await tx`
      insert into app.sweep_transactions (id, kind, chain_id, relayer, nonce, tx_hash, tx_hashes, state, sent_at)
      values (${txId}, 'refund', 31337, '0x00000000000000000000000000000000000000aa', ${n}, ${hash}, ${JSON.stringify([hash])}::jsonb, 'sent', now())`;
    await bindRefundsSent(tx, refundIds, txId);
  });
  return { txId, hash };
}

/** What recordRefundsMined reads of its chain (the vaults' address, the log). */
const chainStub = () => ({ sql: sql(), account: { address: "0x00000000000000000000000000000000000000aa" }, net: { name: "local" }, log: () => {} }) as unknown as SweepChain;

test("created, then canceled: each verified, in the session's order, carrying the refund as GET /refunds/{id} shows it", async () => {
  const m = await merchantWithEndpoint(svc, "canceled");
  const sessionId = await sessionPaid(svc, m.key);
  const r = await svc.call("POST", `/payment-sessions/${sessionId}/refunds`, { auth: m.key, body: { amount: "1.25", reason: "requested_by_customer" } });
  expect(r.status).toBe(201);
  const [, created] = verified(m.secret, await received(m.path, 2));
  const shown = await svc.call("GET", `/refunds/${r.body.refundId}`, { auth: m.key });
  expect(created).toEqual({ id: expect.stringMatching(/^evt_/), type: "refund.created", createdAt: expect.any(String), data: { ...shown.body, sequence: 2 } });

  const c = await svc.call("POST", `/refunds/${r.body.refundId}/cancel`, { auth: m.key });
  expect(c.status).toBe(200);
  const events = verified(m.secret, await received(m.path, 3));
  expect(events.map((e) => [e.type, e.data.sequence])).toEqual([
    ["payment_session.pending", 1],
    ["refund.created", 2],
    ["refund.canceled", 3],
  ]);
  const after = await svc.call("GET", `/refunds/${r.body.refundId}`, { auth: m.key });
  expect(events[2].data).toEqual({ ...after.body, sequence: 3 });
  expect(events[2].data).toMatchObject({ status: "CANCELED", paymentSessionId: sessionId, amount: "1.25" });
  // The session's counter counts them: its next event takes the number after.
  const [s] = await sql()`select sequence from app.payment_sessions where id = ${sessionId}`;
  expect(s!.sequence).toBe(3);
  // GET /events lists them among the session's events, newest first, and finds each by id.
  const list = await svc.call("GET", `/events?paymentSessionId=${sessionId}`, { auth: m.key });
  expect(list.status).toBe(200);
  expect(list.body.data.map((e: any) => e.type)).toEqual(["refund.canceled", "refund.created", "payment_session.pending"]);
  expect(list.body.data[0]).toEqual(events[2]);
  const one = await svc.call("GET", `/events/${events[1].id}`, { auth: m.key });
  expect(one.status).toBe(200);
  expect(one.body).toMatchObject({ ...events[1], deliveries: [expect.objectContaining({ state: "succeeded" })] });
  const refundsOnly = await svc.call("GET", `/events?paymentSessionId=${sessionId}&type=refund.canceled`, { auth: m.key });
  expect(refundsOnly.body.data.map((e: any) => e.id)).toEqual([events[2].id]);
}, 30_000);

test("sent, then failed: refund.failed carries the failure's reason and the transaction, after refund.sent", async () => {
  const m = await merchantWithEndpoint(svc, "failed");
  const sessionId = await sessionPaid(svc, m.key);
  const r = await svc.call("POST", `/payment-sessions/${sessionId}/refunds`, { auth: m.key, body: { reason: "duplicate" } });
  expect(r.status).toBe(201);
  const { txId, hash } = await sentInTransaction([r.body.refundId]);
  await recordRefundsMined(chainStub(), txId, { status: "reverted", logs: [], transactionHash: hash, blockNumber: 7n, gasUsed: 21_000n, effectiveGasPrice: 1n } as never);
  const events = verified(m.secret, await received(m.path, 4));
  expect(events.map((e) => e.type)).toEqual(["payment_session.pending", "refund.created", "refund.sent", "refund.failed"]);
  expect(events[2].data).toMatchObject({ status: "SENT", transactionHash: hash, failureReason: null, sequence: 3 });
  expect(events[3].data).toMatchObject({ status: "FAILED", failureReason: "reverted", transactionHash: hash, amount: "5.00", sequence: 4 });
  const shown = await svc.call("GET", `/refunds/${r.body.refundId}`, { auth: m.key });
  expect(events[3].data).toEqual({ ...shown.body, sequence: 4 });
}, 30_000);

test("a retry sends the same bytes, whatever the refund did since; the later event waits behind it", async () => {
  const m = await merchantWithEndpoint(svc, "retried");
  const sessionId = await sessionPaid(svc, m.key);
  await received(m.path, 1); // payment_session.pending, answered 200
  let refused = 0;
  rcv.behave((x) => (x.path === m.path && x.json?.type === "refund.created" && refused++ === 0 ? new Response("busy", { status: 500 }) : undefined));
  try {
    const r = await svc.call("POST", `/payment-sessions/${sessionId}/refunds`, { auth: m.key, body: { amount: "2.00", reason: "other" } });
    expect(r.status).toBe(201);
    const first = (await received(m.path, 2))[1]!;
    expect(first.answered).toBe(500);
    // The refund moves on before the retry: the retry still says what was true at refund.created.
    expect((await svc.call("POST", `/refunds/${r.body.refundId}/cancel`, { auth: m.key })).status).toBe(200);
    const rs = await received(m.path, 4);
    expect(rs.map((x) => x.json.type)).toEqual(["payment_session.pending", "refund.created", "refund.created", "refund.canceled"]);
    expect(rs[2]!.id).toBe(first.id);
    expect(rs[2]!.body).toBe(first.body);
    expect(verified(m.secret, [rs[2]!])[0].data.status).toBe("PENDING");
  } finally {
    rcv.behave(undefined);
  }
}, 30_000);

test("written while no worker runs: the refund and its event's deliveries commit together, and a worker started later sends them", async () => {
  const quiet = await startTestService({ SERVICE_WEBHOOK_WORKER: "false" });
  try {
    const m = await merchantWithEndpoint(quiet, "quiet");
    const sessionId = await sessionPaid(quiet, m.key);
    const r = await quiet.call("POST", `/payment-sessions/${sessionId}/refunds`, { auth: m.key, body: { amount: "1.00", reason: "other" } });
    expect(r.status).toBe(201);
    const q = quiet.services.database.sql;
    const rows = await q`
      select e.type, d.state from app.refund_events e join app.webhook_deliveries d on d.refund_event_id = e.id where e.refund_id = ${r.body.refundId}`;
    expect(rows.map((x) => [x.type, x.state])).toEqual([["refund.created", "waiting"]]); // behind payment_session.pending, unsent
    // A create refused leaves no event.
    const tooMuch = await quiet.call("POST", `/payment-sessions/${sessionId}/refunds`, { auth: m.key, body: { amount: "4.01", reason: "other" } });
    expect(tooMuch.status).toBe(409);
    expect((await q`select count(*)::int as n from app.refund_events where session_id = ${sessionId}`)[0]!.n).toBe(1);
    await Bun.sleep(300);
    expect(of(m.path).length).toBe(0);

    const worker = Bun.spawn(["bun", resolve(import.meta.dir, "../webhooks/main.ts")], {
      env: {
        ...process.env,
        DATABASE_URL: quiet.databaseUrl,
        SERVICE_ENCRYPTION_KEY: quiet.config.encryptionKey!.toString("base64"),
        SERVICE_WEBHOOK_POLL_MS: "100",
        SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
      },
      stdout: "ignore",
      stderr: "inherit",
    });
    try {
      const events = verified(m.secret, await received(m.path, 2));
      expect(events.map((e) => e.type)).toEqual(["payment_session.pending", "refund.created"]);
      expect(events[1].data.refundId).toBe(r.body.refundId);
    } finally {
      worker.kill("SIGTERM");
      await worker.exited;
    }
  } finally {
    await quiet.close();
  }
}, 40_000);
