/**
 * The gasless path attacked from outside, on real parts: a real anvil (TestUSD, EIP-3009 as
 * USDC v2.2, which asks a contract payer's EIP-1271 isValidSignature), the service recording
 * authorizations through its route (its own sweeper off) and the sweeper started here on the
 * same database. The attackers are payers and strangers, never our own client:
 *   - a contract-wallet payer whose EIP-1271 check turns into a gas sink right before our
 *     batch is mined (its owner front-runs it): the other payers of that batch must still be paid;
 *   - a contract-wallet payer whose check burns millions of gas and then says yes: the relayer
 *     must not pay for it;
 *   - one payer signing two sessions with money for one, both in one batch;
 *   - a crash between recording a batch and broadcasting it;
 *   - malformed bodies the way an attacker sends them (v = 0/1, 64/66-byte signatures, lone
 *     surrogates, one byte over the caps, wrong types).
 */
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { getAddress, parseAbi, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { chainEnv, startTestChain, type TestChain } from "../../../testing/indexer-stack.ts";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { eventually } from "../../../testing/eventually.ts";
import { solcCompile } from "../../../shared/contracts/compile.ts";
import { eip3009Abi } from "../../../shared/contracts/eip3009.ts";
import { ANVIL_ACCOUNTS } from "../../../shared/devchain/index.ts";
import { localClients } from "../../../shared/devchain/clients.ts";
import { DEFAULT_SANDBOX_SETTLEMENT, type SweepSettings } from "../config.ts";
import { MAX_BODY_BYTES } from "../http/body.ts";
import { SUBMISSION_GAS_BUDGET } from "../gasless/submission.ts";
import { DEV_RELAYER_ADDRESS, DEV_RELAYER_PRIVATE_KEY } from "../credentials/relayer.ts";
import { startSweeper, type Sweeper, type SweeperOptions } from "./sweeper.ts";

let chain: TestChain;
let svc: TestService;
let key: string;
const running: Sweeper[] = [];
const logs: string[] = [];
const SETTINGS: SweepSettings = { batchSize: 50, maxAttempts: 5, stuckMs: 60_000, pollMs: 50, retryBaseMs: 100, maxTxPerMinute: 600, maxTxPerHour: 10_000, maxTxPerSession: 8 };
const SETTLEMENT = getAddress(DEFAULT_SANDBOX_SETTLEMENT);

/**
 * The attacker's contract wallet (EIP-1271). `sink`: isValidSignature spins until its gas is
 * gone (the token then refuses, having lost all but 1/64 of what it forwarded). Otherwise it
 * burns `burnGas` and says yes. Only its owner (anvil account #1) changes either.
 */
const WALLET_SOURCE = `
pragma solidity 0.8.37;
contract SinkWallet {
    address public immutable owner;
    bool public sink;
    uint256 public burnGas;
    constructor() { owner = msg.sender; }
    function set(bool sink_, uint256 burnGas_) external {
        require(msg.sender == owner, "owner");
        sink = sink_;
        burnGas = burnGas_;
    }
    function isValidSignature(bytes32, bytes calldata) external view returns (bytes4) {
        if (sink) { uint256 i; while (gasleft() > 0) { unchecked { ++i; } } }
        uint256 start = gasleft();
        while (start - gasleft() < burnGas) {}
        return 0x1626ba7e;
    }
}`;
const walletAbi = parseAbi(["constructor()", "function set(bool sink_, uint256 burnGas_)", "function sink() view returns (bool)"]);
let walletBytecode: Hex;
const attacker = () => localClients(chain.chain.rpcUrl, 31337, 1).walletClient;

beforeAll(async () => {
  chain = await startTestChain("local");
  svc = await startTestService({ ...chainEnv([chain]), SERVICE_WEBHOOK_WORKER: "false" });
  key = (await svc.merchant("Attacked shop")).sandboxKey;
  const compiled = solcCompile({ "SinkWallet.sol": WALLET_SOURCE }).contracts["SinkWallet.sol"]?.["SinkWallet"];
  walletBytecode = `0x${compiled!.evm.bytecode.object}`;
}, 60_000);
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
  logs.length = 0;
});
afterAll(async () => {
  await svc?.close();
  await chain?.chain.stop();
});

