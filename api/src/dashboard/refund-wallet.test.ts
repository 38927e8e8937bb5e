/**
 * A refund paid from the merchant's own wallet, over the dashboard's HTTP on the real stack
 * (Postgres, anvil, the indexer, the runner, the sweeper): the settlement address is an anvil
 * account this test holds the key of, as the merchant's wallet would.
 *
 *   TestUSD (EIP-3009): refusals of the POST — no CSRF, another merchant, a bad signature, another
 *   signer, another amount or destination, a closed or too long window — each changing nothing;
 *   then the settlement account's own signature (viem signTypedData), which the relayer submits:
 *   SUCCEEDED, the receipt's Transfer from the settlement address to the payer, both balances,
 *   refund.created / refund.sent / refund.succeeded.
 *   tUSDT (no EIP-3009): the wallet's own transfer's hash → SUCCEEDED; a transfer of the wrong
 *   amount → SENT, then FAILED (transfer_missing), its amount refundable again.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { createWalletClient, erc20Abi, getAddress, http, parseAbi, parseEventLogs, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { startLifecycleStack, type LifecycleStack } from "../../../testing/lifecycle.ts";
import { eventually } from "../../../testing/eventually.ts";
import { merchantWithUser, signIn, type Browser } from "../../../testing/dashboard.ts";
import { devFaucetAccount, mintTestUsd, predictedTestUsdtAddress } from "../../../shared/contracts/deploy.ts";
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from "../../../shared/contracts/eip3009.ts";
import { setSettlement } from "../sessions/settlements.ts";
import { col, decodeRows, rowShape } from "../db/rows.ts";

// Anvil's well-known accounts #4 (the merchant's settlement wallet), #5 (a stranger), #6 (a tUSDT payer).
const SETTLEMENT = privateKeyToAccount("0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a");
const STRANGER = privateKeyToAccount("0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba");
const USDT_PAYER = privateKeyToAccount("0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e");

let stack: LifecycleStack;
let asA: Browser;
let asB: Browser;
let keyA: string;

const Refund = rowShape("test refund", { state: col.text, waiting_reason: col.nullable(col.text), failure_reason: col.nullable(col.text), funding: col.text, transaction_id: col.nullable(col.text) });
const Event = rowShape("test refund event", { type: col.text, data: col.json(Type.Record(Type.String(), Type.Unknown())) });

beforeAll(async () => {
  stack = await startLifecycleStack();
  const a = await merchantWithUser(stack.svc, "wally@w.example");
  await merchantWithUser(stack.svc, "other@o.example");
  keyA = a.sandboxKey;
  await setSettlement(stack.svc.services.database.db, a.merchant.id, "sandbox", stack.chains[0]!.chain.chainId, SETTLEMENT.address);
  asA = await signIn(stack.svc, "wally@w.example");
  asB = await signIn(stack.svc, "other@o.example");
}, 120_000);
afterAll(() => stack?.close());

const sql = () => stack.svc.services.database.sql;
const chain = () => stack.chains[0]!;
const api = (method: string, path: string, body?: unknown) => stack.svc.call(method, path, { auth: keyA, body });
const balanceOf = (token: Address, who: Address) => chain().publicClient.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [who] });
const refundRow = async (id: string) => decodeRows(Refund, await sql()`select state, waiting_reason, failure_reason, funding, transaction_id from app.refunds where id = ${id}`)[0]!;
const walletRows = async (id: string) => (await sql()`select 1 from app.refund_wallet_payments where refund_id = ${id}`).length;
const nowSeconds = async () => BigInt((await chain().publicClient.getBlock()).timestamp);

/** A sandbox session of merchant A, paid (by `pay`) and SUCCEEDED: its money at the settlement address. */
async function paidSession(amount: string, pay: (s: { id: string; networks: { chainId: number; depositAddress: string }[] }) => Promise<void>): Promise<string> {
  const r = await api("POST", "/payment-sessions", { amount, currency: "USD" });
  expect(r.status).toBe(201);
  const s = { id: r.body.paymentSessionId as string, networks: r.body.networks };
  await pay(s);
  await eventually(async () => ((await api("GET", `/payment-sessions/${s.id}`)).body.status === "SUCCEEDED" ? true : undefined), "the payment to succeed", 60_000);
  return s.id;
}

/** The dashboard's create with "Pay from my wallet": the refund, and the wallet page it leads to. */
async function walletRefund(sessionId: string, amount: string): Promise<{ refundId: string; page: string }> {
  const res = await asA.post(`/dashboard/sandbox/transactions/${sessionId}/refunds`, { amount, reason: "requested_by_customer", funding: "merchant_wallet" });
  expect(res.status).toBe(303);
  const where = res.headers.get("location")!;
  const m = /\/refunds\/(rf_[A-Za-z0-9]+)\/wallet$/.exec(where);
  expect(m).not.toBeNull();
  const page = await (await asA.follow(res)).text();
  return { refundId: m![1]!, page };
}

