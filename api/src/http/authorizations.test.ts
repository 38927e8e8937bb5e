/**
 * Paying by a signed EIP-3009 authorization (POST /api/payment-sessions/authorizations), with
 * outside actors on real parts: a payer with a key and TestUSD but no gas coin, a forger with
 * another key, a real anvil and the service on its own database. Every refusal is a 4xx with
 * its own code, records nothing and sends nothing (the relayer's nonce does not move); a good
 * authorization is recorded once, and what was recorded really pays when submitted.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { getAddress, recoverTypedDataAddress, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { chainEnv, startTestChain, type TestChain } from "../../../testing/indexer-stack.ts";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { DEFAULT_SANDBOX_SETTLEMENT } from "../config.ts";
import { authorizationNonce } from "../gasless/authorization.ts";
import { DEV_RELAYER_ADDRESS } from "../credentials/relayer.ts";
import { eip3009Abi } from "../../../shared/contracts/eip3009.ts";
import { ANVIL_ACCOUNTS } from "../../../shared/devchain/index.ts";
import { localClients } from "../../../shared/devchain/clients.ts";

let chain: TestChain;
let svc: TestService;
let keys: Awaited<ReturnType<TestService["merchant"]>>;

beforeAll(async () => {
  chain = await startTestChain("local");
  // The local network on a real anvil (gasless on by default); Base on a closed port, gasless switched off by the operator.
  svc = await startTestService({ ...chainEnv([chain]), SERVICE_WEBHOOK_WORKER: "false", SERVICE_GASLESS_BASE: "false" });
  keys = await svc.merchant("Gasless shop");
}, 60_000);
afterAll(async () => {
  await svc?.close();
  await chain?.chain.stop();
});

interface Offer {
  primaryType: "TransferWithAuthorization";
  domain: { name: string; version: string; chainId: number; verifyingContract: Address };
  types: { TransferWithAuthorization: { name: string; type: string }[] };
  message: { to: Address; value: string; validAfter: string; validBefore: string; nonce: Hex };
}

async function newSession(amount = "12.34", key = keys.sandboxKey) {
  const r = await svc.call("POST", "/payment-sessions", { auth: key, body: { amount, currency: "USD" } });
  expect(r.status).toBe(201);
  const token = r.body.paymentSessionToken as string;
  const view = (await svc.call("GET", "/api/payment-sessions", { auth: token })).body;
  return { id: r.body.paymentSessionId as string, token, view, offer: view.networks[0].gasless as Offer };
}

/** A payer with a fresh key, `units` TestUSD base units and no gas coin. */
async function payerWith(units: bigint): Promise<PrivateKeyAccount> {
  const payer = privateKeyToAccount(generatePrivateKey());
  if (units > 0n) await chain.mint(payer.address, units);
  return payer;
}

type Message = Offer["message"];

/** The typed data of the offer's message (changed by `change`) from `from`. */
function typedOf(offer: Offer, from: Address, change: Partial<Message> = {}, domain: Partial<Offer["domain"]> = {}) {
  const m = { ...offer.message, ...change };
  return {
    domain: { ...offer.domain, ...domain },
    types: offer.types,
    primaryType: offer.primaryType,
    message: { from, to: m.to, value: BigInt(m.value), validAfter: BigInt(m.validAfter), validBefore: BigInt(m.validBefore), nonce: m.nonce },
  };
}

/** `signer` signs the offer's message (changed by `change`) as `from`, with viem, as a client would. */
function sign(signer: PrivateKeyAccount, offer: Offer, from: Address, change: Partial<Message> = {}, domain: Partial<Offer["domain"]> = {}) {
  return signer.signTypedData(typedOf(offer, from, change, domain));
}

/** The body a client posts: the message as signed, `from`, the signature. */
async function signedBody(signer: PrivateKeyAccount, offer: Offer, opts: { from?: Address; change?: Partial<Message>; domain?: Partial<Offer["domain"]> } = {}) {
  const from = opts.from ?? signer.address;
  const m = { ...offer.message, ...opts.change };
  return { chainId: offer.domain.chainId, from, to: m.to, value: m.value, validAfter: m.validAfter, validBefore: m.validBefore, nonce: m.nonce, signature: await sign(signer, offer, from, opts.change, opts.domain) };
}

