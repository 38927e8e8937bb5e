/**
 * Automatic returns on the real stack (anvil with TestUSD, the Ponder indexer, the service's
 * runner and sweeper, real Postgres): money that arrived when it should not have goes back to the
 * address that paid it once the merchant's delay has passed — an overpayment's excess exactly, a
 * late payment in full, what an underpaid session received — read from the refund transaction's
 * receipt (its Transfer logs), not from a status. Off, nothing goes back; the merchant refunding
 * first or keeping it, nothing goes back by itself; several workers, or one started again, return
 * it once.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createWalletClient, erc20Abi, getAddress, http, parseEventLogs, type Address, type Hex } from "viem";
import { startLifecycleStack, type LifecycleStack } from "../../../testing/lifecycle.ts";
import { eventually } from "../../../testing/eventually.ts";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { mintTestUsd } from "../../../shared/contracts/deploy.ts";
import { ensureRefundVaultsDeployed, refundVaultAddress, refundVaultSalt } from "../../../shared/contracts/refund-vaults.ts";
import { DEV_RELAYER_ADDRESS, DEV_RELAYER_PRIVATE_KEY } from "../credentials/relayer.ts";
import { startSweeper, type Sweeper } from "../sweeps/sweeper.ts";
import { runDueReturns } from "./auto-returns.ts";

let stack: LifecycleStack;
let vaults: Address;
let other: { merchantId: string; key: string };
const DELAY = 2;

beforeAll(async () => {
  stack = await startLifecycleStack();
  const c = stack.chains[0]!;
  vaults = (await ensureRefundVaultsDeployed({ publicClient: c.publicClient, walletClient: c.walletClient }, DEV_RELAYER_ADDRESS)).address;
  const on = await put(stack.key, { automaticReturns: true, delaySeconds: DELAY });
  expect(on).toEqual({ automaticReturns: true, delaySeconds: DELAY });
  const m = await stack.svc.merchant("Automatic returns off");
  other = { merchantId: m.merchant.id, key: m.sandboxKey };
  for (const key of [stack.key, other.key]) await mint(await vaultOf(key), 1_000_000_000n); // each merchant funds its refund balance
}, 90_000);
afterAll(async () => {
  await stack?.close();
});

const chain = () => stack.chains[0]!;
const sql = () => stack.svc.services.database.sql;
const put = async (key: string, body: Record<string, unknown>) => (await stack.svc.call("PUT", "/refund-settings", { auth: key, body })).body;
const mint = (to: Address, amount: bigint) => mintTestUsd({ publicClient: chain().publicClient, walletClient: chain().walletClient, to, amount, token: chain().token });
const balance = (holder: Address) => chain().publicClient.readContract({ address: chain().token, abi: erc20Abi, functionName: "balanceOf", args: [holder] });

async function vaultOf(key: string): Promise<Address> {
  const s = await stack.svc.call("GET", "/refund-balances", { auth: key });
  return getAddress(s.body.data[0].address);
}

/** A payer of its own per test (a fresh key, given gas by anvil), so balances never mix. */
async function newPayer() {
  const account = privateKeyToAccount(generatePrivateKey());
  await fetch(chain().chain.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "anvil_setBalance", params: [account.address, "0xde0b6b3a7640000"] }) });
  const walletClient = createWalletClient({ account, transport: http(chain().chain.rpcUrl) });
  return { walletClient, address: account.address };
}

/** The payer sends `units` of TestUSD from its own wallet into the session's deposit address. */
async function payFrom(payer: Awaited<ReturnType<typeof newPayer>>, s: { networks: { depositAddress: string }[] }, units: bigint) {
  await mint(payer.address, units);
  const hash = await payer.walletClient.writeContract({ account: payer.walletClient.account, chain: null, address: chain().token, abi: erc20Abi, functionName: "transfer", args: [s.networks[0]!.depositAddress as Address, units] });
  await chain().publicClient.waitForTransactionReceipt({ hash });
}

async function createWith(key: string, amount: string) {
  const r = await stack.svc.call("POST", "/payment-sessions", { auth: key, body: { amount, currency: "USD" } });
  expect(r.status).toBe(201);
  return { id: r.body.paymentSessionId as string, networks: r.body.networks as { chainId: number; depositAddress: string }[] };
}