const sql = () => svc.services.database.sql;

async function sweeper(extra: Partial<SweeperOptions> = {}): Promise<Sweeper> {
  const s = await startSweeper({
    sql: sql(),
    networks: svc.services.networks.filter((n) => n.chainId === 31337),
    relayerKeys: { 31337: DEV_RELAYER_PRIVATE_KEY },
    settings: SETTINGS,
    log: (l) => logs.push(l),
    ...extra,
  });
  running.push(s);
  return s;
}

interface Offer {
  domain: { name: string; version: string; chainId: number; verifyingContract: Address };
  types: { TransferWithAuthorization: { name: string; type: string }[] };
  primaryType: "TransferWithAuthorization";
  message: { to: Address; value: string; validAfter: string; validBefore: string; nonce: Hex };
}

async function newSession(amount: string) {
  const r = await svc.call("POST", "/payment-sessions", { auth: key, body: { amount, currency: "USD" } });
  expect(r.status).toBe(201);
  const token = r.body.paymentSessionToken as string;
  const offer = await eventually(async () => ((await svc.call("GET", "/api/payment-sessions", { auth: token })).body.networks[0].gasless as Offer | null) ?? undefined, "a gasless offer");
  return { id: r.body.paymentSessionId as string, token, offer };
}

type Body = { chainId: number; from: Address; to: Address; value: string; validAfter: string; validBefore: string; nonce: Hex; signature: Hex };

function bodyOf(offer: Offer, from: Address, signature: Hex): Body {
  const m = offer.message;
  return { chainId: 31337, from, to: m.to, value: m.value, validAfter: m.validAfter, validBefore: m.validBefore, nonce: m.nonce, signature };
}

async function signedBy(payer: PrivateKeyAccount, offer: Offer): Promise<Body> {
  const m = offer.message;
  const signature = await payer.signTypedData({
    domain: offer.domain,
    types: offer.types,
    primaryType: offer.primaryType,
    message: { from: payer.address, to: m.to, value: BigInt(m.value), validAfter: BigInt(m.validAfter), validBefore: BigInt(m.validBefore), nonce: m.nonce },
  });
  return bodyOf(offer, payer.address, signature);
}

const post = (token: string, body: unknown) => svc.call("POST", "/api/payment-sessions/authorizations", { auth: token, body });
async function recordedBody(token: string, body: Body) {
  const r = await post(token, body);
  expect([r.status, r.body.status, r.body.error]).toEqual([202, "recorded", undefined]);
}

/** A plain payer (fresh key, `amount` in TestUSD, no gas coin) whose authorization is recorded. */
async function honest(amount: string) {
  const s = await newSession(amount);
  const payer = privateKeyToAccount(generatePrivateKey());
  await chain.mint(payer.address, BigInt(s.offer.message.value));
  const body = await signedBy(payer, s.offer);
  await recordedBody(s.token, body);
  return { ...s, payer: payer.address, body };
}

/** The attacker's wallet, deployed by account #1 and funded with `units` TestUSD. */
async function sinkWallet(units: bigint): Promise<Address> {
  const w = attacker();
  const hash = await w.deployContract({ abi: walletAbi, bytecode: walletBytecode, account: w.account!, chain: w.chain });
  const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });
  const wallet = receipt.contractAddress!;
  await chain.mint(wallet, units);
  return wallet;
}

async function setWallet(wallet: Address, sink: boolean, burnGas: bigint) {
  const w = attacker();
  const hash = await w.writeContract({ address: wallet, abi: walletAbi, functionName: "set", args: [sink, burnGas], account: w.account!, chain: w.chain });
  expect((await chain.publicClient.waitForTransactionReceipt({ hash })).status).toBe("success");
}

/** Any 65 bytes: the wallet's check decides, not ECDSA. */
const WALLET_SIGNATURE = `0x${"11".repeat(64)}1b` as Hex;

