/**
 * Gas per payment, all parties together, as a ratio to one plain ERC-20 transfer between two
 * holders (goals and figures: docs/figures.md, "Payment gas"):
 *
 *   bun bench/payment-gas.ts
 *
 * Starts a fresh anvil with TestUSD (EIP-3009, as USDC) and the deposit factory, and prints one
 * JSON object of receipt `gasUsed` (after refunds), all from the same run:
 *  - plainTransferGas: holder → holder (both keep a balance): the unit;
 *  - transferWay: today's way — the payer's transfer into a fresh deposit address, plus that
 *    deposit's share of a sweepBatch of 20 to the merchant's settlement address;
 *  - authorizationWay: the payer's signed transferWithAuthorization straight to the settlement
 *    address, submitted by the relayer (one transaction: no deposit, no sweep) — alone, and per
 *    authorization in a batch of 20 through AuthorizationBatch (shared/contracts/src), which pays
 *    a transaction's 21,000 base gas once for the batch.
 * Exits non-zero if a payment did not reach the settlement address exactly.
 */
import { keccak256, parseSignature, parseUnits, toHex, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { authorizationBatchAbi, authorizationBatchBytecode, testUsdAbi } from "../shared/contracts/artifacts.ts";
import { buildSweepCall, predictDepositAddress, sessionSalt, type SweepDeposit } from "../shared/contracts/deploy.ts";
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from "../shared/contracts/eip3009.ts";
import { ANVIL_ACCOUNTS, startTestChain } from "../testing/chain.ts";

const GOAL = { authorizationRatio: 1.5 };
const [RELAYER, PAYER, HOLDER, SETTLEMENT] = ANVIL_ACCOUNTS;
const usd = (n: string) => parseUnits(n, 6);
const AMOUNT = usd("12.34");

const chain = await startTestChain();
try {
  const { token, factory, mint, balanceOf } = chain;
  const gasOf = async (hash: Hex) => (await chain.receipt(hash)).gasUsed;
  const transfer = (from: Address, to: Address) => chain.wallet(from).writeContract({ address: token, abi: testUsdAbi, functionName: "transfer", args: [to, AMOUNT] });

  // The unit: both sides hold TestUSD before and after. The settlement address is an existing
  // holder too, as a merchant's is after its first payment.
  await mint(PAYER, usd("10000"));
  await mint(HOLDER, usd("1"));
  await mint(SETTLEMENT, usd("1"));
  const plainTransferGas = await gasOf(await transfer(PAYER, HOLDER));

  // Today's way: 20 payers each pay a fresh deposit address, then one batch sweeps the 20.
  const deposits: SweepDeposit[] = Array.from({ length: 20 }, (_, i) => ({ settlement: SETTLEMENT, sessionSalt: sessionSalt(`ps_bench_payment_${i}`) }));
  let payerGas = 0n;
  for (const d of deposits) payerGas += await gasOf(await transfer(PAYER, predictDepositAddress({ factory, ...d })));
  const before = await balanceOf(SETTLEMENT);
  const sweepGas = await gasOf(await chain.walletClient.sendTransaction(buildSweepCall({ factory, deposits, tokens: [token] })));
  if ((await balanceOf(SETTLEMENT)) - before !== AMOUNT * 20n) throw new Error("the sweep did not settle exactly the 20 payments");
  const transferWay = { payerTransferGas: Number(payerGas / 20n), sweepShareGas: Number(sweepGas / 20n), total: Number((payerGas + sweepGas) / 20n) };

  // By authorization: a payer holding the token and no gas coin signs; the relayer submits.
  const payer = privateKeyToAccount(generatePrivateKey());
  await mint(payer.address, usd("100"));
  const chainId = await chain.publicClient.getChainId();
  const [name, version] = await Promise.all([
    chain.publicClient.readContract({ address: token, abi: testUsdAbi, functionName: "name" }),
    chain.publicClient.readContract({ address: token, abi: testUsdAbi, functionName: "version" }),
  ]);
  const validBefore = (await chain.publicClient.getBlock()).timestamp + 3600n;
  const message = { from: payer.address, to: SETTLEMENT, value: AMOUNT, validAfter: 0n, validBefore, nonce: keccak256(toHex("paysession:eip3009:v1:ps_bench_authorization")) };
  const signature = await payer.signTypedData({ domain: { name, version, chainId, verifyingContract: token }, types: TRANSFER_WITH_AUTHORIZATION_TYPES, primaryType: "TransferWithAuthorization", message });
  const settledBefore = await balanceOf(SETTLEMENT);
  const authorizationGas = await gasOf(
    await chain.wallet(RELAYER).writeContract({
      address: token,
      abi: testUsdAbi,
      functionName: "transferWithAuthorization",
      args: [message.from, message.to, message.value, message.validAfter, message.validBefore, message.nonce, signature],
    }),
  );
  if ((await balanceOf(SETTLEMENT)) - settledBefore !== AMOUNT) throw new Error("the authorization did not settle exactly the amount");
  if ((await chain.publicClient.getBalance({ address: payer.address })) !== 0n) throw new Error("the payer spent gas coin");

  // A batch of 20 payers' authorizations in one relayer transaction.
  const deployed = await chain.receipt(await chain.wallet(RELAYER).deployContract({ abi: authorizationBatchAbi, bytecode: authorizationBatchBytecode }));
  const batcher = deployed.contractAddress!;
  const batch = [];
  for (let i = 0; i < 20; i++) {
    const p = privateKeyToAccount(generatePrivateKey());
    await mint(p.address, usd("100"));
    const m = { from: p.address, to: SETTLEMENT, value: AMOUNT, validAfter: 0n, validBefore, nonce: keccak256(toHex(`paysession:eip3009:v1:ps_bench_batch_${i}`)) };
    const sig = parseSignature(await p.signTypedData({ domain: { name, version, chainId, verifyingContract: token }, types: TRANSFER_WITH_AUTHORIZATION_TYPES, primaryType: "TransferWithAuthorization", message: m }));
    batch.push({ ...m, v: Number(sig.v ?? BigInt(sig.yParity + 27)), r: sig.r, s: sig.s });
  }
  const batchBefore = await balanceOf(SETTLEMENT);
  const batchGas = await gasOf(await chain.wallet(RELAYER).writeContract({ address: batcher, abi: authorizationBatchAbi, functionName: "submit", args: [token, batch] }));
  if ((await balanceOf(SETTLEMENT)) - batchBefore !== AMOUNT * 20n) throw new Error("the batch did not settle exactly the 20 payments");

  const ratio = (g: number | bigint) => Math.round((Number(g) / Number(plainTransferGas)) * 1000) / 1000;
  const batchPerAuthorization = batchGas / 20n;
  const authorizationRatio = ratio(batchPerAuthorization);
  console.log(
    JSON.stringify({
      bench: "payment-gas",
      plainTransferGas: Number(plainTransferGas),
      transferWay: { ...transferWay, ratio: ratio(transferWay.total) },
      authorizationWay: {
        aloneGas: Number(authorizationGas),
        aloneRatio: ratio(authorizationGas),
        batch20GasPerAuthorization: Number(batchPerAuthorization),
        ratio: authorizationRatio,
      },
      goals: GOAL,
      pass: { authorizationRatio: authorizationRatio <= GOAL.authorizationRatio },
    }),
  );
} finally {
  await chain.stop();
}
