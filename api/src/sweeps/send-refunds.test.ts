/**
 * Refunds sent from the refund balance on the real stack (anvil with TestUSD, USDC-like, and
 * TestUSDT, USDT-like; the Ponder indexer; the service's runner and sweeper): a payer pays from its
 * own wallet, the merchant refunds, the refund waits while the merchant's vault is empty
 * (insufficient_refund_balance), goes out once it is funded, and lands at the payer exactly —
 * read from the receipt's Transfer logs and the balances, not from its status alone. The relayer's
 * nonces stay one contiguous sequence with the sweeps'.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { erc20Abi, getAddress, parseEventLogs, type Address, type Hex } from "viem";
import { startLifecycleStack, type LifecycleStack } from "../../../testing/lifecycle.ts";
import { eventually } from "../../../testing/eventually.ts";
import { localClients } from "../../../shared/devchain/clients.ts";
import { mintTestUsd, predictedTestUsdtAddress } from "../../../shared/contracts/deploy.ts";
import { ensureRefundVaultsDeployed, refundVaultAddress, refundVaultSalt } from "../../../shared/contracts/refund-vaults.ts";
import { DEV_RELAYER_ADDRESS } from "../credentials/relayer.ts";

let stack: LifecycleStack;
let vaults: Address;
let payer: ReturnType<typeof localClients>;
const USDT = predictedTestUsdtAddress();

beforeAll(async () => {
  stack = await startLifecycleStack();
  const c = stack.chains[0]!;
  vaults = (await ensureRefundVaultsDeployed({ publicClient: c.publicClient, walletClient: c.walletClient }, DEV_RELAYER_ADDRESS)).address;
  payer = localClients(c.chain.rpcUrl, c.chain.chainId, 1); // anvil #1: #0 deploys and mints, #2 is the relayer
}, 90_000);
afterAll(async () => {
  await stack?.close();
});

const chain = () => stack.chains[0]!;
const sql = () => stack.svc.services.database.sql;
const payerAddress = () => payer.walletClient.account!.address;
const balance = (token: Address, holder: Address) => chain().publicClient.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [holder] });
const mint = (to: Address, amount: bigint, token: Address) => mintTestUsd({ publicClient: chain().publicClient, walletClient: chain().walletClient, to, amount, token });

/** A session paid from the payer's own wallet (a Transfer from its address), SUCCEEDED; its merchant's vault. */
async function paidByPayer(amount: string, token: Address, units: bigint): Promise<{ id: string; vault: Address }> {
  const s = await stack.create(amount);
  await mint(payerAddress(), units, token);
  const hash = await payer.walletClient.writeContract({ account: payer.walletClient.account!, chain: null, address: token, abi: erc20Abi, functionName: "transfer", args: [s.networks[0]!.depositAddress as Address, units] });
  await chain().publicClient.waitForTransactionReceipt({ hash });
  await stack.waitFor(s.id, "SUCCEEDED", 30_000);
  const [m] = await sql()`select merchant_id, environment from app.payment_sessions where id = ${s.id}`;
  return { id: s.id, vault: refundVaultAddress(vaults, refundVaultSalt(m!.merchant_id as string, m!.environment as string)) };
}

const refund = (id: string, body: Record<string, unknown>) => stack.svc.call("POST", `/payment-sessions/${id}/refunds`, { auth: stack.key, body });
const get = async (refundId: string) => (await stack.svc.call("GET", `/refunds/${refundId}`, { auth: stack.key })).body;

/** The receipt's Transfer logs of the refund's transaction, as [token, from, to, value]. */
async function transfersOf(txHash: Hex) {
  const receipt = await chain().publicClient.getTransactionReceipt({ hash: txHash });
  expect(receipt.status).toBe("success");
  return parseEventLogs({ abi: erc20Abi, eventName: "Transfer", logs: receipt.logs }).map((l) => [getAddress(l.address), l.args.from, l.args.to, l.args.value]);
}

test("a partial refund in the USDC-like token waits for an empty balance, goes out once funded, and lands at the payer exactly", async () => {
  const s = await paidByPayer("5.00", chain().token, 5_000_000n);
  const r = await refund(s.id, { amount: "1.25", reason: "requested_by_customer" });
  expect(r.status).toBe(201);
  expect(r.body.parts[0].destination).toBe(getAddress(payerAddress()));
  const waiting = await eventually(async () => {
    const v = await get(r.body.refundId);
    return v.waitingReason === "insufficient_refund_balance" ? v : undefined;
  }, "the refund to wait for its balance", 20_000);
  expect(waiting.status).toBe("PENDING");
  const before = await balance(chain().token, payerAddress());
  await mint(s.vault, 2_000_000n, chain().token); // the merchant funds its refund balance
  const done = await eventually(async () => {
    const v = await get(r.body.refundId);
    return v.status === "SUCCEEDED" ? v : undefined;
  }, "the refund to succeed once funded", 40_000);
  expect(done).toMatchObject({ waitingReason: null, failureReason: null });
  expect(await transfersOf(done.transactionHash)).toEqual([[getAddress(chain().token), s.vault, getAddress(payerAddress()), 1_250_000n]]);
  expect((await balance(chain().token, payerAddress())) - before).toBe(1_250_000n);
  expect(await balance(chain().token, s.vault)).toBe(750_000n);
  // The API shows the same balance at the same address, read from the chain.
  const balances = (await stack.svc.call("GET", "/refund-balances", { auth: stack.key })).body.data;
  expect(balances[0]).toMatchObject({ chainId: chain().chain.chainId, address: s.vault });
  expect(balances[0].tokens.find((t: { tokenAddress: string }) => getAddress(t.tokenAddress) === getAddress(chain().token))).toMatchObject({ balanceBaseUnits: "750000", balance: "0.75" });
  expect((await stack.status(s.id)) as unknown).toMatchObject({ amountRefunded: "1.25" });
}, 90_000);

