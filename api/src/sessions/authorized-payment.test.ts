/**
 * Paying by a signed EIP-3009 authorization, seen on-chain and not trusted from our own
 * submission (issue 29, parts 4–5), end to end on real parts: anvil (blocks only when a
 * transaction comes, so a reorg's depth is known), the Ponder indexer in bounded mode (it keeps
 * only our recorded nonces), the service's runner and webhook worker. The payer records an
 * authorization through the route; a STRANGER — a wallet of its own — submits it with the
 * recorded signature. Our relayer is off here (SERVICE_SWEEPER=false, and no sweep is needed to
 * settle these payments): the stranger is the only submitter, so the race with our own
 * submission cannot decide the test, and what the session shows can only come from the chain
 * (the relayer's side of a stranger first: sweeps/send-authorization.test.ts):
 *   - PENDING → FUNDED → SUCCEEDED, no sweep, webhooks saying the method and the payer;
 *   - the same with our relayer started as the stranger's transaction lands: it sends nothing;
 *   - after the merchant canceled: ERROR paid_after_cancel, the money the merchant's;
 *   - a reorg that takes the settled payment away: reported as any reorged payment (funds_reverted).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { getAddress, parseSignature, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { eip3009Abi } from "../../../shared/contracts/eip3009.ts";
import { ANVIL_ACCOUNTS } from "../../../shared/devchain/index.ts";
import { eventually } from "../../../testing/eventually.ts";
import { startLifecycleStack, type LifecycleStack } from "../../../testing/lifecycle.ts";
import { checkEventsAgainstDocument } from "../../../testing/documented-events.ts";
import { FAST_WEBHOOK_ENV, startReceiver, type Receiver } from "../../../testing/webhook-receiver.ts";
import { signIn, TEST_PASSWORD } from "../../../testing/dashboard.ts";
import { createUser } from "../dashboard/users.ts";
import { startSweeper } from "../sweeps/sweeper.ts";
import { DEV_RELAYER_ADDRESS, DEV_RELAYER_PRIVATE_KEY } from "../credentials/relayer.ts";
import { csvRecords } from "../../../testing/csv.ts";

const stranger = privateKeyToAccount(ANVIL_ACCOUNTS[1].privateKey);

let stack: LifecycleStack;
let hooks: Receiver;
beforeAll(async () => {
  stack = await startLifecycleStack({ env: { SERVICE_INDEX_MODE: "bounded", SERVICE_SWEEPER: "false", ...FAST_WEBHOOK_ENV }, heartbeatSeconds: 0 });
  hooks = startReceiver();
  const ep = await stack.svc.call("POST", "/webhook-endpoints", { auth: stack.key, body: { url: hooks.url } });
  expect(ep.status).toBe(201);
}, 90_000);
afterAll(async () => {
  await stack?.close();
  await hooks?.stop();
});

const sql = () => stack.svc.services.database.sql;
const chain = () => stack.chains[0]!;

interface Offer {
  domain: { name: string; version: string; chainId: number; verifyingContract: Address };
  types: { TransferWithAuthorization: { name: string; type: string }[] };
  message: { to: Address; value: string; validAfter: string; validBefore: string; nonce: Hex };
}

/** A session, and its payer's authorization recorded through the route (a payer with TestUSD and no gas coin). */
async function sessionPaidByAuthorization(amount: string) {
  const s = await stack.create(amount);
  const view = (await stack.svc.call("GET", "/api/payment-sessions", { auth: s.token })).body;
  const offer = view.networks[0].gasless as Offer;
  const payer = privateKeyToAccount(generatePrivateKey());
  await chain().mint(payer.address, BigInt(offer.message.value));
  const m = offer.message;
  const message = { from: payer.address, to: m.to, value: BigInt(m.value), validAfter: BigInt(m.validAfter), validBefore: BigInt(m.validBefore), nonce: m.nonce };
  const signature = await payer.signTypedData({ domain: offer.domain, types: offer.types, primaryType: "TransferWithAuthorization", message });
  const r = await stack.svc.call("POST", "/api/payment-sessions/authorizations", {
    auth: s.token,
    body: { chainId: offer.domain.chainId, from: payer.address, to: m.to, value: m.value, validAfter: m.validAfter, validBefore: m.validBefore, nonce: m.nonce, signature },
  });
  expect(r.status).toBe(202);
  return { ...s, payer: payer.address, settlement: getAddress(m.to), value: BigInt(m.value) };
}

