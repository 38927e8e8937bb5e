/**
 * Refund links sent for real (anvil with TestUSD, the Ponder indexer, the service's runner and
 * sweeper): a session paid by money minted straight into its deposit (no payer the service could
 * refund to), the merchant's refund balance funded, a refund to a link, the payer's claim posted
 * to the page over HTTP — and the money lands at the claimed address, read from the receipt's
 * Transfer logs and the balances. With approval required the claimed refund is not sent until the
 * merchant approves it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { erc20Abi, getAddress, parseEventLogs, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { startLifecycleStack, type LifecycleStack } from "../../../testing/lifecycle.ts";
import { eventually } from "../../../testing/eventually.ts";
import { mintTestUsd } from "../../../shared/contracts/deploy.ts";
import { ensureRefundVaultsDeployed, refundVaultAddress, refundVaultSalt } from "../../../shared/contracts/refund-vaults.ts";
import { DEV_RELAYER_ADDRESS } from "../credentials/relayer.ts";

let stack: LifecycleStack;
let vaults: Address;

beforeAll(async () => {
  stack = await startLifecycleStack();
  const c = stack.chains[0]!;
  vaults = (await ensureRefundVaultsDeployed({ publicClient: c.publicClient, walletClient: c.walletClient }, DEV_RELAYER_ADDRESS)).address;
}, 90_000);
afterAll(async () => {
  await stack?.close();
});

const chain = () => stack.chains[0]!;
const sql = () => stack.svc.services.database.sql;
const balance = (holder: Address) => chain().publicClient.readContract({ address: chain().token, abi: erc20Abi, functionName: "balanceOf", args: [holder] });
const get = async (refundId: string) => (await stack.svc.call("GET", `/refunds/${refundId}`, { auth: stack.key })).body;

/** A session paid by TestUSD minted into its deposit (the payer is unknown), SUCCEEDED, and its merchant's vault funded. */
async function paidAndFunded(amount: string, units: bigint): Promise<{ id: string; vault: Address }> {
  const s = await stack.create(amount);
  await stack.pay(s, units);
  await stack.waitFor(s.id, "SUCCEEDED", 30_000);
  const [m] = await sql()`select merchant_id, environment from app.payment_sessions where id = ${s.id}`;
  const vault = refundVaultAddress(vaults, refundVaultSalt(m!.merchant_id as string, m!.environment as string));
  await mintTestUsd({ publicClient: chain().publicClient, walletClient: chain().walletClient, to: vault, amount: units, token: chain().token });
  return { id: s.id, vault };
}

async function claim(claimUrl: string, address: string): Promise<number> {
  const res = await fetch(`${stack.svc.url}${new URL(claimUrl).pathname}`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ address }).toString(),
  });
  return res.status;
}

async function transfersOf(txHash: Hex) {
  const receipt = await chain().publicClient.getTransactionReceipt({ hash: txHash });
  expect(receipt.status).toBe("success");
  return parseEventLogs({ abi: erc20Abi, eventName: "Transfer", logs: receipt.logs }).map((l) => [getAddress(l.address), l.args.from, l.args.to, l.args.value]);
}

const succeeded = (refundId: string) =>
  eventually(async () => {
    const v = await get(refundId);
    return v.status === "SUCCEEDED" ? v : undefined;
  }, "the refund to succeed", 40_000);

test("an unknown payer: a link refund claimed over HTTP lands at the claimed address exactly", async () => {
  const s = await paidAndFunded("5.00", 5_000_000n);
  // Without a link this refund would wait for ever: the payer is not known.
  const plain = await stack.svc.call("POST", `/payment-sessions/${s.id}/refunds`, { auth: stack.key, body: { amount: "0.50", reason: "other" } });
  expect(plain.body.waitingReason).toBe("destination_unknown");
  expect((await stack.svc.call("POST", `/refunds/${plain.body.refundId}/cancel`, { auth: stack.key, body: {} })).body.status).toBe("CANCELED");

  const r = await stack.svc.call("POST", `/payment-sessions/${s.id}/refunds`, { auth: stack.key, body: { amount: "2.50", reason: "requested_by_customer", destination: "link" } });
  expect(r.status).toBe(201);
  expect(r.body.waitingReason).toBe("awaiting_claim");
  const to = privateKeyToAccount(generatePrivateKey()).address;
  expect(await claim(r.body.claimUrl, to)).toBe(303);
  const done = await succeeded(r.body.refundId);
  expect(done).toMatchObject({ waitingReason: null, failureReason: null, parts: [{ destination: to, amountBaseUnits: "2500000" }] });
  expect(await transfersOf(done.transactionHash)).toEqual([[getAddress(chain().token), s.vault, to, 2_500_000n]]);
  expect(await balance(to)).toBe(2_500_000n);
  expect(await balance(s.vault)).toBe(2_500_000n);
  // The used link changes nothing more.
  expect(await claim(r.body.claimUrl, privateKeyToAccount(generatePrivateKey()).address)).toBe(409);
}, 90_000);

test("requireApproval: a claimed refund is not sent until approved, then lands at the claimed address", async () => {
  const s = await paidAndFunded("3.00", 3_000_000n);
  const r = await stack.svc.call("POST", `/payment-sessions/${s.id}/refunds`, {
    auth: stack.key,
    body: { reason: "requested_by_customer", destination: "link", requireApproval: true, linkExpiresInSeconds: 3600 },
  });
  expect(r.status).toBe(201);
  const to = privateKeyToAccount(generatePrivateKey()).address;
  expect(await claim(r.body.claimUrl, to)).toBe(303);
  // The sweeper polls every 50 ms here: a second and a half is many rounds that must leave it alone.
  await Bun.sleep(1500);
  const waiting = await get(r.body.refundId);
  expect(waiting).toMatchObject({ status: "PENDING", waitingReason: "awaiting_approval", transactionHash: null, parts: [{ destination: to }] });
  expect(await balance(to)).toBe(0n);
  const approved = await stack.svc.call("POST", `/refunds/${r.body.refundId}/approve`, { auth: stack.key, body: {} });
  expect(approved.status).toBe(200);
  const done = await succeeded(r.body.refundId);
  expect(await transfersOf(done.transactionHash)).toEqual([[getAddress(chain().token), s.vault, to, 3_000_000n]]);
  expect(await balance(to)).toBe(3_000_000n);
}, 90_000);
