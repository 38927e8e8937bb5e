/**
 * Paysession as an x402 facilitator, end to end on real parts with the unmodified x402 packages:
 * a resource server built with @x402/hono whose facilitator is the test service (sandbox, a real
 * anvil, the indexer, the runner, the sweeper, the webhook worker), and a client with @x402/fetch
 * and a viem account holding TestUSD and no gas coin. The protected route answers 402, then the
 * paid response; the payment is a payment session of the merchant, PENDING → FUNDED → SUCCEEDED,
 * its Transfer to the merchant's settlement address in the relayer's receipt, its webhooks
 * delivered. Then every bad payload straight at /x402/verify and /x402/settle, each answered with
 * its x402 reason and nothing written, and the keys: none 401, another scope 403, another
 * merchant's key cannot route the money to itself.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startX402Api } from "../../../examples/x402-api/server.ts";
import { ExactEvmScheme as ExactEvmClientScheme } from "@x402/evm/exact/client";
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { erc20Abi, getAddress, parseEventLogs, toHex, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { resolve } from "node:path";
import { startLifecycleStack, type LifecycleStack } from "../../../testing/lifecycle.ts";
import { FAST_WEBHOOK_ENV, startReceiver, type Receiver } from "../../../testing/webhook-receiver.ts";
import { eventually } from "../../../testing/eventually.ts";
import { createApiKey } from "../credentials/store.ts";
import { createUser } from "../dashboard/users.ts";
import { DEV_RELAYER_ADDRESS } from "../credentials/relayer.ts";
import { signIn, TEST_PASSWORD } from "../../../testing/dashboard.ts";
import { csvRecords } from "../../../testing/csv.ts";
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from "../../../shared/contracts/eip3009.ts";

const SETTLEMENT = getAddress("0x5e77e7000000000000000000000000000000c0de");
const CHAIN = 31337;
const NETWORK = `eip155:${CHAIN}` as const;
const PRICE = 10_000n; // $0.01 in TestUSD's 6 decimals

let stack: LifecycleStack;
let hooks: Receiver;
let resource: Awaited<ReturnType<typeof startX402Api>>;
let token: Address;
let domain: { name: string; version: string };


beforeAll(async () => {
  stack = await startLifecycleStack({ env: { ...FAST_WEBHOOK_ENV } });
  hooks = startReceiver();
  expect((await stack.svc.call("POST", "/webhook-endpoints", { auth: stack.key, body: { url: hooks.url } })).status).toBe(201);
  // The merchant's own settlement address on the sandbox chain (not the shared sandbox default).
  expect((await stack.svc.call("PUT", `/settlement-addresses/${CHAIN}`, { auth: stack.key, body: { address: SETTLEMENT } })).status).toBe(200);
  const chain = stack.chains[0]!;
  token = chain.token;
  const read = (fn: "name" | "version") => chain.publicClient.readContract({ address: token, abi: [{ type: "function", name: fn, stateMutability: "view", inputs: [], outputs: [{ type: "string" }] }] as const, functionName: fn });
  domain = { name: await read("name"), version: await read("version") };

  // The resource server: the example (examples/x402-api/), @x402/hono as published, its
  // facilitator Paysession with the merchant's key; its requirements from GET /x402/supported.
  resource = await startX402Api({ apiHost: stack.svc.url, apiKey: stack.key, priceUsd: "0.01", network: NETWORK });
  expect({ payTo: resource.payTo, asset: getAddress(resource.asset), amount: resource.amount }).toEqual({ payTo: SETTLEMENT, asset: getAddress(token), amount: PRICE.toString() });
}, 120_000);

afterAll(async () => {
  resource?.stop();
  await hooks?.stop();
  await stack?.close();
});

async function payer(units: bigint): Promise<PrivateKeyAccount> {
  const account = privateKeyToAccount(generatePrivateKey());
  if (units > 0n) await stack.chains[0]!.mint(account.address, units);
  return account;
}

const balanceOf = (a: Address) => stack.chains[0]!.publicClient.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [a] });

describe("an x402 client pays a resource server through Paysession", () => {
  test("402, then the paid response; a session SUCCEEDED with its webhooks; the Transfer in the receipt", async () => {
    const account = await payer(PRICE * 3n);
    const url = `${resource.url}/weather`;
    const unpaid = await fetch(url);
    expect(unpaid.status).toBe(402);

    // TestUSD is no default asset of the x402 packages: the client opts in to it, capped at $1.
    const client = x402Client.fromConfig({
      schemes: [{ network: NETWORK, client: new ExactEvmClientScheme(account) }],
      spendControls: { allowedAssets: [{ network: NETWORK, asset: token, maxAmountPerPayment: "1000000" }] },
    });
    // The client's own requests, kept to replay its payment header afterwards.
    let paymentHeader: string | null = null;
    const recording = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const req = new Request(input, init);
      paymentHeader = req.headers.get("payment-signature") ?? paymentHeader;
      return fetch(req);
    }) as typeof fetch;
    const pay = wrapFetchWithPayment(recording, client);
    const before = await balanceOf(SETTLEMENT);
    const paid = await pay(url);
    expect(paid.status).toBe(200);
    expect(await paid.json()).toEqual({ weather: "sunny", temperature: 21 });
    const header = paid.headers.get("payment-response");
    expect(header).toBeTruthy();
    const settled = decodePaymentResponseHeader(header!);
    expect(settled.success).toBe(true);
    expect(settled.network).toBe(NETWORK);
    expect(getAddress(settled.payer!)).toBe(account.address);
    const sessionId = (settled as { extra?: { paymentSessionId?: string } }).extra?.paymentSessionId;
    expect(sessionId).toMatch(/^ps_/);

    // The relayer's receipt carries the Transfer from the payer to the settlement address.
    const receipt = await stack.chains[0]!.publicClient.getTransactionReceipt({ hash: settled.transaction as Hex });
    expect(receipt.status).toBe("success");
    const transfers = parseEventLogs({ abi: erc20Abi, eventName: "Transfer", logs: receipt.logs }).filter((l) => getAddress(l.address) === getAddress(token));
    expect(transfers.map((t) => ({ from: getAddress(t.args.from), to: getAddress(t.args.to), value: t.args.value }))).toContainEqual({ from: account.address, to: SETTLEMENT, value: PRICE });
    expect((await balanceOf(SETTLEMENT)) - before).toBe(PRICE);

    // The session: $0.01, the resource as its reference, the requirements in its metadata, SUCCEEDED.
    const s = await stack.waitFor(sessionId!, "SUCCEEDED", 30_000);
    const full = (await stack.svc.call("GET", `/payment-sessions/${sessionId}`, { auth: stack.key })).body;
    expect(full.amount).toBe("0.01");
    expect(full.referenceId).toBe(url);
    expect(full.metadata).toMatchObject({ x402_scheme: "exact", x402_network: NETWORK, x402_asset: getAddress(token), x402_pay_to: SETTLEMENT, x402_payer: account.address, x402_resource: url });
    expect(s.history.map((h) => h.status)).toEqual(["PENDING", "FUNDED", "SUCCEEDED"]);

    // The dashboard's page and the CSV: paid by authorization, by the agent, the relayer's transaction.
    const [owner] = await stack.svc.services.database.sql`select merchant_id from app.payment_sessions where id = ${sessionId!}`;
    await createUser(stack.svc.services.database.db, owner!.merchant_id as string, "x402@shop.example", TEST_PASSWORD);
    const me = await signIn(stack.svc, "x402@shop.example");
    const page = await (await me.get(`/dashboard/sandbox/transactions/${sessionId}`)).text();
    expect(page).toContain("Payment by authorization");
    const [cells] = csvRecords(await (await me.get(`/dashboard/sandbox/transactions.csv?q=${sessionId}`)).text());
    expect(cells).toMatchObject({ amount: "0.01", payer_address: account.address, payment_method: "authorization", payment_tx_hash: settled.transaction });

    // Its webhooks, as for any payment.
    const seen = await eventually(() => {
      const types = hooks.received.filter((r) => r.json?.data?.paymentSessionId === sessionId).map((r) => r.json.type as string);
      return types.includes("payment_session.succeeded") ? types : undefined;
    }, "the session's webhooks", 20_000);
    expect(seen).toEqual(expect.arrayContaining(["payment_session.funded", "payment_session.succeeded"]));

    // The same payment header again (a replay) is refused by the facilitator: the resource stays unpaid.
    expect(paymentHeader).toBeTruthy();
    const again = await fetch(url, { headers: { "payment-signature": paymentHeader! } });
    expect(again.status).toBe(402);
    expect(await stack.svc.count("payment_authorizations")).toBe(1);
  }, 90_000);
});

test("the example's agent (examples/x402-api/pay.ts) pays the example's API", async () => {
  const key = generatePrivateKey();
  const account = privateKeyToAccount(key);
  await stack.chains[0]!.mint(account.address, PRICE * 2n);
  const proc = Bun.spawn(["bun", resolve(import.meta.dir, "../../../examples/x402-api/pay.ts")], {
    env: { ...process.env, PAYER_PRIVATE_KEY: key, X402_API_URL: resource.url },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect({ code, err }).toEqual({ code: 0, err: "" });
  expect(out).toContain('200 {"weather":"sunny","temperature":21}');
  expect(out).toContain("success: true");
  expect((await balanceOf(account.address))).toBe(PRICE);
}, 60_000);

/** A signed exact payment and its requirements, as an x402 client would send them (`change` alters what is signed; `req` the requirements). */
async function payment(account: PrivateKeyAccount, change: Partial<{ value: bigint; validAfter: bigint; validBefore: bigint; to: Address; nonce: Hex }> = {}, req: Record<string, unknown> = {}) {
  const now = BigInt(Math.floor(Date.now() / 1000));
  const requirements = { scheme: "exact", network: NETWORK, asset: token, amount: PRICE.toString(), payTo: SETTLEMENT, maxTimeoutSeconds: 120, extra: { ...domain }, ...req };
  const authorization = { from: account.address, to: SETTLEMENT, value: PRICE, validAfter: 0n, validBefore: now + 120n, nonce: toHex(crypto.getRandomValues(new Uint8Array(32))), ...change };
  const signature = await account.signTypedData({
    domain: { ...domain, chainId: CHAIN, verifyingContract: token },
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: "TransferWithAuthorization",
    message: authorization,
  });
  const wire = { ...authorization, value: authorization.value.toString(), validAfter: authorization.validAfter.toString(), validBefore: authorization.validBefore.toString() };
  return {
    x402Version: 2,
    paymentPayload: { x402Version: 2, resource: { url: "http://api.example/thing" }, accepted: requirements, payload: { authorization: wire, signature } },
    paymentRequirements: requirements,
  };
}

