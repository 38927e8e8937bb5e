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
 *    address (no deposit, no sweep), in the very call the relayer plans (planSubmission): alone
 *    (the token's v, r, s form), and per authorization in batches of 5 and 20 through
 *    AuthorizationBatch (shared/contracts/src), which pays a transaction's 21,000 base gas once
 *    for the batch. The goal is judged on the batch of 20.
 * Exits non-zero if a payment did not reach the settlement address exactly.
 */
import { parseUnits, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { testUsdAbi } from "../shared/contracts/artifacts.ts";
import { buildSweepCall, predictDepositAddress, predictedAuthorizationBatchAddress, sessionSalt, type SweepDeposit } from "../shared/contracts/deploy.ts";
import { planSubmission, type RecordedAuthorization } from "../api/src/gasless/submission.ts";
import { authorizationNonce } from "../api/src/gasless/authorization.ts";
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

  // By authorization: payers holding the token and no gas coin sign; the relayer submits them
  // with its own calldata (gasless/submission.ts planSubmission): alone by the token's v, r, s
  // form, or several through AuthorizationBatch (deployed with the factory, as factory:deploy does).
  const chainId = await chain.publicClient.getChainId();
  const [name, version] = await Promise.all([
    chain.publicClient.readContract({ address: token, abi: testUsdAbi, functionName: "name" }),
    chain.publicClient.readContract({ address: token, abi: testUsdAbi, functionName: "version" }),
  ]);
  const validBefore = (await chain.publicClient.getBlock()).timestamp + 3600n;
  let signed = 0;
  async function signedAuthorizations(n: number): Promise<RecordedAuthorization[]> {
    const out: RecordedAuthorization[] = [];
    for (let i = 0; i < n; i++) {
      const payer = privateKeyToAccount(generatePrivateKey());
      await mint(payer.address, usd("100"));
      const sessionId = `ps_bench_authorization_${signed++}`;
      const message = { from: payer.address, to: SETTLEMENT, value: AMOUNT, validAfter: 0n, validBefore, nonce: authorizationNonce(sessionId) };
      const signature = await payer.signTypedData({ domain: { name, version, chainId, verifyingContract: token }, types: TRANSFER_WITH_AUTHORIZATION_TYPES, primaryType: "TransferWithAuthorization", message });
      out.push({ sessionId, tokenAddress: token.toLowerCase(), fromAddress: payer.address.toLowerCase(), toAddress: SETTLEMENT.toLowerCase(), value: AMOUNT.toString(), validAfter: "0", validBefore: validBefore.toString(), nonce: message.nonce, signature });
    }
    return out;
  }
  /** One relayer transaction of `n` authorizations, as the relayer plans it: gas per payment. */
  async function relayerSubmits(n: number): Promise<{ perPayment: number; batched: boolean }> {
    const auths = await signedAuthorizations(n);
    const plan = planSubmission(auths, batchAddress, n)!;
    if (plan.authorizations.length !== n) throw new Error(`planned ${plan.authorizations.length} of ${n}`);
    const before = await balanceOf(SETTLEMENT);
    const gas = await gasOf(await chain.wallet(RELAYER).sendTransaction({ to: plan.call.to, data: plan.call.data }));
    if ((await balanceOf(SETTLEMENT)) - before !== AMOUNT * BigInt(n)) throw new Error(`${n} authorization(s) did not settle exactly`);
    for (const a of auths) if ((await chain.publicClient.getBalance({ address: a.fromAddress as Address })) !== 0n) throw new Error("a payer spent gas coin");
    return { perPayment: Number(gas / BigInt(n)), batched: plan.batched };
  }
  const batchAddress = predictedAuthorizationBatchAddress();
  if (!(await chain.publicClient.getCode({ address: batchAddress }))) throw new Error("AuthorizationBatch is not deployed");
  const alone = await relayerSubmits(1);
  const batch5 = await relayerSubmits(5);
  const batch20 = await relayerSubmits(20);
  if (alone.batched || !batch5.batched || !batch20.batched) throw new Error("the relayer's plan did not batch as expected");

  const ratio = (g: number | bigint) => Math.round((Number(g) / Number(plainTransferGas)) * 1000) / 1000;
  const authorizationRatio = ratio(batch20.perPayment);
  console.log(
    JSON.stringify({
      bench: "payment-gas",
      plainTransferGas: Number(plainTransferGas),
      transferWay: { ...transferWay, ratio: ratio(transferWay.total) },
      authorizationWay: {
        aloneGas: alone.perPayment,
        aloneRatio: ratio(alone.perPayment),
        batch5GasPerAuthorization: batch5.perPayment,
        batch5Ratio: ratio(batch5.perPayment),
        batch20GasPerAuthorization: batch20.perPayment,
        ratio: authorizationRatio,
      },
      goals: GOAL,
      pass: { authorizationRatio: authorizationRatio <= GOAL.authorizationRatio },
    }),
  );
} finally {
  await chain.stop();
}
