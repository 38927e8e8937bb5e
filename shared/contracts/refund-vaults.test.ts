/**
 * RefundVaults on a real anvil: a merchant's vault is funded at its address before it exists, the
 * operator pays refunds from it in one batch — in TestUSD (USDC-like) and TestUSDT (USDT-like,
 * whose transfer returns nothing) — and each payer receives exactly its amount (Transfer logs and
 * balances); nobody else can spend it, no vault pays for another, and a batch that cannot be paid
 * whole pays nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { decodeEventLog, erc20Abi, getAddress, parseEventLogs, type Address } from "viem";
import { refundVaultsAbi } from "./artifacts.ts";
import { encodePayBatch, ensureRefundVaultsDeployed, predictedRefundVaultsAddress, refundVaultAddress, refundVaultSalt } from "./refund-vaults.ts";
import { ANVIL_ACCOUNTS, startTestChain, type TestChain } from "../../testing/chain.ts";

const [DEPLOYER, OPERATOR, STRANGER, PAYER_A, PAYER_B] = ANVIL_ACCOUNTS;

describe("RefundVaults", () => {
  let chain: TestChain;
  let vaults: Address;
  const alice = refundVaultSalt("acct_alice", "sandbox");
  const bob = refundVaultSalt("acct_bob", "sandbox");
  beforeAll(async () => {
    chain = await startTestChain();
    const d = await ensureRefundVaultsDeployed({ publicClient: chain.publicClient, walletClient: chain.wallet(DEPLOYER) }, OPERATOR);
    vaults = d.address;
    expect(d.sent).toBe(true);
    expect(await ensureRefundVaultsDeployed({ publicClient: chain.publicClient, walletClient: chain.wallet(DEPLOYER) }, OPERATOR)).toEqual({ address: vaults, sent: false });
  }, 30_000);
  afterAll(async () => {
    await chain?.stop();
  });

  const pay = (from: Address, payments: { vault: `0x${string}`; token: Address; to: Address; amount: bigint }[]) =>
    chain.wallet(from).sendTransaction({ account: from, chain: null, to: vaults, data: encodePayBatch(payments), gas: 1_000_000n });

  test("the addresses are known before anything is deployed, and differ per merchant, environment and operator", () => {
    expect(predictedRefundVaultsAddress(OPERATOR)).toBe(vaults);
    expect(predictedRefundVaultsAddress(STRANGER)).not.toBe(vaults);
    expect(refundVaultSalt("acct_alice", "production")).not.toBe(alice);
    expect(refundVaultAddress(vaults, alice)).not.toBe(refundVaultAddress(vaults, bob));
  });

  test("funded before it exists; the operator's batch pays each payer exactly, in both tokens", async () => {
    const vault = refundVaultAddress(vaults, alice);
    expect(await chain.publicClient.getCode({ address: vault })).toBeUndefined();
    await chain.mint(vault, 10_000_000n);
    await chain.mint(vault, 10_000_000n, chain.usdt);
    const before = await Promise.all([chain.balanceOf(PAYER_A), chain.balanceOf(PAYER_B, chain.usdt)]);
    const receipt = await chain.receipt(
      await pay(OPERATOR, [
        { vault: alice, token: chain.token, to: PAYER_A, amount: 1_250_000n },
        { vault: alice, token: chain.usdt, to: PAYER_B, amount: 3_000_000n },
      ]),
    );
    const transfers = parseEventLogs({ abi: erc20Abi, eventName: "Transfer", logs: receipt.logs }).map((l) => [getAddress(l.address), l.args.from, l.args.to, l.args.value]);
    expect(transfers).toEqual([
      [getAddress(chain.token), vault, PAYER_A, 1_250_000n],
      [getAddress(chain.usdt), vault, PAYER_B, 3_000_000n],
    ]);
    const paid = receipt.logs.filter((l) => l.address.toLowerCase() === vaults.toLowerCase()).map((l) => decodeEventLog({ abi: refundVaultsAbi, data: l.data, topics: l.topics }).args);
    expect(paid).toEqual([
      { vault: alice, token: getAddress(chain.token), to: PAYER_A, amount: 1_250_000n },
      { vault: alice, token: getAddress(chain.usdt), to: PAYER_B, amount: 3_000_000n },
    ]);
    expect([(await chain.balanceOf(PAYER_A)) - before[0]!, (await chain.balanceOf(PAYER_B, chain.usdt)) - before[1]!]).toEqual([1_250_000n, 3_000_000n]);
    expect([await chain.balanceOf(vault), await chain.balanceOf(vault, chain.usdt)]).toEqual([8_750_000n, 7_000_000n]);
    // The vault exists now; paying again needs no deployment.
    expect(await chain.publicClient.getCode({ address: vault })).not.toBeUndefined();
    await chain.receipt(await pay(OPERATOR, [{ vault: alice, token: chain.token, to: PAYER_A, amount: 1n }]));
    expect(await chain.balanceOf(vault)).toBe(8_749_999n);
  });

  test("nobody but the operator can spend a vault, nor call it directly", async () => {
    const vault = refundVaultAddress(vaults, alice);
    const held = await chain.balanceOf(vault);
    const r = await chain.publicClient.waitForTransactionReceipt({ hash: await pay(STRANGER, [{ vault: alice, token: chain.token, to: STRANGER, amount: 1n }]) });
    expect(r.status).toBe("reverted");
    const direct = await chain.publicClient.waitForTransactionReceipt({
      hash: await chain.wallet(STRANGER).writeContract({ account: STRANGER, chain: null, address: vault, abi: [{ type: "function", name: "pay", stateMutability: "nonpayable", inputs: [{ type: "address" }, { type: "address" }, { type: "uint256" }], outputs: [] }], functionName: "pay", args: [chain.token, STRANGER, 1n], gas: 200_000n }),
    });
    expect(direct.status).toBe("reverted");
    expect(await chain.balanceOf(vault)).toBe(held);
  });

  test("a vault pays only from its own balance; a batch that cannot be paid whole pays nothing", async () => {
    const aliceVault = refundVaultAddress(vaults, alice);
    const bobVault = refundVaultAddress(vaults, bob);
    await chain.mint(bobVault, 1_000_000n);
    const before = await Promise.all([chain.balanceOf(aliceVault), chain.balanceOf(bobVault), chain.balanceOf(PAYER_A)]);
    // Bob's vault holds 1.00; a 2.00 refund from it fails even though Alice's vault holds plenty.
    const r = await chain.publicClient.waitForTransactionReceipt({
      hash: await pay(OPERATOR, [
        { vault: alice, token: chain.token, to: PAYER_A, amount: 1_000_000n },
        { vault: bob, token: chain.token, to: PAYER_A, amount: 2_000_000n },
      ]),
    });
    expect(r.status).toBe("reverted");
    expect(await Promise.all([chain.balanceOf(aliceVault), chain.balanceOf(bobVault), chain.balanceOf(PAYER_A)])).toEqual(before);
  });
});