const record = async (token: string) => (await svc.call("GET", "/api/payment-sessions/authorizations", { auth: token })).body;
const recordIn = (token: string, statuses: string[], what: string, timeoutMs = 20_000) =>
  eventually(async () => {
    const r = await record(token);
    return statuses.includes(r.status) ? r : undefined;
  }, `${what}\n${logs.join("\n")}`, timeoutMs);
const tokens = (a: Address) => chain.publicClient.readContract({ address: chain.token, abi: eip3009Abi, functionName: "balanceOf", args: [a] });
const relayerNonce = () => chain.publicClient.getTransactionCount({ address: DEV_RELAYER_ADDRESS });
const used = (from: Address, nonce: Hex) => chain.publicClient.readContract({ address: chain.token, abi: eip3009Abi, functionName: "authorizationState", args: [from, nonce] });
const authorizationCount = async () => Number((await sql()`select count(*)::int as n from app.payment_authorizations`)[0]!.n);

test("a contract-wallet payer front-runs our batch to turn its EIP-1271 check into a gas sink: the honest payers of that batch are still paid, not failed for good", async () => {
  const s = await newSession("1.00");
  const wallet = await sinkWallet(1_000_000n);
  await recordedBody(s.token, bodyOf(s.offer, wallet, WALLET_SIGNATURE)); // the oldest: first in the batch
  const victims = [await honest("2.00"), await honest("3.00")];
  const before = { settlement: await tokens(SETTLEMENT), nonce: await relayerNonce() };
  let once = false;
  await sweeper({
    hooks: {
      beforeBroadcast: async () => {
        if (once) return;
        once = true;
        await setWallet(wallet, true, 0n); // mined before our batch (a higher tip, in the same block)
      },
    },
  });
  const outcomes = await Promise.all(victims.map((v) => recordIn(v.token, ["mined", "failed"], "the victims' outcome")));
  expect(outcomes.map((o) => [o.status, o.reason])).toEqual([
    ["mined", null],
    ["mined", null],
  ]);
  for (const v of victims) expect(await tokens(v.payer)).toBe(0n);
  expect((await tokens(SETTLEMENT)) - before.settlement).toBe(5_000_000n);
  // The attacker's own ends failed, and is never sent again.
  expect(await recordIn(s.token, ["failed"], "the attacker's fails")).toMatchObject({ status: "failed" });
  // The spoiled batch, then each victim alone (the attacker's own fails its check: nothing sent for it).
  await Bun.sleep(500);
  expect(await relayerNonce()).toBe(before.nonce + 3);
}, 60_000);

test("a contract-wallet payer whose EIP-1271 check burns millions of gas and then says yes: refused at the route, and never paid for by the relayer when it turns dear after the record", async () => {
  const s = await newSession("1.00");
  const wallet = await sinkWallet(1_000_000n);
  const body = bodyOf(s.offer, wallet, WALLET_SIGNATURE);
  await setWallet(wallet, false, 3_000_000n);
  const before = await authorizationCount();
  const r = await post(s.token, body);
  expect([r.status, r.body.error?.code]).toEqual([409, "authorization_rejected"]);
  expect(r.body.error.message).toContain(`more than the relayer pays for one payment (${SUBMISSION_GAS_BUDGET})`);
  expect(await authorizationCount()).toBe(before);

  // Cheap while it is recorded, dear by the time the relayer looks: nothing is sent for it.
  await setWallet(wallet, false, 0n);
  await recordedBody(s.token, body);
  await setWallet(wallet, false, 3_000_000n);
  const nonce = await relayerNonce();
  await sweeper();
  const done = await recordIn(s.token, ["mined", "failed"], "the gas sink's outcome");
  expect([done.status, done.reason]).toEqual(["failed", "rejected"]);
  expect(done.detail).toContain("more than the relayer pays for one payment");
  expect(await relayerNonce()).toBe(nonce);
  expect(await tokens(wallet)).toBe(1_000_000n);
}, 60_000);