async function typedDataFor(token: Address) {
  const c = chain().publicClient;
  const [name, version] = await Promise.all([
    c.readContract({ address: token, abi: parseAbi(["function name() view returns (string)"]), functionName: "name" }),
    c.readContract({ address: token, abi: parseAbi(["function version() view returns (string)"]), functionName: "version" }),
  ]);
  return { name, version, chainId: chain().chain.chainId, verifyingContract: token };
}

describe("TestUSD: the settlement address signs a TransferWithAuthorization", () => {
  test("refusals change nothing; the settlement account's signature is submitted by the relayer and lands at the payer", async () => {
    const token = chain().token;
    const payer = getAddress(devFaucetAccount().address);
    const id = await paidSession("5.00", async (s) => {
      expect((await api("POST", `/sandbox/payment-sessions/${s.id}/pay`, {})).status).toBe(200);
    });
    const { refundId, page } = await walletRefund(id, "2.00");
    expect(await refundRow(refundId)).toMatchObject({ state: "PENDING", waiting_reason: "awaiting_wallet", funding: "merchant_wallet" });
    // The page names the account that must sign, the destination and the exact amount.
    expect(page).toContain(SETTLEMENT.address);
    expect(page).toContain(payer);
    expect(page).toContain('data-kind="authorization"');
    expect(page).toContain('data-value="2000000"');

    // Never sent by the balance's relayer round, however long it waits.
    await Bun.sleep(1_000);
    expect((await refundRow(refundId)).state).toBe("PENDING");

    const domain = await typedDataFor(token);
    const now = await nowSeconds();
    const good = { from: SETTLEMENT.address, to: payer, value: 2_000_000n, validAfter: 0n, validBefore: now + 600n, nonce: `0x${"ab".repeat(32)}` as Hex };
    const sign = (account: typeof SETTLEMENT, m: typeof good) =>
      account.signTypedData({ domain, types: TRANSFER_WITH_AUTHORIZATION_TYPES, primaryType: "TransferWithAuthorization", message: m });
    const fields = (m: typeof good, signature: Hex) => ({
      kind: "authorization",
      from: m.from,
      to: m.to,
      value: m.value.toString(),
      validAfter: m.validAfter.toString(),
      validBefore: m.validBefore.toString(),
      nonce: m.nonce,
      signature,
    });
    const path = `/dashboard/sandbox/transactions/${id}/refunds/${refundId}/wallet`;
    const refused = async (res: Response, status: number, words: string) => {
      expect(res.status).toBe(status);
      if (words) expect(await res.text()).toContain(words);
      expect(await refundRow(refundId)).toMatchObject({ state: "PENDING", waiting_reason: "awaiting_wallet" });
      expect(await walletRows(refundId)).toBe(0);
    };
    const goodSig = await sign(SETTLEMENT, good);
    // A transaction hash for a token that takes authorizations: refused.
    await refused(await asA.post(path, { kind: "transfer", txHash: `0x${"ee".repeat(32)}` }), 400, "takes a signed authorization");
    await refused(await asA.post(path, fields(good, goodSig), { csrf: null }), 403, "");
    await refused(await asB.post(path, fields(good, goodSig)), 404, "");
    await refused(await asA.post(path, fields(good, `0x${"11".repeat(65)}`)), 400, "is not");
    // Another account signs, naming itself: not the settlement address. Naming the settlement address: the signature does not recover to it.
    const strangers = { ...good, from: STRANGER.address };
    await refused(await asA.post(path, fields(strangers, await sign(STRANGER, strangers))), 400, "not the session&#39;s settlement address");
    await refused(await asA.post(path, fields(good, await sign(STRANGER, good))), 400, "is not");
    const more = { ...good, value: 2_000_001n };
    await refused(await asA.post(path, fields(more, await sign(SETTLEMENT, more))), 400, "the refund is 2000000");
    const elsewhere = { ...good, to: STRANGER.address };
    await refused(await asA.post(path, fields(elsewhere, await sign(SETTLEMENT, elsewhere))), 400, "not the refund&#39;s destination");
    const expired = { ...good, validBefore: now - 5n };
    await refused(await asA.post(path, fields(expired, await sign(SETTLEMENT, expired))), 400, "window has closed");
    const forever = { ...good, validBefore: now + 86_400n };
    await refused(await asA.post(path, fields(forever, await sign(SETTLEMENT, forever))), 400, "too long");

    const settlementBefore = await balanceOf(token, SETTLEMENT.address);
    const payerBefore = await balanceOf(token, payer);
    const ok = await asA.post(path, fields(good, goodSig));
    expect(ok.status).toBe(303);
    expect(ok.headers.get("location")).toBe(`/dashboard/sandbox/transactions/${id}?notice=refund-wallet-signed#rf`);
    // A second POST (another tab): refused, nothing changes.
    expect((await asA.post(path, fields(good, goodSig))).status).toBe(409);

    const view = await eventually(async () => {
      const v = (await api("GET", `/refunds/${refundId}`)).body;
      return v.status === "SUCCEEDED" ? v : undefined;
    }, "the wallet refund to succeed", 60_000);
    const receipt = await chain().publicClient.getTransactionReceipt({ hash: view.transactionHash });
    const transfers = parseEventLogs({ abi: erc20Abi, eventName: "Transfer", logs: receipt.logs });
    expect(transfers.map((l) => ({ token: l.address.toLowerCase(), from: l.args.from, to: l.args.to, value: l.args.value }))).toEqual([
      { token: token.toLowerCase(), from: SETTLEMENT.address, to: payer, value: 2_000_000n },
    ]);
    expect(settlementBefore - (await balanceOf(token, SETTLEMENT.address))).toBe(2_000_000n);
    expect((await balanceOf(token, payer)) - payerBefore).toBe(2_000_000n);
    const events = decodeRows(Event, await sql()`select type, data from app.refund_events where refund_id = ${refundId} order by sequence`);
    expect(events.map((e) => e.type)).toEqual(["refund.created", "refund.sent", "refund.succeeded"]);
    expect(events[2]!.data.transactionHash).toBe(view.transactionHash);
    // Exactly one relayer transaction carried it.
    expect((await sql()`select id from app.sweep_transactions where kind = 'refund'`).length).toBe(1);
    expect((await api("GET", `/payment-sessions/${id}`)).body.amountRefunded).toBe("2.00");
  }, 180_000);
});

