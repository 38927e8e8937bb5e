/**
 * The relayer submits recorded EIP-3009 authorizations, on real parts and with outside actors:
 * a real anvil (TestUSD, which implements EIP-3009 as USDC), the service on its own database
 * recording authorizations through its route (its own sweeper off), and the sweeper started
 * here on the same database, so that a test can start, crash and restart it. A payer holds
 * TestUSD and no gas coin; a stranger submits the payer's signature before us; the relayer runs
 * out of gas coin; the network's fee goes above the ceiling; the session is canceled first.
 */
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { erc20Abi, getAddress, parseGwei, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { chainEnv, startTestChain, type TestChain } from "../../../testing/indexer-stack.ts";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { eventually } from "../../../testing/eventually.ts";
import { eip3009Abi } from "../../../shared/contracts/eip3009.ts";
import { ANVIL_ACCOUNTS } from "../../../shared/devchain/index.ts";
import { localClients } from "../../../shared/devchain/clients.ts";
import { DEFAULT_SANDBOX_SETTLEMENT, type SweepSettings } from "../config.ts";
import { DEV_RELAYER_ADDRESS, DEV_RELAYER_PRIVATE_KEY } from "../credentials/relayer.ts";
import { startSweeper, type Sweeper, type SweeperOptions } from "./sweeper.ts";
import { predictedAuthorizationBatchAddress } from "../../../shared/contracts/addresses.ts";

let chain: TestChain;
let svc: TestService;
let key: string;
const running: Sweeper[] = [];
const logs: string[] = [];
const SETTINGS: SweepSettings = { batchSize: 50, maxAttempts: 5, stuckMs: 60_000, pollMs: 50, retryBaseMs: 100, maxTxPerMinute: 600, maxTxPerHour: 10_000, maxTxPerSession: 8 };
const SETTLEMENT = getAddress(DEFAULT_SANDBOX_SETTLEMENT);

beforeAll(async () => {
  chain = await startTestChain("local");
  svc = await startTestService({ ...chainEnv([chain]), SERVICE_WEBHOOK_WORKER: "false" });
  key = (await svc.merchant("Relayer shop")).sandboxKey;
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
const local = () => svc.services.networks.filter((n) => n.chainId === 31337);

async function sweeper(extra: Partial<SweeperOptions> = {}): Promise<Sweeper> {
  const s = await startSweeper({
    sql: sql(),
    networks: local(),
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
  return { id: r.body.paymentSessionId as string, token };
}

const offerOf = async (token: string) => (await svc.call("GET", "/api/payment-sessions", { auth: token })).body.networks[0].gasless as Offer | null;

/** A payer with a fresh key, `units` TestUSD and no gas coin, who signs the session's offer; the authorization recorded (202). */
async function recorded(amount: string, units: bigint) {
  const s = await newSession(amount);
  const payer = privateKeyToAccount(generatePrivateKey());
  await chain.mint(payer.address, units);
  // (The relayer's capacity is read again at most every 2 s: after a test that drained it, the offer comes back.)
  const offer = await eventually(() => offerOf(s.token).then((o) => o ?? undefined), "a gasless offer");
  const body = await signed(payer, offer);
  const r = await svc.call("POST", "/api/payment-sessions/authorizations", { auth: s.token, body });
  expect([r.status, r.body.status]).toEqual([202, "recorded"]);
  return { ...s, payer, body };
}

async function signed(payer: PrivateKeyAccount, offer: Offer) {
  const m = offer.message;
  const signature = await payer.signTypedData({
    domain: offer.domain,
    types: offer.types,
    primaryType: offer.primaryType,
    message: { from: payer.address, to: m.to, value: BigInt(m.value), validAfter: BigInt(m.validAfter), validBefore: BigInt(m.validBefore), nonce: m.nonce },
  });
  return { chainId: 31337, from: payer.address, to: m.to, value: m.value, validAfter: m.validAfter, validBefore: m.validBefore, nonce: m.nonce, signature };
}

const record = async (token: string) => (await svc.call("GET", "/api/payment-sessions/authorizations", { auth: token })).body;
const recordIn = (token: string, statuses: string[], what: string, timeoutMs = 15_000) =>
  eventually(async () => {
    const r = await record(token);
    return statuses.includes(r.status) ? r : undefined;
  }, `${what}\n${logs.join("\n")}`, timeoutMs);
const tokens = (a: Address) => chain.publicClient.readContract({ address: chain.token, abi: eip3009Abi, functionName: "balanceOf", args: [a] });
const relayerNonce = () => chain.publicClient.getTransactionCount({ address: DEV_RELAYER_ADDRESS });
const relayerTxs = async (sessionId?: string) =>
  sql()`
    select t.id, t.kind, t.state, t.tx_hash, t.tx_hashes, t.gas_used, t.effective_gas_price::text as effective_gas_price
      from app.sweep_transactions t
     where t.kind = 'authorization'
       and (${sessionId ?? null}::text is null or t.id in (select transaction_id from app.payment_authorizations where session_id = ${sessionId ?? null}))
     order by t.nonce`;

/** Someone else (anvil account #1, with gas coin) submits the payer's signed authorization. */
async function strangerSubmits(body: Awaited<ReturnType<typeof signed>>) {
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
}

test("submitted once and paid: the settlement gets exactly the value, the payer spends no gas coin, the record says mined with its transaction", async () => {
  const a = await recorded("12.34", 12_340_000n);
  const before = { settlement: await tokens(SETTLEMENT), nonce: await relayerNonce() };
  await sweeper();
  const r = await recordIn(a.token, ["mined", "failed"], "mined");
  expect(r).toMatchObject({ status: "mined", reason: null, detail: null, paymentSessionId: a.id });
  expect((await tokens(SETTLEMENT)) - before.settlement).toBe(12_340_000n);
  expect(await tokens(a.payer.address)).toBe(0n);
  expect(await chain.publicClient.getBalance({ address: a.payer.address })).toBe(0n);
  expect(await relayerNonce()).toBe(before.nonce + 1);
  const [t, ...more] = await relayerTxs(a.id);
  expect(more).toHaveLength(0);
  expect(t).toMatchObject({ kind: "authorization", state: "mined", tx_hash: r.txHash });
  expect(BigInt(t!.gas_used)).toBeGreaterThan(30_000n);
  expect(BigInt(t!.effective_gas_price)).toBeGreaterThan(0n);
  const receipt = await chain.publicClient.getTransactionReceipt({ hash: r.txHash });
  expect(receipt.from).toBe(DEV_RELAYER_ADDRESS.toLowerCase() as Address);
  // The session is not ours to move: the indexer sees the payment like any other.
  expect((await svc.call("GET", "/api/payment-sessions", { auth: a.token })).body.status).toBe("PENDING");
  // /metrics counts the submission and what it cost, per network, beside the sweeps'.
  const metrics = (await svc.call("GET", "/metrics")).body as string;
  expect(metrics).toContain('paysession_relayer_transactions_last_hour{chain_id="31337",kind="authorization"} 1');
  const spent = Number(/paysession_relayer_gas_spent_last_hour\{chain_id="31337",kind="authorization"\} ([0-9.e-]+)/.exec(metrics)?.[1]);
  expect(spent).toBeCloseTo(Number(BigInt(t!.gas_used) * BigInt(t!.effective_gas_price)) / 1e18, 12);
  expect(spent).toBeGreaterThan(0);
}, 30_000);

test("killed after recording its transaction, before broadcasting: the next sweeper sends those very bytes, once", async () => {
  const a = await recorded("3.21", 3_210_000n);
  const before = { settlement: await tokens(SETTLEMENT), nonce: await relayerNonce() };
  let crashed: (() => void) | undefined;
  const crashedAt = new Promise<void>((r) => (crashed = r));
  const first: Sweeper = await sweeper({
    hooks: {
      beforeBroadcast: () => {
        void first.stop(); // the process dies here: nothing after this line of it runs
        crashed!();
        throw new Error("killed");
      },
    },
  });
  await crashedAt;
  await first.stop();
  const [left] = await relayerTxs(a.id);
  expect(left).toMatchObject({ state: "signed" });
  expect((await record(a.token)).status).toBe("sending");
  expect(await relayerNonce()).toBe(before.nonce);

  await sweeper(); // the restarted service
  const r = await recordIn(a.token, ["mined", "failed"], "mined after the restart");
  expect(r.status).toBe("mined");
  const [t, ...more] = await relayerTxs(a.id);
  expect(more).toHaveLength(0);
  expect(typeof t!.tx_hashes === "string" ? JSON.parse(t!.tx_hashes) : t!.tx_hashes).toEqual([left!.tx_hash]);
  expect(await relayerNonce()).toBe(before.nonce + 1);
  expect((await tokens(SETTLEMENT)) - before.settlement).toBe(3_210_000n);
}, 30_000);

test("a stranger submits the payer's signature first: our relayer sends nothing, the record ends used_elsewhere", async () => {
  const a = await recorded("4.00", 4_000_000n);
  const before = { settlement: await tokens(SETTLEMENT), nonce: await relayerNonce() };
  await strangerSubmits(a.body);
  await sweeper();
  const r = await recordIn(a.token, ["mined", "failed"], "failed");
  expect(r).toMatchObject({ status: "failed", reason: "used_elsewhere", txHash: null });
  expect(await relayerNonce()).toBe(before.nonce);
  expect(await relayerTxs(a.id)).toHaveLength(0);
  expect((await tokens(SETTLEMENT)) - before.settlement).toBe(4_000_000n); // paid once, by the stranger
}, 30_000);

test("a stranger's transaction lands between our signing and our broadcast: ours reverts, the record fails used_elsewhere, never sent again", async () => {
  const a = await recorded("4.50", 4_500_000n);
  const before = { settlement: await tokens(SETTLEMENT), nonce: await relayerNonce() };
  let once = false;
  await sweeper({
    hooks: {
      beforeBroadcast: async () => {
        if (once) return;
        once = true;
        await strangerSubmits(a.body);
      },
    },
  });
  const r = await recordIn(a.token, ["mined", "failed"], "failed");
  expect(r).toMatchObject({ status: "failed", reason: "used_elsewhere" });
  const receipt = await chain.publicClient.getTransactionReceipt({ hash: r.txHash });
  expect(receipt.status).toBe("reverted");
  await Bun.sleep(500); // more passes: nothing more is sent for it
  expect(await relayerTxs(a.id)).toHaveLength(1);
  expect(await relayerNonce()).toBe(before.nonce + 1);
  expect((await tokens(SETTLEMENT)) - before.settlement).toBe(4_500_000n);
}, 30_000);

test("the relayer has no gas coin: the record waits with the reason, gasless is no longer offered nor taken; funded again, it is sent", async () => {
  const a = await recorded("2.00", 2_000_000n);
  const funds = await chain.publicClient.getBalance({ address: DEV_RELAYER_ADDRESS });
  const nonce = await relayerNonce();
  await chain.rpc("anvil_setBalance", [DEV_RELAYER_ADDRESS, "0x0"]);
  try {
    await sweeper();
    const r = await eventually(async () => {
      const v = await record(a.token);
      return v.reason === "relayer_unfunded" ? v : undefined;
    }, "waiting for gas coin");
    expect(r.status).toBe("recorded");
    expect(r.detail).toContain("gas coin");
    expect(await relayerNonce()).toBe(nonce);
    // A new session: the payer view offers only the plain transfer, and an authorization is refused.
    const b = await newSession("1.00");
    await eventually(async () => (await offerOf(b.token)) === null, "no gasless offer");
    const payer = privateKeyToAccount(generatePrivateKey());
    await chain.mint(payer.address, 1_000_000n);
    const c = await newSession("1.00");
    await chain.rpc("anvil_setBalance", [DEV_RELAYER_ADDRESS, `0x${funds.toString(16)}`]);
    const offer = (await eventually(() => offerOf(c.token).then((o) => o ?? undefined), "offer back"))!;
    await chain.rpc("anvil_setBalance", [DEV_RELAYER_ADDRESS, "0x0"]);
    await eventually(async () => (await offerOf(c.token)) === null, "no gasless offer again");
    const refused = await svc.call("POST", "/api/payment-sessions/authorizations", { auth: c.token, body: await signed(payer, offer) });
    expect([refused.status, refused.body.error.code]).toEqual([409, "gasless_unavailable"]);
    expect(await relayerNonce()).toBe(nonce);
  } finally {
    await chain.rpc("anvil_setBalance", [DEV_RELAYER_ADDRESS, `0x${funds.toString(16)}`]);
  }
  // Funded again: the waiting record goes at its next look (brought forward here).
  await sql()`update app.payment_authorizations set next_attempt_at = now() where session_id = ${a.id}`;
  running[0]!.wake();
  expect((await recordIn(a.token, ["mined", "failed"], "mined once funded")).status).toBe("mined");
}, 40_000);

test("the network's fee above the ceiling (SERVICE_GASLESS_MAX_FEE_GWEI_LOCAL, 100 gwei): not sent, not offered", async () => {
  const a = await recorded("1.50", 1_500_000n);
  const nonce = await relayerNonce();
  const fee = async (gwei: string) => {
    await chain.rpc("anvil_setNextBlockBaseFeePerGas", [`0x${parseGwei(gwei).toString(16)}`]);
    await chain.rpc("evm_mine", []);
  };
  await fee("200"); // max fee 2 × 200 gwei + tip
  try {
    await sweeper();
    const r = await eventually(async () => {
      const v = await record(a.token);
      return v.reason === "fee_above_ceiling" ? v : undefined;
    }, "waiting for fees");
    expect(r.status).toBe("recorded");
    expect(r.detail).toContain("SERVICE_GASLESS_MAX_FEE_GWEI_<KEY>");
    const b = await newSession("1.00");
    await eventually(async () => (await offerOf(b.token)) === null, "no gasless offer");
    expect(await relayerNonce()).toBe(nonce);
  } finally {
    await fee("1");
  }
  await eventually(async () => (await offerOf((await newSession("1.00")).token)) !== null, "offered again");
  await sql()`update app.payment_authorizations set next_attempt_at = now() where session_id = ${a.id}`;
  running[0]!.wake();
  expect((await recordIn(a.token, ["mined", "failed"], "mined under the ceiling")).status).toBe("mined");
}, 40_000);

test("the session canceled before the relayer got to it: nothing is sent, the record fails session_closed", async () => {
  const a = await recorded("1.25", 1_250_000n);
  const nonce = await relayerNonce();
  expect((await svc.call("POST", `/payment-sessions/${a.id}/cancel`, { auth: key })).status).toBe(200);
  await sweeper();
  const r = await recordIn(a.token, ["mined", "failed"], "failed");
  expect(r).toMatchObject({ status: "failed", reason: "session_closed" });
  expect(await relayerNonce()).toBe(nonce);
  expect(await tokens(a.payer.address)).toBe(1_250_000n);
}, 30_000);

test("several due at once go in one relayer transaction through AuthorizationBatch: each paid exactly, each record mined with that hash", async () => {
  const amounts = ["1.01", "2.02", "3.03", "4.04", "5.05"];
  const all = [];
  for (const amount of amounts) all.push(await recorded(amount, BigInt(Math.round(Number(amount) * 100)) * 10_000n));
  const before = { settlement: await tokens(SETTLEMENT), nonce: await relayerNonce() };
  await sweeper();
  const records = await Promise.all(all.map((a) => recordIn(a.token, ["mined", "failed"], "mined in the batch")));
  expect(records.map((r) => r.status)).toEqual(amounts.map(() => "mined"));
  expect(new Set(records.map((r) => r.txHash)).size).toBe(1);
  expect(await relayerNonce()).toBe(before.nonce + 1);
  expect((await tokens(SETTLEMENT)) - before.settlement).toBe(15_150_000n);
  for (const a of all) expect(await tokens(a.payer.address)).toBe(0n);
  const receipt = await chain.publicClient.getTransactionReceipt({ hash: records[0]!.txHash });
  expect(receipt.to).toBe(predictedAuthorizationBatchAddress().toLowerCase() as Address);
  expect(logs.join("\n")).toContain("5 authorizations through AuthorizationBatch");
  // What batching is for: each payment costs well under one submitted alone (≈ 69,000 gas).
  expect(receipt.gasUsed / 5n).toBeLessThan(55_000n);
}, 60_000);

test("in a batch, one the stranger carried first and one whose payer emptied the account in between: the others are paid; the first ends used_elsewhere, the second is checked alone again and fails rejected", async () => {
  const [a, b, c] = [await recorded("1.10", 1_100_000n), await recorded("1.20", 1_200_000n), await recorded("1.30", 1_300_000n)];
  await chain.rpc("anvil_setBalance", [c.payer.address, "0xde0b6b3a7640000"]); // c's payer can send one transaction of its own
  const before = { settlement: await tokens(SETTLEMENT), nonce: await relayerNonce() };
  let once = false;
  await sweeper({
    hooks: {
      beforeBroadcast: async () => {
        if (once) return;
        once = true;
        await strangerSubmits(a.body);
        const { walletClient } = localClients(chain.chain.rpcUrl, 31337, 0);
        const hash = await walletClient.writeContract({ chain: null, account: c.payer, address: chain.token, abi: erc20Abi, functionName: "transfer", args: [ANVIL_ACCOUNTS[2].address, 1_300_000n] });
        await chain.publicClient.waitForTransactionReceipt({ hash });
      },
    },
  });
  const [ra, rb, rc] = await Promise.all([a, b, c].map((x) => recordIn(x.token, ["mined", "failed"], "outcomes")));
  expect(ra).toMatchObject({ status: "failed", reason: "used_elsewhere" });
  expect(rb).toMatchObject({ status: "mined", reason: null });
  expect(rc).toMatchObject({ status: "failed", reason: "rejected" });
  const batchTx = await chain.publicClient.getTransactionReceipt({ hash: rb.txHash });
  expect(batchTx.status).toBe("success");
  expect(ra.txHash).toBe(rb.txHash); // it rode in the batch and was caught there
  await Bun.sleep(500);
  expect(await relayerNonce()).toBe(before.nonce + 1); // c's second look sent nothing
  expect((await tokens(SETTLEMENT)) - before.settlement).toBe(1_100_000n + 1_200_000n); // a once (by the stranger), b by us
}, 60_000);

test("those recorded while an authorization transaction of ours is unmined gather for the next, one transaction for them all", async () => {
  // Signed while blocks still come by themselves (minting needs one); recorded later.
  const signedFor = async (amount: string, units: bigint) => {
    const sess = await newSession(amount);
    const payer = privateKeyToAccount(generatePrivateKey());
    await chain.mint(payer.address, units);
    const offer = await eventually(() => offerOf(sess.token).then((o) => o ?? undefined), "a gasless offer");
    const body = await signed(payer, offer);
    const record = async () => {
      const r = await svc.call("POST", "/api/payment-sessions/authorizations", { auth: sess.token, body });
      expect([r.status, r.body.status]).toEqual([202, "recorded"]);
    };
    return { ...sess, record };
  };
  const [first, second, third] = [await signedFor("1.40", 1_400_000n), await signedFor("1.50", 1_500_000n), await signedFor("1.60", 1_600_000n)];
  await chain.rpc("evm_setAutomine", [false]);
  try {
    await first.record();
    const nonce = await relayerNonce();
    await sweeper();
    await eventually(async () => ((await record(first.token)).status === "sending" ? true : undefined), "the first sent");
    // Two more come one after another while the first waits for its block: each would otherwise go alone.
    await second.record();
    await Bun.sleep(300);
    await third.record();
    await Bun.sleep(300);
    expect([(await record(second.token)).status, (await record(third.token)).status]).toEqual(["recorded", "recorded"]);
    await chain.rpc("evm_mine", []);
    await eventually(async () => ((await record(third.token)).status === "sending" ? true : undefined), "the two sent");
    await chain.rpc("evm_mine", []);
    const [r1, r2, r3] = await Promise.all([first, second, third].map((x) => recordIn(x.token, ["mined", "failed"], "mined")));
    expect([r1!.status, r2!.status, r3!.status]).toEqual(["mined", "mined", "mined"]);
    expect(r2!.txHash).toBe(r3!.txHash);
    expect(r1!.txHash).not.toBe(r2!.txHash);
    expect(await relayerNonce()).toBe(nonce + 2);
  } finally {
    await chain.rpc("evm_setAutomine", [true]);
  }
}, 60_000);
