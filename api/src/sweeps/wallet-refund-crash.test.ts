/**
 * A refund paid by the merchant's wallet's authorization (send-wallet-refunds.ts), through the
 * sweeper on a real anvil and Postgres, across a crash: a sweeper killed between recording the
 * relayer transaction and broadcasting it leaves the next one to broadcast the very same bytes —
 * the payer is credited once, from the settlement address, and the relayer's nonce moves once.
 * The rows are set up as the dashboard leaves them (refunds/store.ts createRefund, then the
 * wallet's authorization stored by refunds/wallet-store.ts after its checks).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { erc20Abi, parseAbi, parseEventLogs, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { NetworkConfig } from "../../../shared/chains/config.ts";
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from "../../../shared/contracts/eip3009.ts";
import { startTestChain, type TestChain } from "../../../testing/chain.ts";
import { createTestDatabase } from "../../../testing/database.ts";
import { eventually } from "../../../testing/eventually.ts";
import type { SweepSettings } from "../config.ts";
import { connect, type Database } from "../db/client.ts";
import { migrate } from "../db/migrate.ts";
import { createRefund } from "../refunds/store.ts";
import { recordWalletAuthorization, walletRefundOf } from "../refunds/wallet-store.ts";
import { DEV_RELAYER_ADDRESS, DEV_RELAYER_PRIVATE_KEY } from "../credentials/relayer.ts";
import { startSweeper, type Sweeper } from "./sweeper.ts";

let chain: TestChain;
let network: NetworkConfig;
let db: Database;
let drop: () => Promise<void>;
const merchantId = `acct_${Math.random().toString(36).slice(2, 12)}`;
const settlement = privateKeyToAccount(generatePrivateKey());
const SETTINGS: SweepSettings = { batchSize: 50, maxAttempts: 5, stuckMs: 60_000, pollMs: 50, retryBaseMs: 100, maxTxPerMinute: 600, maxTxPerHour: 10_000, maxTxPerSession: 8 };

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
  const tdb = await createTestDatabase("walletrefunds");
  drop = tdb.drop;
  db = connect(tdb.url, { max: 8 });
  await migrate(db.sql);
  await db.sql`insert into app.merchants (id, name, sandbox_public_id, live_public_id)
               values (${merchantId}, 'Wallet refund test', ${`mch_test_${merchantId}`}, ${`mch_live_${merchantId}`})`;
}, 30_000);
afterAll(async () => {
  await db?.close();
  await drop?.();
  await chain?.stop();
});

const balance = (holder: Address) => chain.publicClient.readContract({ address: chain.token, abi: erc20Abi, functionName: "balanceOf", args: [holder] });
const relayerNonce = () => chain.publicClient.getTransactionCount({ address: DEV_RELAYER_ADDRESS });

test("killed between recording and broadcasting: the next sweeper sends the same transaction; the payer is credited once, from the settlement address", async () => {
  const payer = privateKeyToAccount(generatePrivateKey()).address;
  await chain.mint(settlement.address, 5_000_000n); // the payment, at the settlement address
  const sessionId = `ps_${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`.slice(0, 27);
  await db.sql.begin(async (tx) => {
    await tx`
      insert into app.payment_sessions (id, merchant_id, environment, status, status_reason, amount_minor, currency, expires_at, token_hash, token_expires_at)
      values (${sessionId}, ${merchantId}, 'sandbox', 'SUCCEEDED', 'paid', 500, 'USD', now() + interval '1 hour', ${`hash_${sessionId}`}, now() + interval '2 hours')`;
    await tx`
      insert into app.session_deposits (session_id, chain_id, address, settlement_address, token_address, decimals, required_base_units, confirmations)
      values (${sessionId}, 31337, ${privateKeyToAccount(generatePrivateKey()).address.toLowerCase()}, ${settlement.address.toLowerCase()}, ${chain.token.toLowerCase()}, 6, 5000000, 1)`;
    await tx`
      insert into app.session_funds (session_id, chain_id, direction, tx_hash, log_index, amount, block_timestamp)
      values (${sessionId}, 31337, 'in', ${`0x${sessionId.slice(3).padStart(64, "0")}`}, 0, 5000000, now())`;
  });
  const scope = { merchantId, environment: "sandbox" as const };
  const created = await db.sql.begin((tx) =>
    createRefund(tx, scope, { sessionId, ask: { amountMinor: 200n }, reason: "requested_by_customer", metadata: {}, maxPerRefundMinor: 1_000_000n, indexerPresent: false }),
  );
  // The payer's address, as the index gives it; then the merchant's choice of its wallet.
  await db.sql`update app.refunds set parts = ${JSON.stringify(created.parts.map((p) => ({ ...p, destination: payer.toLowerCase() })))}::jsonb,
                 funding = 'merchant_wallet', waiting_reason = 'awaiting_wallet' where id = ${created.id}`;

  const w = await walletRefundOf(db.sql, scope, created.id, [network]);
  const now = BigInt((await chain.publicClient.getBlock()).timestamp);
  const message = { from: settlement.address, to: payer, value: 2_000_000n, validAfter: 0n, validBefore: now + 600n, nonce: `0x${"5a".repeat(32)}` as Hex };
  const signature = await settlement.signTypedData({ domain: w.domain!, types: TRANSFER_WITH_AUTHORIZATION_TYPES, primaryType: "TransferWithAuthorization", message });

  // A sweeper that dies right after recording, before broadcasting.
  let crashed!: () => void;
  const crashedAt = new Promise<void>((r) => (crashed = r));
  const opts = { sql: db.sql, networks: [network], relayerKeys: { 31337: DEV_RELAYER_PRIVATE_KEY }, settings: SETTINGS, refunds: { maxPerDayMinor: 1_000_000n, maxPerRefundMinor: 1_000_000n }, log: () => {} };
  const before = await relayerNonce();
  const a: Sweeper = await startSweeper({
    ...opts,
    hooks: {
      beforeBroadcast: () => {
        void a.stop();
        crashed();
        throw new Error("killed");
      },
    },
  });
  await recordWalletAuthorization(db.sql, w, { ...message, signature });
  await crashedAt;
  await a.stop();
  const [left, ...none] = await db.sql`select id, state, tx_hash, tx_hashes from app.sweep_transactions where kind = 'refund'`;
  expect(none).toHaveLength(0);
  expect(left!.state).toBe("signed");
  expect((await db.sql`select state from app.refunds where id = ${created.id}`)[0]!.state).toBe("SENT");
  expect(await relayerNonce()).toBe(before);
  expect(await balance(payer)).toBe(0n);

  const b = await startSweeper(opts);
  try {
    await eventually(async () => ((await db.sql`select state from app.refunds where id = ${created.id}`)[0]!.state === "SUCCEEDED" ? true : undefined), "the refund to succeed", 20_000);
  } finally {
    await b.stop();
  }
  const [t, ...more] = await db.sql`select tx_hash, tx_hashes from app.sweep_transactions where kind = 'refund'`;
  expect(more).toHaveLength(0);
  expect(t!.tx_hashes).toEqual([left!.tx_hash]); // the very same bytes
  const receipt = await chain.publicClient.getTransactionReceipt({ hash: t!.tx_hash as Hex });
  const credits = parseEventLogs({ abi: erc20Abi, eventName: "Transfer", logs: receipt.logs }).map((l) => [l.args.from, l.args.to, l.args.value]);
  expect(credits).toEqual([[settlement.address, payer, 2_000_000n]]);
  expect(await balance(payer)).toBe(2_000_000n);
  expect(await balance(settlement.address)).toBe(3_000_000n);
  expect(await relayerNonce()).toBe(before + 1);
  const used = await chain.publicClient.readContract({
    address: chain.token,
    abi: parseAbi(["function authorizationState(address, bytes32) view returns (bool)"]),
    functionName: "authorizationState",
    args: [settlement.address, message.nonce],
  });
  expect(used).toBe(true);
  expect((await db.sql`select type from app.refund_events where refund_id = ${created.id} order by sequence`).map((e) => e.type)).toEqual(["refund.created", "refund.sent", "refund.succeeded"]);
}, 60_000);