const refundsOf = async (id: string, key = stack.key) => (await stack.svc.call("GET", `/payment-sessions/${id}/refunds`, { auth: key })).body.data as Record<string, any>[];
const returnsOf = async (id: string, key = stack.key) => (await stack.svc.call("GET", `/payment-sessions/${id}/automatic-returns`, { auth: key })).body.data as Record<string, any>[];

/** Until the session's one refund has SUCCEEDED; it. */
async function succeededRefund(id: string): Promise<Record<string, any>> {
  return eventually(async () => {
    const rs = await refundsOf(id);
    return rs.length === 1 && rs[0]!.status === "SUCCEEDED" ? rs[0] : undefined;
  }, `${id}'s automatic return to succeed`, 45_000);
}

/** The receipt's Transfer logs of a refund's transaction, as [token, from, to, value]. */
async function transfersOf(txHash: Hex) {
  const receipt = await chain().publicClient.getTransactionReceipt({ hash: txHash });
  expect(receipt.status).toBe("success");
  return parseEventLogs({ abi: erc20Abi, eventName: "Transfer", logs: receipt.logs }).map((l) => [getAddress(l.address), l.args.from, l.args.to, l.args.value]);
}

test("the setting: off by default, shown and changed per environment; a delay out of range is refused and changes nothing", async () => {
  expect((await stack.svc.call("GET", "/refund-settings", { auth: other.key })).body).toEqual({ automaticReturns: false, delaySeconds: 86400 });
  expect((await stack.svc.call("GET", "/refund-settings", { auth: stack.liveKey })).body).toEqual({ automaticReturns: false, delaySeconds: 86400 });
  for (const delaySeconds of [0, 2_592_001, 1.5, "60"]) {
    const r = await stack.svc.call("PUT", "/refund-settings", { auth: stack.key, body: { delaySeconds } });
    expect(r.status).toBe(400);
    expect(r.body.error.param).toBe("delaySeconds");
  }
  expect((await stack.svc.call("GET", "/refund-settings", { auth: stack.key })).body).toEqual({ automaticReturns: true, delaySeconds: DELAY });
  // Each change has its line in the security history, with the key that made it; a refused one has none.
  const lines = await sql()`select action, environment, detail from app.security_events where action = 'refund_settings_changed' order by created_at`;
  expect(lines.map((l) => [l.action, l.environment, l.detail.automaticReturns, l.detail.delaySeconds, l.detail.via])).toEqual([["refund_settings_changed", "sandbox", true, DELAY, "api"]]);
});

test("overpaid by 0.01: after the delay exactly the excess goes back to the payer", async () => {
  const payer = await newPayer();
  const s = await stack.create("5.00");
  await payFrom(payer, s, 5_010_000n);
  await stack.waitFor(s.id, "FUNDED", 30_000);
  const [waiting] = await returnsOf(s.id);
  expect(waiting).toMatchObject({ reason: "overpayment", status: "scheduled", refundId: null });
  const started = Date.now();
  const r = await succeededRefund(s.id);
  expect(new Date(r.createdAt).getTime()).toBeGreaterThanOrEqual(new Date(waiting!.dueAt).getTime());
  expect(r).toMatchObject({ amount: "0.01", reason: "overpayment", metadata: { automaticReturn: waiting!.automaticReturnId } });
  expect(await transfersOf(r.transactionHash)).toEqual([[getAddress(chain().token), await vaultOf(stack.key), payer.address, 10_000n]]);
  expect(await balance(payer.address)).toBe(10_000n);
  expect(await returnsOf(s.id)).toMatchObject([{ status: "refunded", refundId: r.refundId }]);
  expect(Date.now() - started).toBeLessThan(45_000);
}, 90_000);

test("a payment after the session expired goes back in full (late_payment)", async () => {
  const payer = await newPayer();
  const s = await stack.create("3.00");
  await stack.svc.call("POST", `/sandbox/payment-sessions/${s.id}/expire`, { auth: stack.key, body: {} });
  await stack.waitFor(s.id, "CANCELED", 30_000);
  await payFrom(payer, s, 3_000_000n);
  await stack.waitFor(s.id, "ERROR", 30_000);
  const r = await succeededRefund(s.id);
  expect(r).toMatchObject({ amount: "3.00", reason: "late_payment" });
  expect(await transfersOf(r.transactionHash)).toEqual([[getAddress(chain().token), await vaultOf(stack.key), payer.address, 3_000_000n]]);
  expect(await balance(payer.address)).toBe(3_000_000n);
}, 90_000);

