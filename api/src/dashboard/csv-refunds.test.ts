/**
 * The Transactions CSV's refund rows against a real service and Postgres: each SUCCEEDED refund of
 * an exported session is a row of kind `refund` right after its session's row (kind `payment`),
 * with its amount, token, network, destination, transaction hash, times and ids; refunds not
 * SUCCEEDED (PENDING, SENT, CANCELED, FAILED) are no money out yet, or none at all, and have no row.
 * Read back with a CSV library's reading and with the misreadings the formula guard must survive.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { merchantWithUser, signIn } from "../../../testing/dashboard.ts";
import { csvRecords, misreadCells, parseCsv, startsFormula } from "../../../testing/csv.ts";

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false" });
}, 60_000);
afterAll(() => svc.close());

const sql = () => svc.services.database.sql;
const PAYER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const HASH = `0x${"5e".repeat(32)}`;

test("a SUCCEEDED refund is a row of kind refund after its payment's; other states have none; the payment rows say kind payment", async () => {
  const m = await merchantWithUser(svc, "csvr@e.example");
  const s = await svc.call("POST", "/payment-sessions", { auth: m.sandboxKey, body: { amount: "5.00", currency: "USD", referenceId: "order-r1" } });
  const id = s.body.paymentSessionId as string;
  const other = (await svc.call("POST", "/payment-sessions", { auth: m.sandboxKey, body: { amount: "1.00", currency: "USD", referenceId: "order-r2" } })).body.paymentSessionId as string;
  await sql()`
    insert into app.session_funds (session_id, chain_id, direction, tx_hash, log_index, amount, block_timestamp)
    values (${id}, 31337, 'in', ${`0x${"12".repeat(32)}`}, 0, 5000000, now())`;
  const refund = async (amount: string, metadata: Record<string, string> = {}) =>
    (await svc.call("POST", `/payment-sessions/${id}/refunds`, { auth: m.sandboxKey, body: { amount, reason: "duplicate", metadata } })).body.refundId as string;
  const done = await refund("1.25", { note: "=HYPERLINK(\"x\")" });
  const sent = await refund("0.50");
  const pending = await refund("0.25");
  const canceled = await refund("0.10");
  await svc.call("POST", `/refunds/${canceled}/cancel`, { auth: m.sandboxKey });
  // The sweeper's record of the paid one: its transaction, the payer as destination, sent and finished.
  await sql()`
    insert into app.sweep_transactions (id, kind, chain_id, relayer, nonce, tx_hash, tx_hashes, state, sent_at)
    values ('stx_csv1', 'refund', 31337, '0x00000000000000000000000000000000000000aa', 1, ${HASH}, ${JSON.stringify([HASH])}::jsonb, 'mined', now())`;
  await sql()`
    update app.refunds set state = 'SUCCEEDED', waiting_reason = null, transaction_id = 'stx_csv1', sent_at = '2026-11-02T10:00:00Z', finished_at = '2026-11-02T10:00:30Z',
           parts = jsonb_set(parts, '{0,destination}', to_jsonb(${PAYER.toLowerCase()}::text))
     where id = ${done}`;
  await sql()`update app.refunds set state = 'SENT', waiting_reason = null, transaction_id = 'stx_csv1', sent_at = now() where id = ${sent}`;

  const me = await signIn(svc, "csvr@e.example");
  const csv = await (await me.get("/dashboard/sandbox/transactions.csv")).text();
  const [header] = parseCsv(csv);
  // The new columns come last: positional readers of the earlier ones are not moved.
  expect(header!.slice(0, 17).join(",")).toBe(
    "session_id,status,status_reason,amount,currency,network_chain_id,reference_id,created_at,deposit_address,payer_address,payment_tx_hash,paid_at,settlement_tx_hash,settled_at,metadata,payment_method,payment_token",
  );
  expect(header!.slice(17)).toEqual(["kind", "refund_id", "refund_destination", "refund_tx_hash", "refund_sent_at", "refund_finished_at"]);

  const records = csvRecords(csv);
  expect(records.map((r) => [r.kind, r.session_id, r.refund_id])).toEqual([
    ["payment", other, ""],
    ["payment", id, ""],
    ["refund", id, done],
  ]);
  const row = records[2]!;
  const view = (await svc.call("GET", `/refunds/${done}`, { auth: m.sandboxKey })).body;
  expect(row).toMatchObject({
    status: "SUCCEEDED",
    status_reason: "duplicate",
    amount: "1.25",
    currency: "USD",
    network_chain_id: "31337",
    reference_id: "order-r1",
    created_at: view.createdAt,
    deposit_address: "",
    payer_address: "",
    payment_tx_hash: "",
    payment_token: "TUSD",
    refund_destination: PAYER,
    refund_tx_hash: HASH,
    refund_sent_at: "2026-11-02T10:00:00.000Z",
    refund_finished_at: "2026-11-02T10:00:30.000Z",
  });
  // The refund's own metadata, formula-guarded as every value is.
  expect(JSON.parse(row.metadata!.replace(":\"'=", ':"='))).toEqual({ note: "=HYPERLINK(\"x\")" });
  expect(misreadCells(csv).filter(startsFormula)).toEqual([]);
  // The payment row is the session's, as before, and marks its kind.
  expect(records[1]).toMatchObject({ status: "PENDING", amount: "5.00", refund_destination: "", refund_tx_hash: "" });
  for (const r of [sent, pending, canceled]) expect(csv).not.toContain(r);
  // A filter that leaves the session out leaves its refunds out too.
  const filtered = csvRecords(await (await me.get("/dashboard/sandbox/transactions.csv?q=order-r2")).text());
  expect(filtered.map((r) => [r.kind, r.session_id])).toEqual([["payment", other]]);
});