test("a full refund in the USDT-like token (its transfer returns nothing) lands at the payer exactly", async () => {
  const s = await paidByPayer("3.00", USDT, 3_000_000n);
  await mint(s.vault, 5_000_000n, USDT);
  const before = await balance(USDT, payerAddress());
  const r = await refund(s.id, { reason: "duplicate" });
  expect(r.status).toBe(201);
  expect(r.body).toMatchObject({ amount: "3.00", parts: [{ tokenAddress: getAddress(USDT), amountBaseUnits: "3000000" }] });
  const done = await eventually(async () => {
    const v = await get(r.body.refundId);
    return v.status === "SUCCEEDED" ? v : undefined;
  }, "the USDT refund to succeed", 40_000);
  expect(await transfersOf(done.transactionHash)).toEqual([[getAddress(USDT), s.vault, getAddress(payerAddress()), 3_000_000n]]);
  expect((await balance(USDT, payerAddress())) - before).toBe(3_000_000n);
  // Nothing is left to refund: the database says so.
  expect((await refund(s.id, { amount: "0.01", reason: "other" })).body.error.code).toBe("refund_exceeds_refundable");
}, 90_000);

test("a session paid in two tokens is refunded in the same proportions, both parts in one transaction, each exact", async () => {
  const s = await stack.create("5.00");
  const deposit = s.networks[0]!.depositAddress as Address;
  for (const [token, units] of [[chain().token, 2_000_000n], [USDT, 3_000_000n]] as const) {
    await mint(payerAddress(), units, token);
    const hash = await payer.walletClient.writeContract({ account: payer.walletClient.account!, chain: null, address: token, abi: erc20Abi, functionName: "transfer", args: [deposit, units] });
    await chain().publicClient.waitForTransactionReceipt({ hash });
  }
  await stack.waitFor(s.id, "SUCCEEDED", 30_000);
  const [m] = await sql()`select merchant_id, environment from app.payment_sessions where id = ${s.id}`;
  const vault = refundVaultAddress(vaults, refundVaultSalt(m!.merchant_id as string, m!.environment as string));
  await mint(vault, 5_000_000n, chain().token);
  await mint(vault, 5_000_000n, USDT);
  const before = await Promise.all([balance(chain().token, payerAddress()), balance(USDT, payerAddress())]);
  const r = await refund(s.id, { amount: "1.00", reason: "requested_by_customer" });
  expect(r.status).toBe(201);
  expect(r.body.parts.map((p: { tokenAddress: string; amountBaseUnits: string }) => [getAddress(p.tokenAddress), p.amountBaseUnits])).toEqual([
    [getAddress(chain().token), "400000"],
    [getAddress(USDT), "600000"],
  ]);
  const done = await eventually(async () => {
    const v = await get(r.body.refundId);
    return v.status === "SUCCEEDED" ? v : undefined;
  }, "the two-token refund to succeed", 40_000);
  expect(await transfersOf(done.transactionHash)).toEqual([
    [getAddress(chain().token), vault, getAddress(payerAddress()), 400_000n],
    [getAddress(USDT), vault, getAddress(payerAddress()), 600_000n],
  ]);
  const after = await Promise.all([balance(chain().token, payerAddress()), balance(USDT, payerAddress())]);
  expect([after[0]! - before[0]!, after[1]! - before[1]!]).toEqual([400_000n, 600_000n]);
}, 90_000);

test("the relayer's nonces stay one contiguous sequence, sweeps and refunds together, each refund sent once", async () => {
  const rows = await sql()`select nonce::text as nonce, kind from app.sweep_transactions where chain_id = ${chain().chain.chainId} and relayer = ${DEV_RELAYER_ADDRESS.toLowerCase()} and state <> 'dropped' order by nonce`;
  const nonces = rows.map((r) => BigInt(r.nonce as string));
  expect(nonces.length).toBeGreaterThan(0);
  expect(nonces).toEqual(nonces.map((_, i) => nonces[0]! + BigInt(i)));
  expect(rows.filter((r) => r.kind === "refund")).toHaveLength(3);
  const [c] = await sql()`select count(*)::int as n, count(distinct transaction_id)::int as txs from app.refunds where state = 'SUCCEEDED'`;
  expect(c).toEqual({ n: 3, txs: 3 });
});