test("an underpaid session that expired: what it received goes back (underpaid_expired)", async () => {
  const payer = await newPayer();
  const s = await stack.create("5.00");
  await payFrom(payer, s, 2_000_000n);
  // Its block is before the expiry, and an expiry is decided only once the index is past it: it counts.
  await stack.svc.call("POST", `/sandbox/payment-sessions/${s.id}/expire`, { auth: stack.key, body: {} });
  const ended = await stack.waitFor(s.id, "ERROR", 30_000);
  expect(ended.statusReason).toBe("underpaid");
  const r = await succeededRefund(s.id);
  expect(r).toMatchObject({ amount: "2.00", reason: "underpaid_expired" });
  expect(await transfersOf(r.transactionHash)).toEqual([[getAddress(chain().token), await vaultOf(stack.key), payer.address, 2_000_000n]]);
}, 90_000);

test("automatic returns off: an overpayment stays with the merchant", async () => {
  const payer = await newPayer();
  const s = await createWith(other.key, "5.00");
  await payFrom(payer, s, 5_010_000n);
  await eventually(async () => ((await stack.svc.call("GET", `/payment-sessions/${s.id}`, { auth: other.key })).body.status === "SUCCEEDED" ? true : undefined), "the session to succeed", 30_000);
  await Bun.sleep((DELAY + 3) * 1000);
  expect(await returnsOf(s.id, other.key)).toEqual([]);
  expect(await refundsOf(s.id, other.key)).toEqual([]);
  expect(await balance(payer.address)).toBe(0n);
}, 90_000);

test("the merchant refunds first, or keeps it: nothing goes back by itself", async () => {
  await put(stack.key, { delaySeconds: 6 }); // time for the merchant to act
  try {
    const refunder = await newPayer();
    const a = await stack.create("5.00");
    await payFrom(refunder, a, 5_010_000n);
    await stack.waitFor(a.id, "FUNDED", 30_000);
    expect(await returnsOf(a.id)).toMatchObject([{ status: "scheduled" }]);
    const own = await stack.svc.call("POST", `/payment-sessions/${a.id}/refunds`, { auth: stack.key, body: { amount: "0.01", reason: "overpayment" } });
    expect(own.status).toBe(201);
    expect(await returnsOf(a.id)).toMatchObject([{ status: "merchant_refunded", refundId: null }]);

    const keeper = await newPayer();
    const b = await stack.create("5.00");
    await payFrom(keeper, b, 5_010_000n);
    await stack.waitFor(b.id, "FUNDED", 30_000);
    const kept = await stack.svc.call("POST", `/payment-sessions/${b.id}/automatic-returns/keep`, { auth: stack.key, body: {} });
    expect(kept.status).toBe(200);
    expect(kept.body.data).toMatchObject([{ status: "kept" }]);

    await Bun.sleep(9_000); // past the due time
    const mine = await refundsOf(a.id);
    expect(mine.map((r) => [r.refundId, r.metadata])).toEqual([[own.body.refundId, {}]]);
    expect(await refundsOf(b.id)).toEqual([]);
    expect(await returnsOf(b.id)).toMatchObject([{ status: "kept" }]);
    await eventually(async () => ((await balance(refunder.address)) === 10_000n ? true : undefined), "the merchant's own refund to land", 30_000);
    expect(await balance(keeper.address)).toBe(0n);
  } finally {
    await put(stack.key, { delaySeconds: DELAY });
  }
}, 120_000);