/** The stranger carries out the recorded authorization, with the signature as recorded (v, r, s: the other overload). */
async function submitAsStranger(sessionId: string) {
  const [a] = await sql()`select from_address, to_address, value::text, valid_after::text, valid_before::text, nonce, signature from app.payment_authorizations where session_id = ${sessionId}`;
  const sig = parseSignature(a!.signature as Hex);
  const hash = await chain().walletClient.writeContract({
    account: stranger,
    chain: chain().walletClient.chain,
    address: chain().token,
    abi: eip3009Abi,
    functionName: "transferWithAuthorization",
    args: [getAddress(a!.from_address), getAddress(a!.to_address), BigInt(a!.value), BigInt(a!.valid_after), BigInt(a!.valid_before), a!.nonce as Hex, Number(sig.v ?? 27n + BigInt(sig.yParity)), sig.r, sig.s],
  });
  const receipt = await chain().publicClient.waitForTransactionReceipt({ hash });
  expect(receipt.status).toBe("success");
  expect(getAddress(receipt.from)).toBe(stranger.address);
  return receipt;
}

const sweepsOf = async (id: string) => Number((await sql()`select count(*)::int as n from app.sweeps where session_id = ${id}`)[0]!.n);
const hooksFor = (id: string) => hooks.received.filter((r) => r.json?.data?.paymentSessionId === id).map((r) => r.json.data);

test("a stranger submits the payer's signature: PENDING → FUNDED → SUCCEEDED with no sweep; the history and webhooks say the method and the payer", async () => {
  const s = await sessionPaidByAuthorization("7.50");
  const payer = s.payer;
  const receipt = await submitAsStranger(s.id);
  const done = await stack.waitFor(s.id, "SUCCEEDED");
  expect(done.history.map((h) => [h.status, h.reason])).toEqual([
    ["PENDING", "created"],
    ["FUNDED", "paid"],
    ["SUCCEEDED", "swept"],
  ]);
  expect(done.history[1]!.detail).toEqual({
    chainId: 31337,
    amount: "7500000",
    overpaid: "0",
    txHashes: [receipt.transactionHash],
    method: "authorization",
    payer,
    tokens: [{ token: getAddress(chain().token), amount: "7500000" }],
  });
  expect(done.history[2]!.detail).toEqual({ chainId: 31337, sweepTxHash: receipt.transactionHash, method: "authorization" });
  // The money went straight to the settlement address; we spent nothing on it.
  expect(await sweepsOf(s.id)).toBe(0);
  // The ledger has it once in and once settled, each with the event that reported it.
  const ledger = await sql()`select direction, tx_hash, amount::text, event_id is not null as reported from app.session_funds where session_id = ${s.id} order by direction`;
  expect(ledger.map((r) => ({ ...r }))).toEqual([
    { direction: "in", tx_hash: receipt.transactionHash, amount: "7500000", reported: true },
    { direction: "out", tx_hash: receipt.transactionHash, amount: "7500000", reported: true },
  ]);
  await eventually(async () => (hooksFor(s.id).length >= 3 ? true : undefined), "three webhooks delivered");
  const data = hooksFor(s.id);
  expect(data.map((d) => d.status)).toEqual(["PENDING", "FUNDED", "SUCCEEDED"]);
  expect(data[1]).toMatchObject({ reason: "paid", detail: { method: "authorization", payer } });
  expect(data[2]).toMatchObject({ reason: "swept", detail: { method: "authorization", sweepTxHash: receipt.transactionHash } });
  // The payer's view says how it was paid, and by whom.
  const view = (await stack.svc.call("GET", "/api/payment-sessions", { auth: s.token })).body;
  expect(view.payments).toEqual([{ chainId: 31337, txHash: receipt.transactionHash, amountBaseUnits: "7500000", confirmations: 1, method: "authorization", payer: s.payer, token: getAddress(chain().token) }]);
  // The dashboard: the payment's page says who paid and how; the CSV has the method and the payer.
  const [owner] = await sql()`select merchant_id from app.payment_sessions where id = ${s.id}`;
  await createUser(stack.svc.services.database.db, owner!.merchant_id as string, "auth-payer@shop.example", TEST_PASSWORD);
  const me = await signIn(stack.svc, "auth-payer@shop.example");
  const page = await (await me.get(`/dashboard/sandbox/transactions/${s.id}`)).text();
  expect(page).toMatch(new RegExp(`${s.payer}</(code|a)> <span class="muted">by signed authorization</span>`));
  expect(page).toContain("moved the full amount straight to your settlement address");
  expect(page).toContain("Payment by authorization");
  expect(page).toContain("Settled by that payment (no sweep)");
  expect(page).not.toContain("Sweep to settlement");
  const [cells] = csvRecords(await (await me.get(`/dashboard/sandbox/transactions.csv?q=${s.id}`)).text());
  expect(cells).toMatchObject({ payer_address: s.payer, payment_method: "authorization", payment_tx_hash: receipt.transactionHash, settlement_tx_hash: receipt.transactionHash });
}, 60_000);

