/**
 * The sweeper against a real anvil (TestUSD and the factory deployed) and a real Postgres. Rows
 * are set up directly with SQL, as the session actor would leave them: a merchant, a FUNDED
 * session, its deposit row and a queued sweep; the deposit address is funded with TestUSD.
 */
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from "bun:test";
import { parseEventLogs, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { NetworkConfig } from "../../../shared/chains/config.ts";
import { buildSweepCall, predictDepositAddress, sessionSalt } from "../../../shared/contracts/addresses.ts";
import { publicClientFor } from "../../../shared/chains/check.ts";
import { testUsdAbi } from "../../../shared/contracts/artifacts.ts";
import { ANVIL_ACCOUNTS, startTestChain, type TestChain } from "../../../testing/chain.ts";
import { deployQuirkyToken, quirkyTokenAbi } from "../../../testing/test-tokens.ts";
import type { SweepSettings } from "../config.ts";
import { connect, type Database } from "../db/client.ts";
import { migrate } from "../db/migrate.ts";
import { createTestDatabase } from "../../../testing/database.ts";
import { queueSweep } from "../effects/sweep-queue.ts";
import { DEV_RELAYER_ADDRESS, DEV_RELAYER_PRIVATE_KEY } from "../credentials/relayer.ts";
import { FORCED_FAILURE_ERROR, startSweeper, type Sweeper, type SweeperOptions } from "./sweeper.ts";

let chain: TestChain;
let network: NetworkConfig;
let db: Database;
let drop: () => Promise<void>;
let merchantId: string;
const running: Sweeper[] = [];
const logs: string[] = [];

const SETTINGS: SweepSettings = { batchSize: 50, maxAttempts: 5, stuckMs: 60_000, pollMs: 50, retryBaseMs: 100, maxTxPerMinute: 600, maxTxPerHour: 10_000, maxTxPerSession: 8 };
const usd = (n: number) => BigInt(Math.round(n * 100)) * 10_000n;

beforeAll(async () => {
  chain = await startTestChain();
  network = {
    key: "local",
    chainId: 31337,
    name: "Local test network",
    environment: "sandbox",
    rpcUrl: chain.anvil.rpcUrl,
    stablecoin: { symbol: "TestUSD", address: chain.token, decimals: 6, eip3009: true },
    stablecoins: [{ symbol: "TestUSD", address: chain.token, decimals: 6, eip3009: true }],
    confirmations: 1,
    confirmationsSource: "test",
    startBlock: null,
    blockTimeSeconds: 1,
    explorerUrl: null,
    factory: chain.factory,
    minSweepBaseUnits: 0n,
  };
});

afterAll(async () => {
  await chain?.stop();
});

beforeEach(async () => {
  const tdb = await createTestDatabase("sweeps");
  drop = tdb.drop;
  db = connect(tdb.url, { max: 8 });
  await migrate(db.sql);
  merchantId = `acct_${Math.random().toString(36).slice(2, 12)}`;
  await db.sql`insert into app.merchants (id, name, sandbox_public_id, live_public_id)
               values (${merchantId}, 'Sweep test', ${`mch_test_${merchantId}`}, ${`mch_live_${merchantId}`})`;
  logs.length = 0;
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
  await rpc("evm_setAutomine", [true]);
  await db.close();
  await drop();
});

async function rpc(method: string, params: unknown[] = []): Promise<unknown> {
  const res = await fetch(chain.anvil.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return ((await res.json()) as { result: unknown }).result;
}

async function sweeper(over: Partial<SweepSettings> = {}, extra: Partial<SweeperOptions> = {}): Promise<Sweeper> {
  const s = await startSweeper({
    sql: db.sql,
    networks: [network],
    relayerKeys: { 31337: DEV_RELAYER_PRIVATE_KEY },
    settings: { ...SETTINGS, ...over },
    log: (l) => logs.push(l),
    ...extra,
  });
  running.push(s);
  return s;
}

const relayerNonce = async () => chain.publicClient.getTransactionCount({ address: DEV_RELAYER_ADDRESS });
const freshAddress = (): Address => privateKeyToAccount(generatePrivateKey()).address;

/** A FUNDED session with its deposit row; the deposit is funded with `amount` TestUSD unless 0. */
async function fundedSession(amount: bigint, settlement: Address = freshAddress()) {
  const id = `ps_${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`.slice(0, 27);
  const deposit = predictDepositAddress({ factory: chain.factory, settlement, sessionSalt: sessionSalt(id) });
  await db.sql.begin(async (tx) => {
    await tx`
      insert into app.payment_sessions (id, merchant_id, environment, status, status_reason, amount_minor, currency,
                                        expires_at, token_hash, token_expires_at, funding_chain_id, funding_amount)
      values (${id}, ${merchantId}, 'sandbox', 'FUNDED', 'paid', ${String(amount / 10_000n || 100n)}::bigint, 'USD',
              now() + interval '1 hour', ${`hash_${id}`}, now() + interval '2 hours', 31337, ${amount.toString()}::numeric)`;
    await tx`
      insert into app.session_deposits (session_id, chain_id, address, settlement_address, token_address, decimals, required_base_units, confirmations)
      values (${id}, 31337, ${deposit.toLowerCase()}, ${settlement.toLowerCase()}, ${chain.token.toLowerCase()}, 6, ${amount.toString()}::numeric, 1)`;
  });
  if (amount > 0n) await chain.mint(deposit, amount);
  return { id, deposit, settlement };
}

function queue(s: { id: string; deposit: Address; settlement: Address }, amount: bigint, token: Address = chain.token, sql = db.sql) {
  return queueSweep(sql, { sessionId: s.id, chainId: 31337, depositAddress: s.deposit, settlementAddress: s.settlement, tokenAddress: token, amount });
}

async function sweepRow(id: string) {
  const [r] = await db.sql`
    select s.state, s.attempts, s.swept_amount::text as swept_amount, s.last_error, s.transaction_id, s.next_attempt_at::text as next_attempt_at,
           p.wake_at::text as wake_at, p.force_sweep_failure
      from app.sweeps s join app.payment_sessions p on p.id = s.session_id where s.id = ${id}`;
  return r!;
}

async function transactions() {
  const rows = await db.sql`
    select id, nonce, state, tx_hash, tx_hashes, max_fee_per_gas::text as max_fee_per_gas, block_number, gas_used, created_at::text as created_at
      from app.sweep_transactions order by nonce`;
  return rows.map((r) => ({
    id: r.id as string,
    nonce: BigInt(r.nonce as bigint),
    state: r.state as string,
    tx_hash: r.tx_hash as string,
    tx_hashes: (typeof r.tx_hashes === "string" ? JSON.parse(r.tx_hashes) : r.tx_hashes) as string[],
    max_fee_per_gas: r.max_fee_per_gas as string,
    block_number: r.block_number as bigint | null,
    gas_used: r.gas_used as bigint | null,
    created_at: r.created_at as string,
  }));
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false | null>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${logs.join("\n")}`);
    await Bun.sleep(25);
  }
}

const sweepState = (id: string, states: string[]) => async () => {
  const r = await sweepRow(id);
  return states.includes(r.state as string) ? r : undefined;
};

test("one sweep: confirmed, the settlement got the amount, swept_amount and gas recorded, the session woken", async () => {
  const s = await fundedSession(usd(12.34));
  const id = await queue(s, usd(12.34));
  const before = await relayerNonce();
  await sweeper();
  const r = await waitFor("confirmed", sweepState(id, ["confirmed", "failed"]));
  expect(r.state).toBe("confirmed");
  expect(r.swept_amount).toBe(usd(12.34).toString());
  expect(r.attempts).toBe(1);
  expect(r.wake_at).not.toBeNull();
  expect(await chain.balanceOf(s.settlement)).toBe(usd(12.34));
  expect(await chain.balanceOf(s.deposit)).toBe(0n);
  const [t, ...more] = await transactions();
  expect(more).toHaveLength(0);
  expect(t!.id).toBe(r.transaction_id as string);
  expect(t!.state).toBe("mined");
  expect(BigInt(t!.nonce)).toBe(BigInt(before));
  expect(BigInt(t!.gas_used!)).toBeGreaterThan(50_000n);
  const receipt = await chain.publicClient.getTransactionReceipt({ hash: t!.tx_hash as Hex });
  expect(receipt.from.toLowerCase()).toBe(DEV_RELAYER_ADDRESS.toLowerCase());
  expect(BigInt(t!.block_number!)).toBe(receipt.blockNumber);
  expect(await relayerNonce()).toBe(before + 1);
}, 30_000);

test("a batch of 20 sweeps goes out as one transaction", async () => {
  const sessions: Awaited<ReturnType<typeof fundedSession>>[] = [];
  for (let i = 0; i < 20; i++) sessions.push(await fundedSession(usd(1 + i)));
  const ids: string[] = [];
  await db.sql.begin(async (tx) => {
    for (const [i, s] of sessions.entries()) ids.push(await queue(s, usd(1 + i), chain.token, tx as never));
  });
  const before = await relayerNonce();
  await sweeper();
  for (const id of ids) await waitFor(id, sweepState(id, ["confirmed", "failed"]));
  const txs = await transactions();
  expect(txs).toHaveLength(1);
  expect(await relayerNonce()).toBe(before + 1);
  for (const [i, id] of ids.entries()) {
    const r = await sweepRow(id);
    expect(r.state).toBe("confirmed");
    expect(r.transaction_id).toBe(txs[0]!.id);
    expect(r.swept_amount).toBe(usd(1 + i).toString());
    expect(await chain.balanceOf(sessions[i]!.settlement)).toBe(usd(1 + i));
  }
}, 60_000);

test("a second payment after a sweep is swept again (and recorded)", async () => {
  const s = await fundedSession(usd(5));
  const first = await queue(s, usd(5));
  await sweeper();
  await waitFor("first", sweepState(first, ["confirmed"]));
  await chain.mint(s.deposit, usd(3));
  const second = await queue(s, usd(3));
  const r = await waitFor("second", sweepState(second, ["confirmed", "failed"]));
  expect(r.state).toBe("confirmed");
  expect(r.swept_amount).toBe(usd(3).toString());
  expect(await chain.balanceOf(s.settlement)).toBe(usd(8));
  expect(await transactions()).toHaveLength(2);
}, 30_000);

test("sandbox forced failure: failed at once with attempts = max, flag cleared, session woken, nothing sent", async () => {
  const s = await fundedSession(usd(2));
  await db.sql`update app.payment_sessions set force_sweep_failure = true, wake_at = null where id = ${s.id}`;
  const id = await queue(s, usd(2));
  const before = await relayerNonce();
  await sweeper({ maxAttempts: 4 });
  const r = await waitFor("failed", sweepState(id, ["failed", "confirmed"]));
  expect(r.state).toBe("failed");
  expect(r.attempts).toBe(4);
  expect(r.last_error).toBe(FORCED_FAILURE_ERROR);
  expect(r.force_sweep_failure).toBe(false);
  expect(r.wake_at).not.toBeNull();
  expect(r.transaction_id).toBeNull();
  expect(await transactions()).toHaveLength(0);
  expect(await relayerNonce()).toBe(before);
  expect(await chain.balanceOf(s.deposit)).toBe(usd(2));
}, 30_000);

test("a sweep that fails on-chain (frozen token → SweepFailed) is retried with backoff, then failed with last_error", async () => {
  const quirky = await deployQuirkyToken(chain);
  const s = await fundedSession(0n);
  await chain.receipt(await chain.walletClient.writeContract({ address: quirky, abi: quirkyTokenAbi, functionName: "mint", args: [s.deposit, 77n] }));
  await chain.receipt(await chain.walletClient.writeContract({ address: quirky, abi: quirkyTokenAbi, functionName: "setFrozen", args: [true] }));
  await db.sql`update app.payment_sessions set wake_at = null where id = ${s.id}`;
  const id = await queue(s, 77n, quirky);
  await sweeper({ maxAttempts: 3, retryBaseMs: 300 }, { random: () => 0.5 });
  const afterFirst = await waitFor("first attempt", async () => {
    const r = await sweepRow(id);
    return r.attempts === 1 && r.state === "queued" ? r : undefined;
  });
  expect(afterFirst.last_error).toContain("SweepFailed");
  expect(afterFirst.wake_at).toBeNull(); // a retry is not news for the session
  const r = await waitFor("failed", sweepState(id, ["failed", "confirmed"]));
  expect(r.state).toBe("failed");
  expect(r.attempts).toBe(3);
  expect(r.last_error).toContain("SweepFailed");
  expect(r.wake_at).not.toBeNull();
  const txs = await transactions();
  expect(txs).toHaveLength(3);
  expect(txs.every((t) => t.state === "mined")).toBe(true);
  // Backoff: 300 ms after the first failure, 600 ms after the second.
  const at = txs.map((t) => Date.parse(t.created_at as string));
  expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(280);
  expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(580);
  expect(await chain.balanceOf(s.deposit, quirky)).toBe(77n);
}, 30_000);

test("a stuck transaction is replaced with the same nonce and higher fees; one of its hashes is mined, the sweep confirmed once", async () => {
  const s = await fundedSession(usd(4));
  const before = await relayerNonce();
  await rpc("evm_setAutomine", [false]);
  const id = await queue(s, usd(4));
  await sweeper({ stuckMs: 700 });
  // The first transaction's fee, read before anything replaces it (the node drops it then).
  const original = await waitFor("the first transaction", async () => {
    const [t] = await transactions();
    return t && t.tx_hashes.length === 1 && t.state === "sent" ? t : undefined;
  });
  const bumped = await waitFor("a replacement", async () => {
    const [t] = await transactions();
    return t && t.tx_hashes.length >= 2 && t.state === "sent" ? t : undefined;
  });
  const second = await chain.publicClient.getTransaction({ hash: bumped.tx_hashes[1] as Hex });
  expect(bumped.tx_hashes[0]).toBe(original.tx_hash);
  expect(second.nonce).toBe(before);
  expect(second.maxFeePerGas! * 100n).toBeGreaterThanOrEqual(BigInt(original.max_fee_per_gas) * 125n);
  expect(second.maxPriorityFeePerGas).toBeGreaterThan(0n);
  expect((await sweepRow(id)).state).toBe("sending");
  await rpc("evm_mine");
  const r = await waitFor("confirmed", sweepState(id, ["confirmed", "failed"]));
  expect(r.state).toBe("confirmed");
  expect(r.swept_amount).toBe(usd(4).toString());
  const [t, ...more] = await transactions();
  expect(more).toHaveLength(0);
  expect(t!.state).toBe("mined");
  expect(t!.tx_hashes).toContain(t!.tx_hash as string);
  expect(await relayerNonce()).toBe(before + 1);
  expect(await chain.balanceOf(s.settlement)).toBe(usd(4));
  await rpc("evm_setAutomine", [true]);
}, 30_000);

test("two sweepers on one database send each sweep once", async () => {
  const before = await relayerNonce();
  await sweeper({ batchSize: 3 });
  await sweeper({ batchSize: 3 });
  const sessions: Awaited<ReturnType<typeof fundedSession>>[] = [];
  const ids: string[] = [];
  for (let wave = 0; wave < 3; wave++) {
    const batch: Awaited<ReturnType<typeof fundedSession>>[] = [];
    for (let i = 0; i < 4; i++) batch.push(await fundedSession(usd(1)));
    await db.sql.begin(async (tx) => {
      for (const s of batch) ids.push(await queue(s, usd(1), chain.token, tx as never));
    });
    sessions.push(...batch);
  }
  for (const id of ids) await waitFor(id, sweepState(id, ["confirmed", "failed"]));
  const txs = await transactions();
  expect(await relayerNonce()).toBe(before + txs.length);
  let transfers = 0;
  for (const t of txs) {
    expect(t.state).toBe("mined");
    const receipt = await chain.publicClient.getTransactionReceipt({ hash: t.tx_hash as Hex });
    transfers += parseEventLogs({ abi: testUsdAbi, eventName: "Transfer", logs: receipt.logs }).length;
  }
  expect(transfers).toBe(12);
  for (const [i, id] of ids.entries()) {
    const r = await sweepRow(id);
    expect(r.state).toBe("confirmed");
    expect(r.attempts).toBe(1);
    expect(r.swept_amount).toBe(usd(1).toString());
    expect(await chain.balanceOf(sessions[i]!.settlement)).toBe(usd(1));
  }
}, 60_000);

test("killed after recording, before broadcasting: a new sweeper broadcasts the recorded bytes at once, never a second nonce", async () => {
  const s = await fundedSession(usd(6));
  const id = await queue(s, usd(6));
  const before = await relayerNonce();
  let crashed: (() => void) | undefined;
  const crashedAt = new Promise<void>((r) => (crashed = r));
  const a: Sweeper = await sweeper({}, {
    hooks: {
      beforeBroadcast: () => {
        void a.stop(); // the process dies here: nothing after this line of it runs
        crashed!();
        throw new Error("killed");
      },
    },
  });
  await crashedAt;
  await a.stop();
  const [left] = await transactions();
  expect(left!.state).toBe("signed");
  expect((await sweepRow(id)).state).toBe("sending");
  expect(await chain.publicClient.getTransaction({ hash: left!.tx_hash as Hex }).catch(() => null)).toBeNull();
  expect(await relayerNonce()).toBe(before);

  // The stuck time (60 s) is far away: only the stored signed bytes can make it land now.
  const t0 = Date.now();
  await sweeper();
  const r = await waitFor("confirmed", sweepState(id, ["confirmed", "failed"]));
  expect(Date.now() - t0).toBeLessThan(SETTINGS.stuckMs);
  expect(r.state).toBe("confirmed");
  expect(r.swept_amount).toBe(usd(6).toString());
  const [t, ...more] = await transactions();
  expect(more).toHaveLength(0);
  expect(t!.id).toBe(left!.id);
  expect(t!.tx_hashes).toEqual([left!.tx_hash]); // the very transaction recorded before the crash
  expect(await relayerNonce()).toBe(before + 1);
}, 30_000);

test("stopped with a transaction in the mempool: the next sweeper finds it and records it, nothing re-sent", async () => {
  const s = await fundedSession(usd(7));
  const before = await relayerNonce();
  await rpc("evm_setAutomine", [false]);
  const id = await queue(s, usd(7));
  const a = await sweeper();
  const sent = await waitFor("sent", async () => {
    const [t] = await transactions();
    return t?.state === "sent" ? t : undefined;
  });
  await a.stop();
  await sweeper();
  await Bun.sleep(200);
  await rpc("evm_mine");
  await rpc("evm_setAutomine", [true]);
  const r = await waitFor("confirmed", sweepState(id, ["confirmed", "failed"]));
  expect(r.state).toBe("confirmed");
  const [t, ...more] = await transactions();
  expect(more).toHaveLength(0);
  expect(t!.tx_hashes).toEqual(sent.tx_hashes);
  expect(await relayerNonce()).toBe(before + 1);
  expect(await chain.balanceOf(s.settlement)).toBe(usd(7));
}, 30_000);

test("recovery: a stray ERC-20 and native coin at a deposit address are swept to its settlement on request", async () => {
  const { queueRecovery } = await import("./recover.ts");
  const quirky = await deployQuirkyToken(chain);
  const s = await fundedSession(usd(1));
  const first = await queue(s, usd(1));
  await sweeper();
  await waitFor("first", sweepState(first, ["confirmed"]));
  // Later, by mistake: another token and some ETH.
  await chain.receipt(await chain.walletClient.writeContract({ address: quirky, abi: quirkyTokenAbi, functionName: "mint", args: [s.deposit, 555n] }));
  await chain.receipt(await chain.walletClient.sendTransaction({ to: s.deposit, value: 10n ** 15n }));
  const tokenSweep = await queueRecovery(db.sql, { sessionId: s.id, chainId: 31337, token: quirky });
  const r = await waitFor("token recovery", sweepState(tokenSweep, ["confirmed", "failed"]));
  expect(r.state).toBe("confirmed");
  expect(r.swept_amount).toBe("555");
  expect(await chain.balanceOf(s.settlement, quirky)).toBe(555n);
  // Native coin goes along with every sweep (the sweeper self-destructs to the settlement).
  expect(await chain.publicClient.getBalance({ address: s.settlement })).toBe(10n ** 15n);
  await chain.receipt(await chain.walletClient.sendTransaction({ to: s.deposit, value: 2n * 10n ** 15n }));
  const nativeSweep = await queueRecovery(db.sql, { sessionId: s.id, chainId: 31337, token: "native" });
  expect((await waitFor("native recovery", sweepState(nativeSweep, ["confirmed", "failed"]))).state).toBe("confirmed");
  expect(await chain.publicClient.getBalance({ address: s.settlement })).toBe(3n * 10n ** 15n);
  expect(await chain.publicClient.getBalance({ address: s.deposit })).toBe(0n);
  await expect(queueRecovery(db.sql, { sessionId: s.id, chainId: 1, token: "native" })).rejects.toThrow(/no deposit address/);
}, 30_000);

// ------------------------------------------------------------------ relayer spend: never without bound

/** Another account calls the factory's open `sweep` for a deposit (anyone may). */
async function strangerSweeps(s: { id: string; settlement: Address }, factory: Address = chain.factory): Promise<void> {
  const call = buildSweepCall({ factory, deposits: [{ settlement: s.settlement, sessionSalt: sessionSalt(s.id) }], tokens: [chain.token] });
  const hash = await chain.wallet(ANVIL_ACCOUNTS[1]).sendTransaction({ account: ANVIL_ACCOUNTS[1], chain: null, to: call.to, data: call.data });
  await chain.receipt(hash);
}

test("a deposit already swept by a stranger: nothing is sent, the round is done having moved nothing", async () => {
  const s = await fundedSession(usd(3));
  await strangerSweeps(s);
  expect(await chain.balanceOf(s.settlement)).toBe(usd(3));
  const id = await queue(s, usd(3));
  const before = await relayerNonce();
  await sweeper();
  const r = await waitFor("done", sweepState(id, ["confirmed", "failed"]));
  expect(r).toMatchObject({ state: "confirmed", swept_amount: "0", attempts: 0, transaction_id: null });
  expect(r.last_error).toContain("already empty");
  expect(r.wake_at).not.toBeNull();
  await Bun.sleep(300);
  expect(await relayerNonce()).toBe(before);
  expect(await transactions()).toHaveLength(0);
});

test("a stranger sweeps between our signing and our broadcast: one relayer transaction, that moved 0, is a failed attempt; the retry sends nothing", async () => {
  const s = await fundedSession(usd(4));
  const id = await queue(s, usd(4));
  const before = await relayerNonce();
  let raced = false;
  await sweeper({}, {
    hooks: {
      beforeBroadcast: async () => {
        if (raced) return;
        raced = true;
        await strangerSweeps(s);
      },
    },
  });
  const r = await waitFor("done", sweepState(id, ["confirmed", "failed"]));
  expect(r.state).toBe("confirmed");
  expect(r.swept_amount).toBe("0");
  expect(r.last_error).toContain("already empty");
  await Bun.sleep(500);
  expect(await relayerNonce()).toBe(before + 1);
  const txs = await transactions();
  expect(txs).toHaveLength(1);
  expect(txs[0]!.state).toBe("mined");
  expect(await chain.balanceOf(s.settlement)).toBe(usd(4));
});

test("the factory has no code on the network: sweeps wait, recorded, nothing is sent; once it is there they go", async () => {
  const missing = freshAddress();
  const net = { ...network, factory: missing };
  const settlement = freshAddress();
  const s = await fundedSession(usd(2), settlement);
  // The session's deposit as that factory would make it.
  const deposit = predictDepositAddress({ factory: missing, settlement, sessionSalt: sessionSalt(s.id) });
  await db.sql`update app.session_deposits set address = ${deposit.toLowerCase()} where session_id = ${s.id}`;
  await chain.mint(deposit, usd(2));
  const id = await queue({ ...s, deposit }, usd(2));
  const before = await relayerNonce();
  await sweeper({}, { networks: [net] });
  await waitFor("the reason recorded", async () => ((await sweepRow(id)).last_error as string | null)?.includes("not deployed"));
  await Bun.sleep(400);
  const waiting = await sweepRow(id);
  expect(waiting).toMatchObject({ state: "queued", attempts: 0 });
  expect(await relayerNonce()).toBe(before);
  expect(logs.filter((l) => l.includes("not deployed"))).toHaveLength(1); // told once, not per pass
  // The operator deploys it (here: its code placed at that address); the sweep goes through.
  const code = await chain.publicClient.getCode({ address: chain.factory });
  await rpc("anvil_setCode", [missing, code]);
  await db.sql`update app.sweeps set next_attempt_at = now() where id = ${id}`;
  const r = await waitFor("confirmed", sweepState(id, ["confirmed", "failed"]));
  expect(r).toMatchObject({ state: "confirmed", swept_amount: usd(2).toString() });
  expect(await chain.balanceOf(settlement)).toBe(usd(2));
});

test("relayer-spend guard: past the per-minute limit sweeps wait with the reason; a session past its budget fails instead of paying", async () => {
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push(await queue(await fundedSession(usd(1)), usd(1)));
  const before = await relayerNonce();
  const limited = await sweeper({ batchSize: 1, maxTxPerMinute: 2 });
  await waitFor("two confirmed", async () => {
    const rows = await Promise.all(ids.map((id) => sweepRow(id)));
    return rows.filter((r) => r.state === "confirmed").length === 2 ? rows : undefined;
  });
  const third = await waitFor("the third waits", async () => {
    const rows = await Promise.all(ids.map((id) => sweepRow(id)));
    return rows.find((r) => r.state === "queued" && String(r.last_error).includes("SERVICE_SWEEP_MAX_TX_PER_MINUTE"));
  });
  expect(third.attempts).toBe(0);
  await Bun.sleep(300);
  expect(await relayerNonce()).toBe(before + 2);
  expect(logs.filter((l) => l.includes("SERVICE_SWEEP_MAX_TX_PER_MINUTE"))).toHaveLength(1); // told once
  await limited.stop();

  // Per session: one that already cost its budget gets no further transaction.
  const s = await fundedSession(usd(1));
  const old = await queue(s, usd(1));
  await db.sql`update app.sweeps set state = 'failed', attempts = 2 where id = ${old}`;
  const id = await queue(s, usd(1));
  const n = await relayerNonce();
  await sweeper({ maxTxPerSession: 2 });
  const r = await waitFor("failed by the guard", sweepState(id, ["confirmed", "failed"]));
  expect(r.state).toBe("failed");
  expect(r.last_error).toContain("SERVICE_SWEEP_MAX_TX_PER_SESSION");
  expect(r.wake_at).not.toBeNull();
  expect(await relayerNonce()).toBe(n);
}, 30_000);

test("an RPC error while reading a receipt is not 'no receipt': nothing is released or sent again", async () => {
  const s = await fundedSession(usd(5));
  const id = await queue(s, usd(5));
  const before = await relayerNonce();
  let failUntil = 0;
  await sweeper({}, {
    clientFor: (net) => {
      const c = publicClientFor(net);
      return new Proxy(c, {
        get(target, prop, receiver) {
          if (prop === "getTransactionReceipt" && Date.now() < failUntil) {
            return async () => {
              throw new Error("fetch failed: connection refused");
            };
          }
          return Reflect.get(target, prop, receiver);
        },
      });
    },
    hooks: {
      beforeBroadcast: () => {
        failUntil = Date.now() + 4_000; // longer than any grace: the node is down while the transaction mines
      },
    },
  });
  const r = await waitFor("confirmed", sweepState(id, ["confirmed", "failed"]), 20_000);
  expect(r).toMatchObject({ state: "confirmed", swept_amount: usd(5).toString(), attempts: 1 });
  expect(await relayerNonce()).toBe(before + 1);
  expect((await transactions()).map((t) => t.state)).toEqual(["mined"]);
  expect(logs.some((l) => l.includes("connection refused"))).toBe(true);
}, 30_000);

// ------------------------------------------------------------------ the chain is the truth

test("a mined sweep the chain lost (it went back): dropped after the grace, swept again from the chain's nonce", async () => {
  const s = await fundedSession(usd(6));
  const snapshot = (await rpc("evm_snapshot")) as string;
  const before = await relayerNonce();
  const id = await queue(s, usd(6));
  const first = await sweeper({}, { reconcileGraceMs: 300 });
  const r1 = await waitFor("confirmed", sweepState(id, ["confirmed", "failed"]));
  expect(r1.state).toBe("confirmed");
  const [lost] = await transactions();
  expect(await chain.balanceOf(s.settlement)).toBe(usd(6));
  // The chain loses its last blocks (a deep reorg, a node that is behind, a crashed local chain).
  await rpc("evm_revert", [snapshot]);
  expect(await chain.balanceOf(s.deposit)).toBe(usd(6));
  expect(await relayerNonce()).toBe(before);
  const r2 = await waitFor("swept again", async () => {
    const r = await sweepRow(id);
    return r.state === "confirmed" && r.transaction_id !== lost!.id ? r : undefined;
  }, 20_000);
  expect(r2.swept_amount).toBe(usd(6).toString());
  expect(await chain.balanceOf(s.settlement)).toBe(usd(6));
  expect(await chain.balanceOf(s.deposit)).toBe(0n);
  const txs = await transactions();
  expect(txs.map((t) => [t.nonce, t.state])).toEqual([
    [BigInt(before), "dropped"],
    [BigInt(before), "mined"],
  ]);
  expect(logs.some((l) => l.includes("dropped transaction") && l.includes("no longer has"))).toBe(true);
  await first.stop();
}, 30_000);

test("a nonce gap never blocks later sweeps: a transaction stranded above a nonce nobody holds is dropped and re-signed", async () => {
  const s = await fundedSession(usd(2));
  const id = await queue(s, usd(2));
  const n = await relayerNonce();
  // As a crash leaves it: our record of a transaction five nonces above the chain's, its sweep bound to it.
  const txId = "swtx_stranded_test";
  await db.sql`
    insert into app.sweep_transactions (id, chain_id, relayer, nonce, tx_hash, tx_hashes, state, sent_at)
    values (${txId}, 31337, ${DEV_RELAYER_ADDRESS.toLowerCase()}, ${(n + 5).toString()}::bigint, ${"0x" + "ab".repeat(32)},
            ${JSON.stringify(["0x" + "ab".repeat(32)])}::jsonb, 'sent', now())`;
  await db.sql`update app.sweeps set state = 'sending', attempts = 1, transaction_id = ${txId} where id = ${id}`;
  await sweeper({ stuckMs: 600_000 }, { reconcileGraceMs: 300 });
  const r = await waitFor("confirmed", sweepState(id, ["confirmed", "failed"]), 20_000);
  expect(r).toMatchObject({ state: "confirmed", swept_amount: usd(2).toString(), attempts: 1 });
  const txs = await transactions();
  expect(txs.find((t) => t.id === txId)!.state).toBe("dropped");
  expect(txs.find((t) => t.state === "mined")!.nonce).toBe(BigInt(n));
  expect(await chain.balanceOf(s.settlement)).toBe(usd(2));
}, 30_000);