test("a signature someone else submitted first: the refund succeeds, the payer is paid once, the wallet is never asked again", async () => {
  const token = chain().token;
  const payer = getAddress(devFaucetAccount().address);
  const id = await paidSession("3.00", async (s) => {
    expect((await api("POST", `/sandbox/payment-sessions/${s.id}/pay`, {})).status).toBe(200);
  });
  const { refundId } = await walletRefund(id, "1.00");
  const domain = await typedDataFor(token);
  const m = { from: SETTLEMENT.address, to: payer, value: 1_000_000n, validAfter: 0n, validBefore: (await nowSeconds()) + 600n, nonce: `0x${"cd".repeat(32)}` as Hex };
  const signature = await SETTLEMENT.signTypedData({ domain, types: TRANSFER_WITH_AUTHORIZATION_TYPES, primaryType: "TransferWithAuthorization", message: m });
  // A stranger carries the signature out on the token itself before the relayer gets to it.
  const stranger = createWalletClient({ account: STRANGER, transport: http(chain().chain.rpcUrl) });
  const before = await balanceOf(token, payer);
  const hash = await stranger.writeContract({
    address: token,
    abi: parseAbi(["function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)"]),
    chain: null,
    functionName: "transferWithAuthorization",
    args: [m.from, m.to, m.value, m.validAfter, m.validBefore, m.nonce, signature],
  });
  expect((await chain().publicClient.waitForTransactionReceipt({ hash })).status).toBe("success");
  const relayerTxs = (await sql()`select id from app.sweep_transactions where kind = 'refund'`).length;
  const res = await asA.post(`/dashboard/sandbox/transactions/${id}/refunds/${refundId}/wallet`, {
    kind: "authorization", from: m.from, to: m.to, value: m.value.toString(), validAfter: "0", validBefore: m.validBefore.toString(), nonce: m.nonce, signature,
  });
  expect(res.status).toBe(303);
  await eventually(async () => ((await refundRow(refundId)).state === "SUCCEEDED" ? true : undefined), "the refund to succeed", 60_000);
  expect((await balanceOf(token, payer)) - before).toBe(1_000_000n);
  expect((await sql()`select id from app.sweep_transactions where kind = 'refund'`).length).toBe(relayerTxs); // the relayer sent nothing
  const events = decodeRows(Event, await sql()`select type, data from app.refund_events where refund_id = ${refundId} order by sequence`);
  expect(events.map((e) => e.type)).toEqual(["refund.created", "refund.sent", "refund.succeeded"]);
}, 120_000);

