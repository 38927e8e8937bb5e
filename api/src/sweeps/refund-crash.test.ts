/**
 * Refunds through the sweeper on a real anvil and a real Postgres, across crashes: a sweeper
 * killed between recording a refund's transaction and broadcasting it, or between broadcasting it
 * and its receipt, leaves the next one to finish the very same transaction — the payer is credited
 * once and the relayer's nonce moves once. And a vault that runs dry mid-batch sends what it
 * covers; the rest waits and goes once the vault is refilled. Rows are set up as the API leaves
 * them (a session's ledger, a refund created by refunds/store.ts) with the refund's destination
 * filled in, as the payer's own address would be.
 */
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from "bun:test";
import { createWalletClient, erc20Abi, http, parseEventLogs, type Address, type Hex } from "viem";
import { foundry } from "viem/chains";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { NetworkConfig } from "../../../shared/chains/config.ts";
import { ensureRefundVaultsDeployed, refundVaultAddress, refundVaultSalt } from "../../../shared/contracts/refund-vaults.ts";
import { startTestChain, type TestChain } from "../../../testing/chain.ts";
import { createTestDatabase } from "../../../testing/database.ts";
import { eventually } from "../../../testing/eventually.ts";
import type { SweepSettings } from "../config.ts";
import { connect, type Database } from "../db/client.ts";
import { migrate } from "../db/migrate.ts";
import { createRefund } from "../refunds/store.ts";
import { DEV_RELAYER_ADDRESS, DEV_RELAYER_PRIVATE_KEY } from "../credentials/relayer.ts";
import { startSweeper, type Sweeper, type SweeperOptions } from "./sweeper.ts";

let chain: TestChain;
let network: NetworkConfig;
let vaults: Address;
let db: Database;
let drop: () => Promise<void>;
let merchantId: string;
const running: Sweeper[] = [];

const SETTINGS: SweepSettings = { batchSize: 50, maxAttempts: 5, stuckMs: 60_000, pollMs: 50, retryBaseMs: 100, maxTxPerMinute: 600, maxTxPerHour: 10_000, maxTxPerSession: 8 };

beforeAll(async () => {
  chain = await startTestChain();
  vaults = (await ensureRefundVaultsDeployed({ publicClient: chain.publicClient, walletClient: chain.walletClient }, DEV_RELAYER_ADDRESS)).address;
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
}, 30_000);
afterAll(async () => {
  await chain?.stop();
});

beforeEach(async () => {
  const tdb = await createTestDatabase("refunds");
  drop = tdb.drop;
  db = connect(tdb.url, { max: 8 });
  await migrate(db.sql);
  merchantId = `acct_${Math.random().toString(36).slice(2, 12)}`;
  await db.sql`insert into app.merchants (id, name, sandbox_public_id, live_public_id)
               values (${merchantId}, 'Refund test', ${`mch_test_${merchantId}`}, ${`mch_live_${merchantId}`})`;
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
  await rpc("evm_setAutomine", [true]);
  await db.close();
  await drop();
});