test("our relayer running beside a stranger who submitted first: the session SUCCEEDED, the relayer sent nothing (0 transactions, nonce unchanged)", async () => {
  const s = await sessionPaidByAuthorization("6.25");
  const nonce = await chain().publicClient.getTransactionCount({ address: DEV_RELAYER_ADDRESS });
  const receipt = await submitAsStranger(s.id);
  // The relayer starts as the stranger's transaction lands: it finds the authorization recorded
  // and due, the session PENDING or already FUNDED, and must spend nothing on it.
  const relayer = await startSweeper({
    sql: sql(),
    networks: stack.svc.services.networks.filter((n) => n.chainId === 31337),
    relayerKeys: { 31337: DEV_RELAYER_PRIVATE_KEY },
    settings: { batchSize: 50, maxAttempts: 5, stuckMs: 60_000, pollMs: 50, retryBaseMs: 100, maxTxPerMinute: 600, maxTxPerHour: 10_000, maxTxPerSession: 8 },
  });
  try {
    const done = await stack.waitFor(s.id, "SUCCEEDED");
    expect(done.history[2]!.detail).toEqual({ chainId: 31337, sweepTxHash: receipt.transactionHash, method: "authorization" });
    const record = await eventually(async () => {
      const [r] = await sql()`select status, reason, transaction_id from app.payment_authorizations where session_id = ${s.id}`;
      return r?.status === "failed" ? r : undefined;
    }, "the record failed");
    expect(["used_elsewhere", "session_closed"]).toContain(record.reason);
    expect(record.transaction_id).toBeNull();
    expect(await chain().publicClient.getTransactionCount({ address: DEV_RELAYER_ADDRESS })).toBe(nonce);
    expect(Number((await sql()`select count(*)::int as n from app.sweep_transactions where kind = 'authorization'`)[0]!.n)).toBe(0);
    expect(await sweepsOf(s.id)).toBe(0);
  } finally {
    await relayer.stop();
  }
}, 60_000);

test("the merchant cancels, then a stranger submits the signature (still within validBefore): ERROR paid_after_cancel, the money the merchant's, no sweep", async () => {
  const s = await sessionPaidByAuthorization("3.00");
  const cancel = await stack.svc.call("POST", `/payment-sessions/${s.id}/cancel`, { auth: stack.key });
  expect(cancel.status).toBe(200);
  expect(cancel.body.status).toBe("CANCELED");
  const receipt = await submitAsStranger(s.id);
  const e = await stack.waitFor(s.id, "ERROR");
  expect(e.statusReason).toBe("paid_after_cancel");
  expect(e.history.find((h) => h.reason === "paid_after_cancel")!.detail).toEqual({
    chainId: 31337,
    amount: "3000000",
    txHashes: [receipt.transactionHash],
    method: "authorization",
    payer: s.payer,
    tokens: [{ token: getAddress(chain().token), amount: "3000000" }],
  });
  // Settled at once: said as money settled outside SUCCEEDED, never swept.
  await eventually(async () => ((await stack.status(s.id)).history.some((h) => h.reason === "funds_settled") ? true : undefined), "funds_settled reported");
  expect((await stack.status(s.id)).history.find((h) => h.reason === "funds_settled")!.detail).toMatchObject({ txHash: receipt.transactionHash, amountBaseUnits: "3000000" });
  expect(await sweepsOf(s.id)).toBe(0);
}, 60_000);

test("a reorg takes the settled payment by authorization away: reported like any reorged payment (funds_reverted, received and settled)", async () => {
  const s = await sessionPaidByAuthorization("2.00");
  const receipt = await submitAsStranger(s.id);
  await stack.waitFor(s.id, "SUCCEEDED");
  // Nothing was mined since: replace the payment's block with an empty one.
  expect(await chain().publicClient.getBlockNumber()).toBe(receipt.blockNumber);
  await chain().rpc("anvil_reorg", [1, []]);
  const reverted = async () => (await stack.status(s.id)).history.filter((h) => h.reason === "funds_reverted");
  await eventually(async () => ((await reverted()).length === 2 ? true : undefined), "both movements reported reverted", 20_000);
  expect((await reverted()).map((h) => h.detail).sort((a, b) => String(a.direction).localeCompare(String(b.direction)))).toEqual([
    { chainId: 31337, direction: "received", txHash: receipt.transactionHash, amountBaseUnits: "2000000", statusReason: "swept" },
    { chainId: 31337, direction: "settled", txHash: receipt.transactionHash, amountBaseUnits: "2000000", statusReason: "swept" },
  ]);
  expect((await stack.status(s.id)).status).toBe("SUCCEEDED");
}, 60_000);

test("every event these tests produced matches the document's schema for its reason", async () => {
  const checked = await checkEventsAgainstDocument(stack.svc, stack.key);
  expect(checked.problems).toEqual([]);
  expect([...checked.reasons]).toEqual(expect.arrayContaining(["created", "paid", "swept", "paid_after_cancel", "funds_settled", "funds_reverted"]));
}, 30_000);
