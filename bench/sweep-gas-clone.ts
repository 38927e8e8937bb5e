/**
 * The design NOT chosen, measured the same way as bench/sweep-gas.ts so the choice can be
 * re-checked: one OpenZeppelin clone per deposit address (settlement in immutable args),
 * CREATE2-deployed by its first sweep and called directly afterwards.
 *
 *   bun bench/sweep-gas-clone.ts
 *
 * Prints one JSON object: gas per deposit for the first and a repeated sweep, alone and in a
 * batch of 20, next to the plain ERC-20 transfer of the same run.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseUnits, type Abi, type Address, type Hex } from "viem";
import { testUsdAbi } from "../shared/contracts/artifacts.ts";
import { solcCompile } from "../shared/contracts/compile.ts";
import { sessionSalt } from "../shared/contracts/deploy.ts";
import { ANVIL_ACCOUNTS, startTestChain } from "../testing/chain.ts";

const source = readFileSync(join(import.meta.dir, "contracts", "CloneAlternative.sol"), "utf8");
const compiled = solcCompile({ "CloneAlternative.sol": source }).contracts["CloneAlternative.sol"]?.["CloneFactory"];
if (!compiled) throw new Error("CloneFactory did not compile");
const abi = compiled.abi as Abi;
const bytecode = `0x${compiled.evm.bytecode.object}` as Hex;

const [, PAYER, HOLDER, SETTLEMENT] = ANVIL_ACCOUNTS;
const usd = (n: string) => parseUnits(n, 6);
const ratio = (g: bigint, plain: bigint) => Math.round((Number(g) / Number(plain)) * 1000) / 1000;

const chain = await startTestChain();
try {
  const { publicClient, walletClient, token, mint } = chain;
  const factory = (await chain.receipt(await walletClient.deployContract({ abi, bytecode }))).contractAddress as Address;
  await mint(PAYER, usd("100"));
  await mint(HOLDER, usd("1"));
  await mint(SETTLEMENT, usd("1"));
  const plain = (
    await chain.receipt(
      await chain.wallet(PAYER).writeContract({ address: token, abi: testUsdAbi, functionName: "transfer", args: [HOLDER, usd("12.34")] }),
    )
  ).gasUsed;

  /** Funds each deposit, sweeps them in one transaction, checks settlement, returns gas per deposit. */
  async function sweep(salts: Hex[]): Promise<bigint> {
    for (const salt of salts) {
      const at = (await publicClient.readContract({ address: factory, abi, functionName: "depositAddress", args: [SETTLEMENT, salt] })) as Address;
      await mint(at, usd("12.34"));
    }
    const before = await chain.balanceOf(SETTLEMENT);
    const hash =
      salts.length === 1
        ? await walletClient.writeContract({ address: factory, abi, functionName: "sweep", args: [SETTLEMENT, salts[0], [token]] })
        : await walletClient.writeContract({
            address: factory,
            abi,
            functionName: "sweepBatch",
            args: [salts.map((salt) => ({ settlement: SETTLEMENT, salt })), [token]],
          });
    const gas = (await chain.receipt(hash)).gasUsed;
    if ((await chain.balanceOf(SETTLEMENT)) - before !== usd("12.34") * BigInt(salts.length)) throw new Error("sweep incomplete");
    return gas / BigInt(salts.length);
  }

  const single = [sessionSalt("ps_clone_single")];
  const batch = Array.from({ length: 20 }, (_, i) => sessionSalt(`ps_clone_batch_${i}`));
  const firstSingle = await sweep(single);
  const repeatSingle = await sweep(single);
  const firstBatch = await sweep(batch);
  const repeatBatch = await sweep(batch);
  console.log(
    JSON.stringify({
      design: "clone-per-deposit (not chosen)",
      plainTransferGas: Number(plain),
      firstSweepSingleGas: Number(firstSingle),
      firstSweepBatch20GasPerDeposit: Number(firstBatch),
      repeatSweepSingleGas: Number(repeatSingle),
      repeatSweepBatch20GasPerDeposit: Number(repeatBatch),
      firstSingleRatio: ratio(firstSingle, plain),
      firstBatchRatio: ratio(firstBatch, plain),
    }),
  );
} finally {
  await chain.stop();
}