const relayerNonce = () => chain.publicClient.getTransactionCount({ address: DEV_RELAYER_ADDRESS });
const post = (token: string, body: unknown) => svc.call("POST", "/api/payment-sessions/authorizations", { auth: token, body });

/** A refusal: the status and code, nothing recorded, no transaction sent by the relayer. */
async function refused(token: string, body: unknown, status: number, code: string) {
  const recorded = await svc.count("payment_authorizations");
  const nonce = await relayerNonce();
  const r = await post(token, body);
  expect([r.status, r.body.error?.code]).toEqual([status, code]);
  expect(await svc.count("payment_authorizations")).toBe(recorded);
  expect(await relayerNonce()).toBe(nonce);
  return r.body.error;
}

describe("the payer view offers what to sign", () => {
  test("on the sandbox network: the token's domain and the session's terms (to the settlement address, the amount, until the expiry, the session's nonce)", async () => {
    const s = await newSession("12.34");
    expect(s.offer).toEqual({
      primaryType: "TransferWithAuthorization",
      domain: { name: "Test USD", version: "2", chainId: 31337, verifyingContract: chain.token },
      types: {
        TransferWithAuthorization: [
          { name: "from", type: "address" },
          { name: "to", type: "address" },
          { name: "value", type: "uint256" },
          { name: "validAfter", type: "uint256" },
          { name: "validBefore", type: "uint256" },
          { name: "nonce", type: "bytes32" },
        ],
      },
      message: {
        to: getAddress(DEFAULT_SANDBOX_SETTLEMENT),
        value: "12340000",
        validAfter: "0",
        validBefore: String(Math.floor(Date.parse(s.view.expiresAt) / 1000)),
        nonce: authorizationNonce(s.id),
      },
    });
  });

  test("on a production network (off until the relayer submits there): null", async () => {
    const s = await newSession("3.00", keys.liveKey);
    expect(s.view.networks.map((n: { chainId: number; gasless: unknown }) => [n.chainId, n.gasless])).toEqual([[8453, null]]);
  });
});