describe("tUSDT: the wallet sends the transfer itself", () => {
  const usdt = predictedTestUsdtAddress();
  const settlementWallet = () => createWalletClient({ account: SETTLEMENT, chain: chain().walletClient.chain, transport: http(chain().chain.rpcUrl) });
  const send = async (to: Address, value: bigint) => {
    const hash = await settlementWallet().writeContract({ address: usdt, abi: parseAbi(["function transfer(address to, uint256 amount)"]), chain: null, functionName: "transfer", args: [to, value] });
    await chain().publicClient.waitForTransactionReceipt({ hash });
    return hash;
  };

  test("the transfer's hash is watched: SUCCEEDED on the exact Transfer; a wrong amount stays SENT, then FAILED; bad hashes change nothing", async () => {
    await mintTestUsd({ publicClient: chain().publicClient, walletClient: chain().walletClient, to: USDT_PAYER.address, amount: 10_000_000n, token: usdt });
    const payerWallet = createWalletClient({ account: USDT_PAYER, chain: chain().walletClient.chain, transport: http(chain().chain.rpcUrl) });
    const id = await paidSession("4.00", async (s) => {
      const deposit = s.networks.find((n) => n.chainId === chain().chain.chainId)!.depositAddress as Address;
      const hash = await payerWallet.writeContract({ address: usdt, abi: parseAbi(["function transfer(address to, uint256 amount)"]), chain: null, functionName: "transfer", args: [deposit, 4_000_000n] });
      await chain().publicClient.waitForTransactionReceipt({ hash });
    });
    const { refundId, page } = await walletRefund(id, "1.50");
    expect(page).toContain('data-kind="transfer"');
    const path = `/dashboard/sandbox/transactions/${id}/refunds/${refundId}/wallet`;
    const bad = await asA.post(path, { kind: "transfer", txHash: "0x1234" });
    expect(bad.status).toBe(400);
    expect(await refundRow(refundId)).toMatchObject({ state: "PENDING", waiting_reason: "awaiting_wallet" });
    expect((await asA.post(path, { kind: "transfer", txHash: `0x${"cd".repeat(32)}` }, { csrf: null })).status).toBe(403);
    // A signature for a token without EIP-3009: refused.
    const noAuth = await asA.post(path, { kind: "authorization", from: SETTLEMENT.address, to: USDT_PAYER.address, value: "1500000", validAfter: "0", validBefore: "9999999999", nonce: `0x${"01".repeat(32)}`, signature: `0x${"11".repeat(65)}` });
    expect(noAuth.status).toBe(400);
    expect(await noAuth.text()).toContain("no EIP-3009");
    expect(await walletRows(refundId)).toBe(0);

    const payerBefore = await balanceOf(usdt, USDT_PAYER.address);
    const hash = await send(USDT_PAYER.address, 1_500_000n);
    const ok = await asA.post(path, { kind: "transfer", txHash: hash });
    expect(ok.status).toBe(303);
    await eventually(async () => ((await refundRow(refundId)).state === "SUCCEEDED" ? true : undefined), "the wallet transfer's refund to succeed", 60_000);
    expect((await balanceOf(usdt, USDT_PAYER.address)) - payerBefore).toBe(1_500_000n);
    const view = (await api("GET", `/refunds/${refundId}`)).body;
    expect(view).toMatchObject({ status: "SUCCEEDED", transactionHash: hash });
    const events = decodeRows(Event, await sql()`select type, data from app.refund_events where refund_id = ${refundId} order by sequence`);
    expect(events.map((e) => e.type)).toEqual(["refund.created", "refund.sent", "refund.succeeded"]);

    // The same hash for another refund: refused. A transfer of the wrong amount: SENT, then FAILED by its receipt.
    const second = await walletRefund(id, "1.00");
    const again = `/dashboard/sandbox/transactions/${id}/refunds/${second.refundId}/wallet`;
    expect((await asA.post(again, { kind: "transfer", txHash: hash })).status).toBe(400);
    const wrong = await send(USDT_PAYER.address, 999_999n);
    expect((await asA.post(again, { kind: "transfer", txHash: wrong })).status).toBe(303);
    expect((await refundRow(second.refundId)).state).toMatch(/SENT|FAILED/);
    await eventually(async () => ((await refundRow(second.refundId)).state === "FAILED" ? true : undefined), "the wrong transfer's refund to fail", 60_000);
    expect(await refundRow(second.refundId)).toMatchObject({ failure_reason: "transfer_missing" });
    // Its amount is refundable again: 4.00 − 1.50 left.
    expect((await api("GET", `/payment-sessions/${id}`)).body.amountRefunded).toBe("1.50");
  }, 180_000);
});