test("the same attacker with three wallets poisons batch after batch: the honest payers go alone after the first and are paid within their session budget", async () => {
  const wallets: { token: string; wallet: Address }[] = [];
  for (const amount of ["1.00", "1.01", "1.02"]) {
    const s = await newSession(amount);
    const wallet = await sinkWallet(BigInt(s.offer.message.value));
    await recordedBody(s.token, bodyOf(s.offer, wallet, WALLET_SIGNATURE));
    wallets.push({ token: s.token, wallet });
  }
  const victims = [await honest("2.00"), await honest("3.00")];
  const before = await tokens(SETTLEMENT);
  let next = 0;
  await sweeper({
    settings: { ...SETTINGS, maxTxPerSession: 2 },
    hooks: {
      beforeBroadcast: async ({ replacement }) => {
        if (!replacement && next < wallets.length) await setWallet(wallets[next++]!.wallet, true, 0n);
      },
    },
  });
  const outcomes = await Promise.all(victims.map((v) => recordIn(v.token, ["mined", "failed"], "the victims' outcome", 30_000)));
  expect(outcomes.map((o) => [o.status, o.reason])).toEqual([
    ["mined", null],
    ["mined", null],
  ]);
  expect((await tokens(SETTLEMENT)) - before).toBe(5_000_000n);
  for (const w of wallets) expect((await recordIn(w.token, ["mined", "failed"], "the attacker's")).status).toBe("failed");
}, 60_000);

