/**
 * AuthorizationBatch on a real anvil: many payers' EIP-3009 authorizations in one transaction,
 * each moving exactly its amount; one that a stranger submitted first fails alone (its event
 * says which), the others go through.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { decodeEventLog, keccak256, parseSignature, toHex, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { authorizationBatchAbi, authorizationBatchBytecode, testUsdAbi } from "./artifacts.ts";
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from "./eip3009.ts";
import { ANVIL_ACCOUNTS, startTestChain, type TestChain } from "../../testing/chain.ts";

const [RELAYER, , STRANGER, SETTLEMENT] = ANVIL_ACCOUNTS;

describe("AuthorizationBatch", () => {
  let chain: TestChain;
  let batcher: Address;
  beforeAll(async () => {
    chain = await startTestChain();
    batcher = (await chain.receipt(await chain.wallet(RELAYER).deployContract({ abi: authorizationBatchAbi, bytecode: authorizationBatchBytecode }))).contractAddress!;
  }, 30_000);
  afterAll(async () => {
    await chain?.stop();
  });

  async function signed(i: number, value: bigint) {
    const payer = privateKeyToAccount(generatePrivateKey());
    await chain.mint(payer.address, value);
    const validBefore = (await chain.publicClient.getBlock()).timestamp + 600n;
    const message = { from: payer.address, to: SETTLEMENT, value, validAfter: 0n, validBefore, nonce: keccak256(toHex(`authorization-batch.test ${i} ${Date.now()}`)) };
    const domain = { name: "Test USD", version: "2", chainId: await chain.publicClient.getChainId(), verifyingContract: chain.token };
    const sig = parseSignature(await payer.signTypedData({ domain, types: TRANSFER_WITH_AUTHORIZATION_TYPES, primaryType: "TransferWithAuthorization", message }));
    return { ...message, v: Number(sig.v ?? BigInt(sig.yParity + 27)), r: sig.r, s: sig.s };
  }

  test("each authorization moves exactly its amount; one used already by a stranger fails alone and is named", async () => {
    const auths = [];
    for (const [i, v] of [1_000_000n, 2_000_000n, 3_000_000n].entries()) auths.push(await signed(i, v)); // one mint at a time: the faucet's nonces
    // A stranger submits the second one first, straight to the token.
    const b = auths[1]!;
    await chain.receipt(
      await chain.wallet(STRANGER).writeContract({ address: chain.token, abi: testUsdAbi, functionName: "transferWithAuthorization", args: [b.from, b.to, b.value, b.validAfter, b.validBefore, b.nonce, b.v, b.r, b.s] }),
    );
    const before = await chain.balanceOf(SETTLEMENT);
    const receipt = await chain.receipt(await chain.wallet(RELAYER).writeContract({ address: batcher, abi: authorizationBatchAbi, functionName: "submit", args: [chain.token, auths] }));
    expect(receipt.status).toBe("success");
    expect((await chain.balanceOf(SETTLEMENT)) - before).toBe(1_000_000n + 3_000_000n);
    const failed = receipt.logs
      .filter((l) => l.address.toLowerCase() === batcher.toLowerCase())
      .map((l) => decodeEventLog({ abi: authorizationBatchAbi, data: l.data, topics: l.topics }));
    expect(failed).toHaveLength(1);
    expect(failed[0]!.eventName).toBe("AuthorizationFailed");
    expect(failed[0]!.args).toEqual({ from: b.from, nonce: b.nonce });
    for (const a of auths) expect(await chain.balanceOf(a.from)).toBe(0n);
  }, 30_000);
});