async function rpc(method: string, params: unknown[] = []): Promise<unknown> {
  const res = await fetch(chain.anvil.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
  return ((await res.json()) as { result: unknown }).result;
}

async function sweeper(extra: Partial<SweeperOptions> = {}): Promise<Sweeper> {
  const s = await startSweeper({
    sql: db.sql,
    networks: [network],
    relayerKeys: { 31337: DEV_RELAYER_PRIVATE_KEY },
    settings: SETTINGS,
    refunds: { maxPerDayMinor: 1_000_000n, maxPerRefundMinor: 1_000_000n },
    log: () => {},
    ...extra,
  });
  running.push(s);
  return s;
}

const fresh = (): Address => privateKeyToAccount(generatePrivateKey()).address;
const relayerNonce = () => chain.publicClient.getTransactionCount({ address: DEV_RELAYER_ADDRESS });
const vault = () => refundVaultAddress(vaults, refundVaultSalt(merchantId, "sandbox"));
const balance = (holder: Address) => chain.publicClient.readContract({ address: chain.token, abi: erc20Abi, functionName: "balanceOf", args: [holder] });

/** A session that received `units` of TestUSD, refunded by `refundUnits` to `payer`. Returns the refund's id. */
async function refunded(units: bigint, refundUnits: bigint, payer: Address): Promise<string> {
  const id = `ps_${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`.slice(0, 27);
  await db.sql.begin(async (tx) => {
    await tx`
      insert into app.payment_sessions (id, merchant_id, environment, status, status_reason, amount_minor, currency, expires_at, token_hash, token_expires_at)
      values (${id}, ${merchantId}, 'sandbox', 'SUCCEEDED', 'paid', ${String(units / 10_000n)}::bigint, 'USD', now() + interval '1 hour', ${`hash_${id}`}, now() + interval '2 hours')`;
    await tx`
      insert into app.session_deposits (session_id, chain_id, address, settlement_address, token_address, decimals, required_base_units, confirmations)
      values (${id}, 31337, ${fresh().toLowerCase()}, ${fresh().toLowerCase()}, ${chain.token.toLowerCase()}, 6, ${units.toString()}::numeric, 1)`;
    await tx`
      insert into app.session_funds (session_id, chain_id, direction, tx_hash, log_index, amount, block_timestamp)
      values (${id}, 31337, 'in', ${`0x${id.slice(3).padStart(64, "0")}`}, 0, ${units.toString()}::numeric, now())`;
  });
  const r = await db.sql.begin((tx) =>
    createRefund(tx, { merchantId, environment: "sandbox" }, { sessionId: id, ask: { amountMinor: refundUnits / 10_000n }, reason: "requested_by_customer", metadata: {}, maxPerRefundMinor: 1_000_000n, indexerPresent: false }),
  );
  // The payer's own address, as the index (or a refund link) gives it.
  const parts = r.parts.map((p) => ({ ...p, destination: payer.toLowerCase() }));
  await db.sql`update app.refunds set parts = ${JSON.stringify(parts)}::jsonb, waiting_reason = null where id = ${r.id}`;
  return r.id;
}

const refundRow = async (id: string) => (await db.sql`select state, waiting_reason, transaction_id from app.refunds where id = ${id}`)[0]!;
/** The refund's webhook events, in its session's order, with their numbers: each state change written once, in its own commit. */
const eventsOf = async (id: string) => (await db.sql`select type, sequence from app.refund_events where refund_id = ${id} order by sequence`).map((e) => `${e.type}@${e.sequence}`);
const transactions = () => db.sql`select id, state, tx_hash, tx_hashes, nonce::text as nonce from app.sweep_transactions where kind = 'refund' order by nonce`;
const until = (id: string, state: string) => eventually(async () => ((await refundRow(id)).state === state ? refundRow(id) : undefined), `refund ${id} ${state}`, 20_000);

/** The payer's credits in the refund's receipt. */
async function creditsTo(payer: Address, hash: Hex) {
  const receipt = await chain.publicClient.getTransactionReceipt({ hash });
  return parseEventLogs({ abi: erc20Abi, eventName: "Transfer", logs: receipt.logs }).filter((l) => l.args.to === payer).map((l) => l.args.value);
}

test("killed between recording and broadcasting: the next sweeper broadcasts the very same transaction; the payer is credited once", async () => {
  const payer = fresh();
  await chain.mint(vault(), 10_000_000n);
  const id = await refunded(5_000_000n, 2_000_000n, payer);
  const before = await relayerNonce();
  let crashed!: () => void;
  const crashedAt = new Promise<void>((r) => (crashed = r));
  const a: Sweeper = await sweeper({
    hooks: {
      beforeBroadcast: () => {
        void a.stop(); // the process dies here
        crashed();
        throw new Error("killed");
      },
    },
  });
  await crashedAt;
  await a.stop();
  const [left] = await transactions();
  expect(left!.state).toBe("signed");
  expect((await refundRow(id)).state).toBe("SENT"); // recorded: it can no longer be canceled, nor sent anew
  expect(await eventsOf(id)).toEqual(["refund.created@2", "refund.sent@3"]); // committed with the binding, before any broadcast
  expect(await chain.publicClient.getTransaction({ hash: left!.tx_hash as Hex }).catch(() => null)).toBeNull();
  expect(await relayerNonce()).toBe(before);

  await sweeper();
  await until(id, "SUCCEEDED");
  expect(await eventsOf(id)).toEqual(["refund.created@2", "refund.sent@3", "refund.succeeded@4"]); // the rebroadcast adds none
  const [t, ...more] = await transactions();
  expect(more).toHaveLength(0);
  expect(t!.tx_hashes).toEqual([left!.tx_hash]);
  expect(await creditsTo(payer, t!.tx_hash as Hex)).toEqual([2_000_000n]);
  expect(await balance(payer)).toBe(2_000_000n);
  expect(await relayerNonce()).toBe(before + 1);
}, 40_000);

test("killed between broadcasting and the receipt: the next sweeper finds the receipt and records it, nothing sent again", async () => {
  const payer = fresh();
  await chain.mint(vault(), 10_000_000n);
  const id = await refunded(5_000_000n, 3_000_000n, payer);
  const before = await relayerNonce();
  await rpc("evm_setAutomine", [false]);
  const a = await sweeper();
  await eventually(async () => ((await transactions())[0]?.state === "sent" ? true : undefined), "the refund broadcast", 20_000);
  await a.stop();
  await rpc("evm_mine");
  await rpc("evm_setAutomine", [true]);
  await sweeper();
  await until(id, "SUCCEEDED");
  expect(await eventsOf(id)).toEqual(["refund.created@2", "refund.sent@3", "refund.succeeded@4"]);
  const txs = await transactions();
  expect(txs).toHaveLength(1);
  expect((txs[0]!.tx_hashes as string[]).length).toBe(1);
  expect(await balance(payer)).toBe(3_000_000n);
  expect(await relayerNonce()).toBe(before + 1);
}, 40_000);

test("killed before broadcasting, then the nonce taken by another transaction of the relayer: the refund goes out again under a new nonce, once", async () => {
  const payer = fresh();
  await chain.mint(vault(), 10_000_000n);
  const id = await refunded(5_000_000n, 1_000_000n, payer);
  let crashed!: () => void;
  const crashedAt = new Promise<void>((r) => (crashed = r));
  const a: Sweeper = await sweeper({
    hooks: {
      beforeBroadcast: () => {
        void a.stop();
        crashed();
        throw new Error("killed");
      },
    },
  });
  await crashedAt;
  await a.stop();
  const [left] = await transactions();
  // Someone with the relayer's key spends that nonce on something else.
  const relayer = createWalletClient({ account: privateKeyToAccount(DEV_RELAYER_PRIVATE_KEY), chain: foundry, transport: http(chain.anvil.rpcUrl) });
  await chain.publicClient.waitForTransactionReceipt({ hash: await relayer.sendTransaction({ to: fresh(), value: 1n, nonce: Number(left!.nonce) }) });
  await sweeper();
  await until(id, "SUCCEEDED");
  // Sent twice (the first nonce went to another transaction): a refund.sent for each sending, one refund.succeeded.
  expect(await eventsOf(id)).toEqual(["refund.created@2", "refund.sent@3", "refund.sent@4", "refund.succeeded@5"]);
  const txs = await transactions();
  expect(txs.map((t) => t.state)).toEqual(["failed", "mined"]);
  expect(BigInt(txs[1]!.nonce as string)).toBe(BigInt(left!.nonce as string) + 1n);
  expect(await balance(payer)).toBe(1_000_000n);
}, 40_000);

test("the vault runs dry mid-batch: what it covers goes, the rest waits (insufficient_refund_balance) and goes once refilled", async () => {
  const [p1, p2] = [fresh(), fresh()];
  await chain.mint(vault(), 4_000_000n);
  const r1 = await refunded(5_000_000n, 3_000_000n, p1);
  const r2 = await refunded(5_000_000n, 3_000_000n, p2);
  await sweeper();
  await until(r1, "SUCCEEDED");
  const waiting = await eventually(async () => {
    const r = await refundRow(r2);
    return r.waiting_reason === "insufficient_refund_balance" ? r : undefined;
  }, "the second refund to wait", 20_000);
  expect(waiting.state).toBe("PENDING");
  expect(await balance(vault())).toBe(1_000_000n);
  await chain.mint(vault(), 2_000_000n);
  await until(r2, "SUCCEEDED");
  expect([await balance(p1), await balance(p2), await balance(vault())]).toEqual([3_000_000n, 3_000_000n, 0n]);
  expect(await transactions()).toHaveLength(2);
}, 60_000);
