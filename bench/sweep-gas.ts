/**
 * Gas per swept deposit vs a plain ERC-20 transfer to an existing holder (goals and figures:
 * docs/figures.md, "Sweep gas"; why: docs/decisions.md, "Deposit addresses: an ephemeral sweeper").
 *
 *   bun bench/sweep-gas.ts
 *
 * Starts a fresh anvil, deploys TestUSD + DepositFactory, funds every deposit first, and prints
 * one JSON object. All figures are receipt `gasUsed` (after refunds) from the same run:
 *  - plainTransferGas: holder A (keeps a balance) → holder B (already holds TestUSD);
 *  - singleSweepGas: one deposit swept alone (`sweep`), settlement already holding TestUSD;
 *  - batch20GasPerDeposit: one `sweepBatch` of 20 deposits to that settlement, gasUsed / 20;
 *  - extra.secondPaymentSweepGas: the single deposit paid again and swept again;
 *  - extra.batch20MixedSettlementsGasPerDeposit: 20 deposits to 20 different settlements.
 * Exits non-zero if a sweep did not move exactly the funded amounts to settlement.
 */
import { parseUnits, type Address } from "viem";
import { testUsdAbi } from "../shared/contracts/artifacts.ts";
import { buildSweepCall, predictDepositAddress, sessionSalt, type SweepDeposit } from "../shared/contracts/deploy.ts";
import { ANVIL_ACCOUNTS, startTestChain } from "../testing/chain.ts";

const GOALS = { single: 2.5, batch: 1.8 };
const [, PAYER, HOLDER, SETTLEMENT] = ANVIL_ACCOUNTS;
const usd = (n: string) => parseUnits(n, 6);

const chain = await startTestChain();
try {
  const { token, factory, mint, balanceOf } = chain;
  const gasOf = async (hash: `0x${string}`) => (await chain.receipt(hash)).gasUsed;

  // Plain transfer: both sides hold TestUSD before and after.
  await mint(PAYER, usd("1000"));
  await mint(HOLDER, usd("1"));
  const plainTransferGas = await gasOf(
    await chain.wallet(PAYER).writeContract({ address: token, abi: testUsdAbi, functionName: "transfer", args: [HOLDER, usd("12.34")] }),
  );

  /** Funds each deposit with 12.34 tUSD, sweeps them in one transaction, checks, returns gasUsed. */
  async function sweep(deposits: SweepDeposit[]): Promise<bigint> {
    const addresses = deposits.map((d) => predictDepositAddress({ factory, ...d }));
    for (const a of addresses) await mint(a, usd("12.34"));
    const settlements = [...new Set(deposits.map((d) => d.settlement))];
    const before = await Promise.all(settlements.map((s) => balanceOf(s)));
    const gas = await gasOf(await chain.walletClient.sendTransaction(buildSweepCall({ factory, deposits, tokens: [token] })));
    for (const a of addresses) if ((await balanceOf(a)) !== 0n) throw new Error(`deposit ${a} not emptied`);
    const after = await Promise.all(settlements.map((s) => balanceOf(s)));
    const moved = after.reduce((s, b, i) => s + b - (before[i] ?? 0n), 0n);
    if (moved !== usd("12.34") * BigInt(deposits.length)) throw new Error(`settlements received ${moved}`);
    return gas;
  }

  const settlement = SETTLEMENT;
  await mint(settlement, usd("1")); // an existing holder, like a merchant after its first sweep
  const single = { settlement, sessionSalt: sessionSalt("ps_bench_single") };
  const singleSweepGas = await sweep([single]);
  const secondPaymentSweepGas = await sweep([single]); // same address, paid and swept again
  const batch = Array.from({ length: 20 }, (_, i) => ({ settlement, sessionSalt: sessionSalt(`ps_bench_batch_${i}`) }));
  const batch20GasPerDeposit = (await sweep(batch)) / 20n;

  const mixed: SweepDeposit[] = [];
  for (let i = 0; i < 20; i++) {
    const s = `0x${(0x5e771e00n + BigInt(i)).toString(16).padStart(40, "0")}` as Address;
    await mint(s, usd("1"));
    mixed.push({ settlement: s, sessionSalt: sessionSalt(`ps_bench_mixed_${i}`) });
  }
  const batch20MixedSettlementsGasPerDeposit = (await sweep(mixed)) / 20n;

  const ratio = (g: bigint) => Math.round((Number(g) / Number(plainTransferGas)) * 1000) / 1000;
  const singleRatio = ratio(singleSweepGas);
  const batchRatio = ratio(batch20GasPerDeposit);
  console.log(
    JSON.stringify({
      plainTransferGas: Number(plainTransferGas),
      singleSweepGas: Number(singleSweepGas),
      batch20GasPerDeposit: Number(batch20GasPerDeposit),
      singleRatio,
      batchRatio,
      goals: GOALS,
      pass: { single: singleRatio <= GOALS.single, batch: batchRatio <= GOALS.batch },
      extra: {
        secondPaymentSweepGas: Number(secondPaymentSweepGas),
        batch20MixedSettlementsGasPerDeposit: Number(batch20MixedSettlementsGasPerDeposit),
        batch20MixedSettlementsRatio: ratio(batch20MixedSettlementsGasPerDeposit),
      },
    }),
  );
} finally {
  await chain.stop();
}