test("malformed bodies the way an attacker sends them: each a 4xx in the documented shape naming what is wrong, nothing recorded, nothing sent; the good one is still taken after", async () => {
  const s = await newSession("1.00");
  const payer = privateKeyToAccount(generatePrivateKey());
  await chain.mint(payer.address, 1_000_000n);
  const good = await signedBy(payer, s.offer);
  const sig = good.signature;
  const [r, sHex, v] = [sig.slice(2, 66), sig.slice(66, 130), Number.parseInt(sig.slice(130, 132), 16)];
  // EIP-2098's 64-byte form: yParity folded into s's top bit.
  const compact = `0x${r}${(BigInt(`0x${sHex}`) | (BigInt(v - 27) << 255n)).toString(16).padStart(64, "0")}` as Hex;
  const json = (o: unknown) => JSON.stringify(o);
  const raw = async (body: string | Uint8Array<ArrayBuffer>, contentType = "application/json") => {
    const res = await fetch(`${svc.url}/api/payment-sessions/authorizations`, { method: "POST", headers: { authorization: `Bearer ${s.token}`, "content-type": contentType }, body });
    return { status: res.status, body: await res.json().catch(() => null) };
  };
  const padTo = (bytes: number) => {
    const base = json({ ...good, pad: "" });
    return json({ ...good, pad: "x".repeat(bytes - base.length) });
  };
  const cases: [string, string | Uint8Array<ArrayBuffer>, number, string, string?][] = [
    ["v = 0 instead of 27", json({ ...good, signature: `${sig.slice(0, 130)}${(v - 27).toString(16).padStart(2, "0")}` }), 400, "authorization_signature_invalid", "signature"],
    ["v = 1 instead of 28 (the other parity)", json({ ...good, signature: `${sig.slice(0, 130)}${(28 - v).toString(16).padStart(2, "0")}` }), 400, "authorization_signature_invalid", "signature"],
    ["64 bytes (EIP-2098 compact)", json({ ...good, signature: compact }), 400, "authorization_signature_invalid", "signature"],
    ["66 bytes (a byte appended)", json({ ...good, signature: `${sig}00` }), 400, "authorization_signature_invalid", "signature"],
    ["a signature of 2,048 bytes (the cap) of nothing", json({ ...good, signature: `0x${"ab".repeat(2048)}` }), 400, "authorization_signature_invalid", "signature"],
    ["a signature one byte over the cap", json({ ...good, signature: `0x${"ab".repeat(2049)}` }), 400, "parameter_invalid", "signature"],
    ["a lone surrogate in from", json({ ...good, from: "__F__" }).replace("__F__", "0x\\ud800"), 400, "parameter_invalid", "from"],
    ["a lone surrogate in the signature", json({ ...good, signature: "__S__" }).replace("__S__", "0x\\udc00"), 400, "parameter_invalid", "signature"],
    ["bytes that are not UTF-8", new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]), 400, "body_malformed"],
    ["one byte over the body cap", padTo(MAX_BODY_BYTES + 1), 413, "body_too_large"],
    ["exactly the body cap, with a field too many", padTo(MAX_BODY_BYTES), 400, "parameter_unknown", "pad"],
    ["chainId as a string", json({ ...good, chainId: "31337" }), 400, "parameter_invalid", "chainId"],
    ["chainId as a fraction", json({ ...good, chainId: 31337.5 }), 400, "parameter_invalid", "chainId"],
    ["chainId beyond any number", json(good).replace('"chainId":31337', '"chainId":1e400'), 400, "parameter_invalid", "chainId"],
    ["chainId in an array", json({ ...good, chainId: [31337] }), 400, "parameter_invalid", "chainId"],
    ["value of 79 digits", json({ ...good, value: "9".repeat(79) }), 400, "parameter_invalid", "value"],
    ["value over 2^256 in 78 digits", json({ ...good, value: "9".repeat(78) }), 400, "authorization_value_mismatch", "value"],
    ["validBefore as hex", json({ ...good, validBefore: "0x10" }), 400, "parameter_invalid", "validBefore"],
    ["nonce of another length", json({ ...good, nonce: `${good.nonce}00` }), 400, "parameter_invalid", "nonce"],
    ["from as an object", json({ ...good, from: { toString: good.from } }), 400, "parameter_invalid", "from"],
    ["a __proto__ field", json(good).replace("{", '{"__proto__":{"chainId":1},'), 400, "parameter_unknown", "__proto__"],
    ["null", "null", 400, "body_not_object"],
    ["an array", "[]", 400, "body_not_object"],
    ["not JSON", "{", 400, "body_malformed"],
    ["as text/plain", json(good), 415, "content_type_unsupported"],
  ];
  const nonce = await relayerNonce();
  const before = await authorizationCount();
  const answers = [];
  for (const [what, body] of cases) answers.push([what, await raw(body, what === "as text/plain" ? "text/plain" : undefined)] as const);
  expect(answers.map(([what, a]) => [what, a.status, a.body?.error?.code, a.body?.error?.param])).toEqual(cases.map(([what, , status, code, param]) => [what, status, code, param]));
  for (const [, a] of answers) {
    expect(a.body.error).toMatchObject({ type: expect.any(String), message: expect.any(String), requestId: expect.stringMatching(/^req_/) });
    expect(JSON.stringify(a.body)).not.toContain(sig.slice(2, 40)); // the signature is never echoed
  }
  expect(await authorizationCount()).toBe(before);
  expect(await relayerNonce()).toBe(nonce);
  // Nothing of it stuck: the payer's own authorization is taken (then the session canceled, so no later sweeper pays it).
  await recordedBody(s.token, good);
  expect((await svc.call("POST", `/payment-sessions/${s.id}/cancel`, { auth: key })).status).toBe(200);
}, 60_000);

test("one payer signs two sessions with money for one, both in one batch with an honest payer: one of the two is paid, the other fails rejected after one look alone; nothing loops", async () => {
  const payer = privateKeyToAccount(generatePrivateKey());
  const [a, b] = [await newSession("1.00"), await newSession("1.00")];
  await chain.mint(payer.address, 1_000_000n);
  const [bodyA, bodyB] = [await signedBy(payer, a.offer), await signedBy(payer, b.offer)];
  await recordedBody(a.token, bodyA); // each checked alone: the balance covers each
  await recordedBody(b.token, bodyB);
  const other = await honest("2.00");
  const before = { settlement: await tokens(SETTLEMENT), nonce: await relayerNonce() };
  await sweeper();
  const [ra, rb, ro] = await Promise.all([a, b, other].map((x) => recordIn(x.token, ["mined", "failed"], "outcomes")));
  expect([ra.status, rb.status, rb.reason, ro.status]).toEqual(["mined", "failed", "rejected", "mined"]);
  expect(ro.txHash).toBe(ra.txHash);
  await Bun.sleep(500);
  expect(await relayerNonce()).toBe(before.nonce + 1); // b's look alone sent nothing
  expect((await tokens(SETTLEMENT)) - before.settlement).toBe(3_000_000n);
  expect(await used(payer.address, bodyB.nonce)).toBe(false);
}, 60_000);

