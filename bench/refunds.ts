/**
 * What a refund costs and how long it takes (docs/refunds.md, "Costs" and "Figures").
 *
 *   bun bench/refunds.ts
 *
 * Prints one JSON object. Two parts:
 *  - gas, on a fresh anvil with TestUSD and RefundVaults (the operator: anvil #0): receipt
 *    `gasUsed` of one plain ERC-20 transfer to an existing holder, of one refund paid alone
 *    (`payBatch` of one item), and of a batch of N refunds, per refund; each as a ratio to the
 *    plain transfer. The vault already paid once (its deployment is `extra.firstRefundGas`), the
 *    payers already hold the token (as the plain transfer's receiver); `extra` has fresh payers.
 *    Goal: a batched refund at most 1.2× one plain transfer (alone ÷ batched is printed too).
 *  - latency, on the real stack (API, runner, sweeper with the service's default poll, Ponder,
 *    anvil mining a block a second as `bun run dev`'s does): refund created (its 201) → SUCCEEDED
 *    as `GET /refunds/{id}` shows it, p50/p95 over sequential refunds. Goals: p50 and p95 ≤ 2 s.
 * Exits non-zero if a refund did not move exactly its amount to its payer.
 */
import { createWalletClient, erc20Abi, getAddress, http, parseEventLogs, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { testUsdAbi } from "../shared/contracts/artifacts.ts";
import { encodePayBatch, ensureRefundVaultsDeployed, refundVaultAddress, refundVaultSalt } from "../shared/contracts/refund-vaults.ts";
import { ANVIL_ACCOUNTS, startTestChain } from "../testing/chain.ts";
import { startLifecycleStack } from "../testing/lifecycle.ts";
import { DEV_RELAYER_ADDRESS } from "../api/src/credentials/relayer.ts";
import { percentile, round } from "./lib.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmbeddedPostgres } from "../api/src/db/embedded.ts";
import { freePort } from "../testing/ports.ts";

const N = 20;
const SAMPLES = 12;
const GOALS = { batchRatio: 1.2, latencyP50Ms: 2000, latencyP95Ms: 2000 };
const [, PAYER, HOLDER] = ANVIL_ACCOUNTS;
const fresh = (): Address => privateKeyToAccount(generatePrivateKey()).address;

async function gas() {
  const chain = await startTestChain();
  try {
    const { token, mint, balanceOf } = chain;
    const gasOf = async (hash: Hex) => (await chain.receipt(hash)).gasUsed;
    await mint(PAYER, 1_000_000_000n);
    await mint(HOLDER, 1_000_000n);
    const plainTransferGas = await gasOf(await chain.wallet(PAYER).writeContract({ address: token, abi: testUsdAbi, functionName: "transfer", args: [HOLDER, 12_340_000n] }));

    const operator = chain.walletClient.account!.address;
    const vaults = (await ensureRefundVaultsDeployed({ publicClient: chain.publicClient, walletClient: chain.walletClient }, operator)).address;
    const salt = refundVaultSalt("acct_bench_refunds", "sandbox");
    const vault = refundVaultAddress(vaults, salt);
    await mint(vault, 10_000_000_000n);

    /** Pays each destination `amount` in one payBatch; checks the receipt's Transfer logs; returns gasUsed. */
    async function pay(to: Address[], amount = 1_230_000n): Promise<bigint> {
      const hash = await chain.walletClient.sendTransaction({ to: vaults, data: encodePayBatch(to.map((t) => ({ vault: salt, token, to: t, amount }))), chain: null, account: chain.walletClient.account! });
      const receipt = await chain.receipt(hash);
      const logs = parseEventLogs({ abi: erc20Abi, eventName: "Transfer", logs: receipt.logs });
      const paid = logs.filter((l) => getAddress(l.address) === getAddress(token) && getAddress(l.args.from) === getAddress(vault) && l.args.value === amount).map((l) => getAddress(l.args.to));
      if (JSON.stringify(paid) !== JSON.stringify(to.map((t) => getAddress(t)))) throw new Error(`refunds of ${hash} did not reach their payers: ${JSON.stringify(paid)}`);
      return receipt.gasUsed;
    }
    const holders = async (n: number) => {
      const out = Array.from({ length: n }, fresh);
      for (const a of out) await mint(a, 1_000_000n);
      return out;
    };

    const firstRefundGas = await pay(await holders(1)); // deploys the vault
    const singleRefundGas = await pay(await holders(1));
    const batchGasPerRefund = (await pay(await holders(N))) / BigInt(N);
    const singleToFreshPayerGas = await pay([fresh()]);
    const batchToFreshPayersGasPerRefund = (await pay(Array.from({ length: N }, fresh))) / BigInt(N);
    if ((await balanceOf(HOLDER)) !== 13_340_000n) throw new Error("plain transfer did not land");

    const ratio = (g: bigint) => round(Number(g) / Number(plainTransferGas), 3);
    return {
      plainTransferGas: Number(plainTransferGas),
      singleRefundGas: Number(singleRefundGas),
      batchSize: N,
      batchGasPerRefund: Number(batchGasPerRefund),
      singleRatio: ratio(singleRefundGas),
      batchRatio: ratio(batchGasPerRefund),
      singleOverBatched: round(Number(singleRefundGas) / Number(batchGasPerRefund), 3),
      extra: {
        firstRefundGas: Number(firstRefundGas),
        singleToFreshPayerGas: Number(singleToFreshPayerGas),
        batchToFreshPayersGasPerRefund: Number(batchToFreshPayersGasPerRefund),
        freshSingleOverBatched: round(Number(singleToFreshPayerGas) / Number(batchToFreshPayersGasPerRefund), 3),
      },
    };
  } finally {
    await chain.stop();
  }
}

async function latency() {
  // The test stack makes its database on a Postgres of the run's own (as testing/preload.ts does for `bun test`).
  const pgDir = mkdtempSync(join(tmpdir(), "paysession-bench-refunds-"));
  const pg = await startEmbeddedPostgres({ dataDir: join(pgDir, "pg"), port: await freePort(), persistent: false });
  process.env.PAYSESSION_TEST_PG_URL = pg.url;
  try {
    return await measure();
  } finally {
    await pg.stop();
    rmSync(pgDir, { recursive: true, force: true });
  }
}

async function measure() {
  // The service's defaults for the sweeper's and the runner's poll (lifecycle.ts shortens them for tests).
  const stack = await startLifecycleStack({ env: { SERVICE_SWEEP_POLL_MS: "1000", SERVICE_RUNNER_POLL_MS: "50" } });
  try {
    const c = stack.chains[0]!;
    await ensureRefundVaultsDeployed({ publicClient: c.publicClient, walletClient: c.walletClient }, DEV_RELAYER_ADDRESS);
    const balances = await stack.svc.call("GET", "/refund-balances", { auth: stack.key });
    await c.mint(getAddress(balances.body.data[0].address), 1_000_000_000n);
    const account = privateKeyToAccount(generatePrivateKey());
    await fetch(c.chain.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "anvil_setBalance", params: [account.address, "0xde0b6b3a7640000"] }) });
    const payer = createWalletClient({ account, transport: http(c.chain.rpcUrl) });
    const sessions: string[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const s = await stack.create("2.00");
      await c.mint(account.address, 2_000_000n);
      const hash = await payer.writeContract({ account, chain: null, address: c.token, abi: erc20Abi, functionName: "transfer", args: [s.networks[0]!.depositAddress as Address, 2_000_000n] });
      await c.publicClient.waitForTransactionReceipt({ hash });
      sessions.push(s.id);
    }
    for (const id of sessions) await stack.waitFor(id, "SUCCEEDED", 60_000);
    const ms: number[] = [];
    for (const id of sessions) {
      const t0 = performance.now();
      const r = await stack.svc.call("POST", `/payment-sessions/${id}/refunds`, { auth: stack.key, body: { amount: "0.50", reason: "requested_by_customer" } });
      if (r.status !== 201) throw new Error(`refund create: ${JSON.stringify(r.body)}`);
      for (;;) {
        const v = await stack.svc.call("GET", `/refunds/${r.body.refundId}`, { auth: stack.key });
        if (v.body.status === "SUCCEEDED") break;
        if (v.body.status === "FAILED" || performance.now() - t0 > 60_000) throw new Error(`refund ${r.body.refundId}: ${JSON.stringify(v.body)}`);
        await Bun.sleep(20);
      }
      ms.push(performance.now() - t0);
    }
    ms.sort((a, b) => a - b);
    return { samples: ms.length, p50Ms: percentile(ms, 50), p95Ms: percentile(ms, 95), maxMs: round(ms[ms.length - 1]!) };
  } finally {
    await stack.close();
  }
}

const g = await gas();
const l = await latency();
console.log(
  JSON.stringify({
    ...g,
    createdToSucceeded: l,
    goals: GOALS,
    pass: { batchRatio: g.batchRatio <= GOALS.batchRatio, latencyP50: l.p50Ms <= GOALS.latencyP50Ms, latencyP95: l.p95Ms <= GOALS.latencyP95Ms },
  }),
);