const verify = (body: unknown, key = stack.key) => stack.svc.call("POST", "/x402/verify", { auth: key, body });
const settle = (body: unknown, key = stack.key) => stack.svc.call("POST", "/x402/settle", { auth: key, body });

describe("the facilitator refuses bad payments with x402's reasons, writing nothing", () => {
  test("supported names the sandbox chain's exact scheme and TestUSD", async () => {
    const r = await stack.svc.call("GET", "/x402/supported", { auth: stack.key });
    expect(r.status).toBe(200);
    expect(r.body.kinds).toContainEqual({
      x402Version: 2,
      scheme: "exact",
      network: NETWORK,
      extra: { payTo: SETTLEMENT, assets: expect.arrayContaining([{ asset: getAddress(token), symbol: "TUSD", decimals: 6, name: domain.name, version: domain.version, eip3009: true }]) },
    });
  });

  test("each bad payload has its reason, on verify and on settle", async () => {
    const account = await payer(PRICE * 2n);
    const poor = await payer(0n);
    const now = BigInt(Math.floor(Date.now() / 1000));
    const sessionsBefore = await stack.svc.count("payment_sessions");
    const cases: [string, Awaited<ReturnType<typeof payment>>][] = [
      ["invalid_exact_evm_payload_authorization_value_mismatch", await payment(account, { value: PRICE - 1n })],
      ["invalid_exact_evm_payload_authorization_value_mismatch", await payment(account, {}, { amount: (PRICE * 2n).toString() })],
      ["invalid_exact_evm_authorization_value", await payment(account, { value: 12_345n }, { amount: "12345" })],
      ["invalid_exact_evm_eip3009_not_supported", await payment(account, {}, { asset: "0x00000000000000000000000000000000000000a1" })],
      ["invalid_exact_evm_network_mismatch", await payment(account, {}, { network: "eip155:8453" })],
      ["invalid_exact_evm_network_mismatch", await payment(account, {}, { network: "solana:mainnet" })],
      ["invalid_exact_evm_payload_authorization_valid_before", await payment(account, { validBefore: now - 1n })],
      ["invalid_exact_evm_payload_authorization_valid_after", await payment(account, { validAfter: now + 600n })],
      ["invalid_exact_evm_recipient_mismatch", await payment(account, { to: "0x00000000000000000000000000000000000000b2" }, { payTo: "0x00000000000000000000000000000000000000b2" })],
      ["invalid_exact_evm_recipient_mismatch", await payment(account, { to: "0x00000000000000000000000000000000000000b2" })],
      ["invalid_exact_evm_token_name_mismatch", await payment(account, {}, { extra: { name: "USD Coin", version: domain.version } })],
      ["invalid_exact_evm_missing_eip712_domain", await payment(account, {}, { extra: {} })],
      ["invalid_exact_evm_insufficient_balance", await payment(poor)],
      ["invalid_exact_evm_scheme", await payment(account, {}, { scheme: "upto" })],
    ];
    // A signature by someone else: the payer's address, another key's signature.
    const forged = await payment(await payer(0n));
    (forged.paymentPayload.payload.authorization as { from: string }).from = account.address;
    cases.push(["invalid_exact_evm_signature", forged]);
    // The payload's own requirements naming another network than the requirements.
    const crossed = await payment(account);
    (crossed.paymentPayload.accepted as { network: string }).network = "eip155:1";
    cases.push(["invalid_exact_evm_network_mismatch", crossed]);
    const malformed = await payment(account);
    (malformed.paymentPayload.payload as { signature: string }).signature = "0x1234";
    cases.push(["invalid_exact_evm_payload", malformed]);

    for (const [reason, body] of cases) {
      const v = await verify(body);
      expect({ reason, status: v.status, isValid: v.body.isValid, invalidReason: v.body.invalidReason }).toEqual({ reason, status: 200, isValid: false, invalidReason: reason });
      expect(typeof v.body.invalidMessage).toBe("string");
      const s = await settle(body);
      expect({ reason, status: s.status, success: s.body.success, errorReason: s.body.errorReason, transaction: s.body.transaction }).toEqual({ reason, status: 200, success: false, errorReason: reason, transaction: "" });
    }
    expect(await stack.svc.count("payment_sessions")).toBe(sessionsBefore);
  }, 60_000);

  test("a good payment verifies (fast, nothing written), settles once, and is refused as used after", async () => {
    const account = await payer(PRICE * 2n);
    const body = await payment(account);
    const [sessions, relayerNonce] = [await stack.svc.count("payment_sessions"), await stack.chains[0]!.publicClient.getTransactionCount({ address: DEV_RELAYER_ADDRESS })];
    const v = await verify(body);
    expect(v.body).toEqual({ isValid: true, payer: account.address });
    // Nothing written, nothing sent.
    expect(await stack.svc.count("payment_sessions")).toBe(sessions);
    expect(await stack.chains[0]!.publicClient.getTransactionCount({ address: DEV_RELAYER_ADDRESS })).toBe(relayerNonce);
    const s = await settle(body);
    expect(s.body.success).toBe(true);
    expect(s.body.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    const again = await verify(body);
    expect(again.body.invalidReason).toBe("invalid_exact_evm_nonce_already_used");
    const replay = await settle(body);
    expect({ success: replay.body.success, errorReason: replay.body.errorReason }).toEqual({ success: false, errorReason: "invalid_exact_evm_nonce_already_used" });
    await stack.waitFor(s.body.extra.paymentSessionId, "SUCCEEDED", 30_000);
  }, 60_000);

  test("two settles of one authorization at once: one pays, the other is refused", async () => {
    const account = await payer(PRICE * 2n);
    const body = await payment(account);
    const [a, b] = await Promise.all([settle(body), settle(body)]);
    const outcomes = [a.body, b.body].map((r) => (r.success ? "paid" : r.errorReason)).sort();
    expect(outcomes).toEqual(["invalid_exact_evm_nonce_already_used", "paid"]);
  }, 60_000);

  test("keys: none is 401, a key without the scope 403, another merchant's key naming this merchant's address 403", async () => {
    const account = await payer(PRICE);
    const body = await payment(account);
    expect((await stack.svc.call("POST", "/x402/verify", { body })).status).toBe(401);
    expect((await stack.svc.call("POST", "/x402/settle", { body })).status).toBe(401);
    expect((await stack.svc.call("GET", "/x402/supported", {})).status).toBe(401);
    const db = stack.svc.services.database.db;
    const [merchantId] = (await stack.svc.services.database.sql`select merchant_id from app.api_keys limit 1`).map((r) => r.merchant_id as string);
    const narrow = (await createApiKey(db, merchantId!, "sandbox", "sessions only", undefined, { scopes: ["sessions:write"], expiresAt: null })).secret;
    const refused = await verify(body, narrow);
    expect({ status: refused.status, code: refused.body.error.code }).toEqual({ status: 403, code: "api_key_scope_missing" });
    const other = await stack.svc.merchant("Other shop");
    const stolen = await settle(body, other.sandboxKey);
    expect({ status: stolen.status, code: stolen.body.error?.code }).toEqual({ status: 403, code: "pay_to_other_account" });
    expect((await verify(body, other.sandboxKey)).status).toBe(403);
    const live = await verify(body, other.liveKey);
    expect(live.body.invalidReason).toBe("invalid_exact_evm_network_mismatch");
    // A body that is not a payment request at all: the catalogue's 400.
    const bad = await verify({ x402Version: 2 });
    expect({ status: bad.status, code: bad.body.error.code }).toEqual({ status: 400, code: "parameter_missing" });
  }, 60_000);
});