describe("a good authorization", () => {
  test("is recorded once (202), sends nothing, answers the same record again; a different one is refused; what was recorded really pays", async () => {
    const s = await newSession("12.34");
    const payer = await payerWith(12_340_000n);
    const body = await signedBody(payer, s.offer);
    const nonce = await relayerNonce();

    const first = await post(s.token, body);
    expect(first.status).toBe(202);
    expect(first.body).toEqual({
      paymentSessionId: s.id,
      status: "recorded",
      reason: null,
      detail: null,
      txHash: null,
      chainId: 31337,
      tokenAddress: chain.token,
      from: payer.address,
      to: getAddress(DEFAULT_SANDBOX_SETTLEMENT),
      value: "12340000",
      validAfter: "0",
      validBefore: s.offer.message.validBefore,
      nonce: s.offer.message.nonce,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    // The record, as a checkout reads it while the relayer works (GET; 404 for a session without one).
    expect(await svc.call("GET", "/api/payment-sessions/authorizations", { auth: s.token })).toMatchObject({ status: 200, body: first.body });
    const none = await newSession("1.00");
    expect(await svc.call("GET", "/api/payment-sessions/authorizations", { auth: none.token })).toMatchObject({ status: 404, body: { error: { code: "resource_not_found" } } });
    expect(JSON.stringify(first.body)).not.toContain(body.signature.slice(2, 40));
    const [row] = await svc.services.database.sql`select count(*)::int as n from app.payment_authorizations where session_id = ${s.id}`;
    expect(row!.n).toBe(1);
    // Nothing was sent: no relayer transaction, the payer still holds the amount.
    expect(await relayerNonce()).toBe(nonce);
    expect(await chain.publicClient.readContract({ address: chain.token, abi: eip3009Abi, functionName: "balanceOf", args: [payer.address] })).toBe(12_340_000n);

    // The same again (a retry): the same record. Without `to`, too (it is optional).
    const again = await post(s.token, { ...body, to: undefined });
    expect([again.status, again.body]).toEqual([202, first.body]);
    // Another payer's valid authorization for the same session: one per session.
    const other = await payerWith(12_340_000n);
    await refused(s.token, await signedBody(other, s.offer), 409, "authorization_exists");

    // What was recorded is exactly a transaction that pays: anyone submits it, the settlement address receives the amount.
    const settlement = getAddress(DEFAULT_SANDBOX_SETTLEMENT);
    const balanceOf = (a: Address) => chain.publicClient.readContract({ address: chain.token, abi: eip3009Abi, functionName: "balanceOf", args: [a] });
    const before = await balanceOf(settlement);
    const { walletClient } = localClients(chain.chain.rpcUrl, 31337, 1);
    const hash = await walletClient.writeContract({
      chain: null,
      account: ANVIL_ACCOUNTS[1].address,
      address: chain.token,
      abi: eip3009Abi,
      functionName: "transferWithAuthorization",
      args: [body.from, body.to, BigInt(body.value), BigInt(body.validAfter), BigInt(body.validBefore), body.nonce, body.signature],
    });
    expect((await chain.publicClient.waitForTransactionReceipt({ hash })).status).toBe("success");
    expect((await balanceOf(settlement)) - before).toBe(12_340_000n);
  });
});

describe("refusals: each its own 4xx, nothing recorded, no transaction", () => {
  test("signed by another key than `from` (forged)", async () => {
    const s = await newSession();
    const payer = await payerWith(12_340_000n);
    const forger = privateKeyToAccount(generatePrivateKey());
    const e = await refused(s.token, await signedBody(forger, s.offer, { from: payer.address }), 400, "authorization_signature_invalid");
    expect(e.param).toBe("signature");
    // Signed by the payer for another token (domain): not a signature over this session's terms either.
    await refused(s.token, await signedBody(payer, s.offer, { domain: { verifyingContract: ANVIL_ACCOUNTS[0].address } }), 400, "authorization_signature_invalid");
  });

  test("a signature the token itself refuses (the malleable high-s twin of a good one): caught by the simulation", async () => {
    const s = await newSession();
    const payer = await payerWith(12_340_000n);
    const body = await signedBody(payer, s.offer);
    // (r, n − s, the other v) recovers to the same key, but the token (as USDC) takes only low s.
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const sig = body.signature;
    const high = (n - BigInt(`0x${sig.slice(66, 130)}`)).toString(16).padStart(64, "0");
    const v = parseInt(sig.slice(130, 132), 16) === 27 ? "1c" : "1b";
    const twin = `${sig.slice(0, 66)}${high}${v}` as Hex;
    expect(await recoverTypedDataAddress({ ...typedOf(s.offer, payer.address), signature: twin })).toBe(payer.address);
    await refused(s.token, { ...body, signature: twin }, 400, "authorization_signature_invalid");
  });

  test("value, recipient, window: each mismatch its own code and parameter", async () => {
    const s = await newSession();
    const payer = await payerWith(100_000_000n);
    const m = s.offer.message;
    expect((await refused(s.token, await signedBody(payer, s.offer, { change: { value: "1000000" } }), 400, "authorization_value_mismatch")).param).toBe("value");
    expect((await refused(s.token, await signedBody(payer, s.offer, { change: { to: payer.address } }), 400, "authorization_recipient_mismatch")).param).toBe("to");
    const later = String(BigInt(m.validBefore) + 3600n);
    expect((await refused(s.token, await signedBody(payer, s.offer, { change: { validBefore: later } }), 400, "authorization_window_mismatch")).param).toBe("validBefore");
    expect((await refused(s.token, await signedBody(payer, s.offer, { change: { validAfter: "1" } }), 400, "authorization_window_mismatch")).param).toBe("validAfter");
  });

  test("the nonce of another session: an authorization for one session never pays another (replay)", async () => {
    const a = await newSession("5.00");
    const b = await newSession("5.00");
    // The same expiry to the second (two creates can straddle a second), so that only the nonce tells them apart.
    await svc.services.database.sql`update app.payment_sessions set expires_at = (select expires_at from app.payment_sessions where id = ${a.id}) where id = ${b.id}`;
    const payer = await payerWith(10_000_000n);
    const forA = await signedBody(payer, a.offer);
    expect((await refused(b.token, forA, 400, "authorization_nonce_mismatch")).param).toBe("nonce");
    // And a's own authorization is fine for a.
    expect((await post(a.token, forA)).status).toBe(202);
    await refused(b.token, forA, 400, "authorization_nonce_mismatch");
  });

  test("a session about to expire (under 30 s left) or expired", async () => {
    const s = await newSession();
    const payer = await payerWith(12_340_000n);
    // The session's expiry moved to 10 s from now (as the sandbox's expire tool moves it), then signed for that expiry.
    await svc.services.database.sql`update app.payment_sessions set expires_at = date_trunc('second', now()) + interval '10 seconds' where id = ${s.id}`;
    const view = (await svc.call("GET", "/api/payment-sessions", { auth: s.token })).body;
    expect(view.networks[0].gasless).toBeNull();
    const validBefore = String(Math.floor(Date.parse(view.expiresAt) / 1000));
    await refused(s.token, await signedBody(payer, s.offer, { change: { validBefore } }), 409, "authorization_expired");
  });

  test("a payer who holds less than the amount", async () => {
    const s = await newSession("12.34");
    const payer = await payerWith(12_339_999n);
    await refused(s.token, await signedBody(payer, s.offer), 409, "authorization_insufficient_balance");
  });

  test("a nonce the payer has already used on the chain", async () => {
    const s = await newSession("1.00");
    const payer = await payerWith(1_000_000n);
    const body = await signedBody(payer, s.offer);
    // Someone submits it before the service sees it (the payer then paid, but not through us).
    const { walletClient } = localClients(chain.chain.rpcUrl, 31337, 0);
    const hash = await walletClient.writeContract({
      chain: null,
      account: ANVIL_ACCOUNTS[0].address,
      address: chain.token,
      abi: eip3009Abi,
      functionName: "transferWithAuthorization",
      args: [body.from, body.to, BigInt(body.value), BigInt(body.validAfter), BigInt(body.validBefore), body.nonce, body.signature],
    });
    await chain.publicClient.waitForTransactionReceipt({ hash });
    await chain.mint(payer.address, 1_000_000n);
    // No indexer here: the payment is not seen, so the refusal stands, saying the session would show it.
    const error = await refused(s.token, body, 409, "authorization_nonce_used");
    expect(error.message).toContain("the session shows the payment as soon as its block is indexed");
  });

  test("a session that is not PENDING", async () => {
    const s = await newSession();
    const payer = await payerWith(12_340_000n);
    const body = await signedBody(payer, s.offer);
    expect((await svc.call("POST", "/api/payment-sessions/cancel", { auth: s.token, body: {} })).status).toBe(200);
    await refused(s.token, body, 409, "session_not_pending");
  });

  test("a network where the operator switched paying by authorization off (SERVICE_GASLESS_BASE=false)", async () => {
    const sandbox = await newSession("3.00");
    const live = await newSession("3.00", keys.liveKey);
    const payer = await payerWith(3_000_000n);
    const body = { ...(await signedBody(payer, sandbox.offer)), chainId: 8453 };
    expect((await refused(live.token, body, 409, "gasless_unavailable")).param).toBe("chainId");
  });

  test("bad input: a 4xx naming the parameter", async () => {
    const s = await newSession();
    const payer = await payerWith(0n);
    const good = await signedBody(payer, s.offer);
    const bad = async (body: unknown, code: string, param?: string) => {
      const e = await refused(s.token, body, 400, code);
      if (param) expect(e.param).toBe(param);
    };
    await bad({ ...good, signature: undefined }, "parameter_missing", "signature");
    await bad({ ...good, signature: "0x123" }, "parameter_invalid", "signature");
    await bad({ ...good, nonce: "0x1234" }, "parameter_invalid", "nonce");
    await bad({ ...good, value: "12.34" }, "parameter_invalid", "value");
    await bad({ ...good, value: 12340000 }, "parameter_invalid", "value");
    await bad({ ...good, chainId: 1 }, "parameter_invalid", "chainId");
    await bad({ ...good, from: payer.address.toLowerCase().replace("0x", "0X") }, "parameter_invalid", "from");
    await bad({ ...good, from: "0x0000000000000000000000000000000000000000" }, "parameter_invalid", "from");
    await bad({ ...good, from: "0x90f79bf6EB2c4f870365E785982E1f101E93b906" }, "address_checksum_invalid", "from");
    await bad({ ...good, extra: true }, "parameter_unknown", "extra");
    // An API key is not a session token.
    const r = await post(keys.sandboxKey, good);
    expect([r.status, r.body.error.code]).toEqual([401, "session_token_required"]);
  });
});