test("killed between recording a batch and broadcasting it: the restarted sweeper sends those very bytes once, and every payer of it is paid once", async () => {
  const payers = [await honest("1.11"), await honest("1.22"), await honest("1.33")];
  const before = { settlement: await tokens(SETTLEMENT), nonce: await relayerNonce() };
  let crashed: (() => void) | undefined;
  const crashedAt = new Promise<void>((r) => (crashed = r));
  const first: Sweeper = await sweeper({
    hooks: {
      beforeBroadcast: () => {
        void first.stop(); // the process dies here
        crashed!();
        throw new Error("killed");
      },
    },
  });
  await crashedAt;
  await first.stop();
  expect((await Promise.all(payers.map((p) => record(p.token)))).map((r) => r.status)).toEqual(["sending", "sending", "sending"]);
  const [signedTx] = await sql()`select tx_hash from app.sweep_transactions where kind = 'authorization' and state = 'signed'`;
  expect(await relayerNonce()).toBe(before.nonce);
  await sweeper();
  const outcomes = await Promise.all(payers.map((p) => recordIn(p.token, ["mined", "failed"], "after the restart")));
  expect(outcomes.map((o) => [o.status, o.txHash])).toEqual(payers.map(() => ["mined", signedTx!.tx_hash]));
  expect(await relayerNonce()).toBe(before.nonce + 1);
  expect((await tokens(SETTLEMENT)) - before.settlement).toBe(3_660_000n);
}, 60_000);

test("a stranger replays one payer's signature in the very block of our batch, ahead of it by a higher tip: that one ends used_elsewhere, the others are paid, each session's money moves once", async () => {
  const payers = [await honest("1.40"), await honest("1.50"), await honest("1.60")];
  const before = { settlement: await tokens(SETTLEMENT), nonce: await relayerNonce() };
  await chain.rpc("evm_setAutomine", [false]);
  try {
    await sweeper();
    await eventually(async () => ((await record(payers[1]!.token)).status === "sending" ? true : undefined), "our batch in the mempool");
    const w = attacker();
    const b = payers[1]!.body;
    await w.writeContract({
      address: chain.token,
      abi: eip3009Abi,
      functionName: "transferWithAuthorization",
      args: [b.from, b.to, BigInt(b.value), BigInt(b.validAfter), BigInt(b.validBefore), b.nonce, b.signature],
      account: w.account!,
      chain: w.chain,
      gas: 200_000n,
      maxFeePerGas: 1_000_000_000_000n,
      maxPriorityFeePerGas: 500_000_000_000n,
    });
    await chain.rpc("evm_mine", []);
  } finally {
    await chain.rpc("evm_setAutomine", [true]);
  }
  const outcomes = await Promise.all(payers.map((p) => recordIn(p.token, ["mined", "failed"], "outcomes")));
  expect(outcomes.map((o) => [o.status, o.reason])).toEqual([
    ["mined", null],
    ["failed", "used_elsewhere"],
    ["mined", null],
  ]);
  const ours = await chain.publicClient.getTransactionReceipt({ hash: outcomes[0]!.txHash });
  expect(outcomes[1]!.txHash).toBe(ours.transactionHash); // it rode in our batch and was caught there
  await Bun.sleep(500);
  expect(await relayerNonce()).toBe(before.nonce + 1);
  expect((await tokens(SETTLEMENT)) - before.settlement).toBe(4_500_000n);
}, 60_000);