test("two more workers running, and a worker started again: one refund", async () => {
  const extra: Sweeper[] = [];
  const sweeper = () =>
    startSweeper({
      sql: sql(),
      networks: stack.svc.services.networks.filter((n) => n.chainId === chain().chain.chainId),
      relayerKeys: { [chain().chain.chainId]: DEV_RELAYER_PRIVATE_KEY },
      settings: stack.svc.services.config.sweeps,
      refunds: { maxPerDayMinor: 5_000_000n, maxPerRefundMinor: 1_000_000n },
    });
  extra.push(await sweeper(), await sweeper());
  try {
    const payer = await newPayer();
    const s = await stack.create("5.00");
    await payFrom(payer, s, 5_250_000n);
    await stack.waitFor(s.id, "FUNDED", 30_000);
    await extra[0]!.stop(); // one stops, and starts again
    extra.push(await sweeper());
    const r = await succeededRefund(s.id);
    expect(r.amount).toBe("0.25");
    // However many workers look again, and however often: the timer is decided, its refund made once.
    await Promise.all([1, 2, 3].map(() => runDueReturns(sql(), chain().chain.chainId, { maxPerRefundMinor: 1_000_000n })));
    await Bun.sleep(1000);
    expect((await refundsOf(s.id)).map((x) => x.refundId)).toEqual([r.refundId]);
    expect(await transfersOf(r.transactionHash)).toEqual([[getAddress(chain().token), await vaultOf(stack.key), payer.address, 250_000n]]);
    expect(await balance(payer.address)).toBe(250_000n);
    const rows = await sql()`select state from app.auto_returns where session_id = ${s.id}`;
    expect(rows.map((x) => x.state)).toEqual(["refunded"]);
  } finally {
    await Promise.all(extra.map((x) => x.stop()));
  }
}, 120_000);

test("many workers deciding the same due timer at once: one refund", async () => {
  // A timer made due by hand, with the setting on, decided by five workers at the same moment.
  const payer = await newPayer();
  await put(stack.key, { delaySeconds: 3600 });
  try {
    const s = await stack.create("5.00");
    await payFrom(payer, s, 5_030_000n);
    await stack.waitFor(s.id, "FUNDED", 30_000);
    expect(await returnsOf(s.id)).toMatchObject([{ status: "scheduled" }]);
    await sql()`update app.auto_returns set due_at = now() where session_id = ${s.id}`;
    const decided = await Promise.all([1, 2, 3, 4, 5].map(() => runDueReturns(sql(), chain().chain.chainId, { maxPerRefundMinor: 1_000_000n })));
    // At most one of the five took it (the stack's own sweeper, a sixth worker, may have been first).
    expect(decided.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(1);
    const r = await succeededRefund(s.id);
    const all = await sql()`select count(*)::int as n from app.refunds where session_id = ${s.id}`;
    expect(all[0]!.n).toBe(1);
    expect((await sql()`select state from app.auto_returns where session_id = ${s.id}`).map((x) => x.state)).toEqual(["refunded"]);
    expect(r.amount).toBe("0.03");
    expect(await transfersOf(r.transactionHash)).toEqual([[getAddress(chain().token), await vaultOf(stack.key), payer.address, 30_000n]]);
  } finally {
    await put(stack.key, { delaySeconds: DELAY });
  }
}, 90_000);

test("a return that falls due after the setting was turned off, or above the per-refund limit, is skipped, saying why", async () => {
  await put(stack.key, { delaySeconds: 3600 });
  try {
    const sessions = [];
    // 0.02 over the price; and 10,005.00 over it, above SERVICE_REFUND_MAX_PER_REFUND (10,000.00).
    for (const units of [5_020_000n, 10_010_000_000n]) {
      const s = await stack.create("5.00");
      await payFrom(await newPayer(), s, units);
      await stack.waitFor(s.id, "FUNDED", 30_000);
      expect(await returnsOf(s.id)).toMatchObject([{ status: "scheduled" }]);
      sessions.push(s);
    }
    const [off, tooLarge] = sessions;
    const decided = (id: string) => eventually(async () => ((await returnsOf(id))[0]!.status !== "scheduled" ? true : undefined), "the sweeper to decide the due return", 20_000);
    await sql()`update app.auto_returns set due_at = now() where session_id = ${tooLarge!.id}`; // its delay over
    await decided(tooLarge!.id);
    expect(await returnsOf(tooLarge!.id)).toMatchObject([{ status: "skipped", outcome: "amount_too_large", refundId: null }]);
    await put(stack.key, { automaticReturns: false });
    await sql()`update app.auto_returns set due_at = now() where session_id = ${off!.id}`;
    await decided(off!.id);
    expect(await returnsOf(off!.id)).toMatchObject([{ status: "skipped", outcome: "disabled", refundId: null }]);
    for (const s of sessions) expect(await refundsOf(s.id)).toEqual([]);
  } finally {
    await put(stack.key, { automaticReturns: true, delaySeconds: DELAY });
  }
}, 90_000);
