/**
 * TestUSDT, the sandbox token with USDT's quirks, on a real anvil: no return data from transfer,
 * transferFrom and approve; USDT's approve rule; only the dev faucet mints; the deposit factory
 * sweeps it beside TestUSD; and the Ethereum stand-in carries its code at Tether's address.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { encodeFunctionData, erc20Abi, parseEventLogs, parseUnits, zeroAddress, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { depositFactoryAbi, testUsdAbi, testUsdtAbi } from "./artifacts.ts";
import { DEV_FAUCET_ADDRESS, TEST_USDT_DECIMALS, buildSweepCall, mintTestUsd, predictDepositAddress, predictedTestUsdtAddress, sessionSalt } from "./deploy.ts";
import { ANVIL_ACCOUNTS, clientsFor, startTestChain, type TestChain } from "../../testing/chain.ts";
import { ETHEREUM_USDT, startMainnetStandIn, type EthereumStandIn } from "../../testing/mainnet-standin.ts";

const [RELAYER, PAYER, SPENDER, PAYEE] = ANVIL_ACCOUNTS;
const usd = (n: string) => parseUnits(n, TEST_USDT_DECIMALS);
const freshAddress = (): Address => privateKeyToAccount(generatePrivateKey()).address;

/** The raw answer of an eth_call: "0x" when the function returns nothing. */
function rawCall(rpc: TestChain["publicClient"], from: Address, to: Address, data: Hex): Promise<Hex> {
  return rpc.request({ method: "eth_call", params: [{ from, to, data }, "latest"] });
}

const transferData = (to: Address, value: bigint) => encodeFunctionData({ abi: testUsdtAbi, functionName: "transfer", args: [to, value] });

let chain: TestChain;
beforeAll(async () => {
  chain = await startTestChain();
}, 30_000);
afterAll(async () => {
  await chain?.stop();
});

const allowance = (owner: Address, spender: Address) =>
  chain.publicClient.readContract({ address: chain.usdt, abi: testUsdtAbi, functionName: "allowance", args: [owner, spender] });

describe("TestUSDT", () => {
  test("is tUSDT, 6 decimals, minted by the dev faucet, at its predicted address", async () => {
    expect(chain.usdt).toBe(predictedTestUsdtAddress());
    const read = <F extends "name" | "symbol" | "decimals" | "minter">(functionName: F) =>
      chain.publicClient.readContract({ address: chain.usdt, abi: testUsdtAbi, functionName });
    expect(await read("name")).toBe("Test Tether USD");
    expect(await read("symbol")).toBe("tUSDT");
    expect(await read("decimals")).toBe(6);
    expect(await read("minter")).toBe(DEV_FAUCET_ADDRESS);
    // No EIP-3009: USDT has none.
    const selectors = testUsdtAbi.filter((f) => f.type === "function").map((f) => f.name);
    expect(selectors).not.toContain("transferWithAuthorization");
    expect(selectors).not.toContain("receiveWithAuthorization");
  });

  test("transfer returns no data at all (TestUSD's returns true), and moves the balance", async () => {
    const payee = freshAddress();
    await chain.mint(PAYER, usd("10"), chain.usdt);
    await chain.mint(PAYER, usd("10"));
    expect(await rawCall(chain.publicClient, PAYER, chain.usdt, transferData(payee, usd("3")))).toBe("0x");
    expect(await rawCall(chain.publicClient, PAYER, chain.token, transferData(payee, usd("3")))).toBe(`0x${"0".repeat(63)}1`);
    // A caller that decodes a bool, as viem's erc20Abi does, is refused: it must cope.
    await expect(
      chain.publicClient.simulateContract({ account: PAYER, address: chain.usdt, abi: erc20Abi, functionName: "transfer", args: [payee, usd("3")] }),
    ).rejects.toThrow(/returned no data/);

    const before = await chain.balanceOf(PAYER, chain.usdt);
    const receipt = await chain.receipt(
      await chain.wallet(PAYER).writeContract({ address: chain.usdt, abi: testUsdtAbi, functionName: "transfer", args: [payee, usd("3")] }),
    );
    expect(parseEventLogs({ abi: testUsdtAbi, eventName: "Transfer", logs: receipt.logs }).map((l) => l.args)).toEqual([
      { from: PAYER, to: payee, value: usd("3") },
    ]);
    expect(await chain.balanceOf(payee, chain.usdt)).toBe(usd("3"));
    expect(await chain.balanceOf(PAYER, chain.usdt)).toBe(before - usd("3"));
  });

  test("approve and transferFrom return no data; transferFrom spends the allowance", async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const payee = freshAddress();
    await chain.mint(owner.address, usd("5"), chain.usdt);
    await chain.receipt(await chain.walletClient.sendTransaction({ to: owner.address, value: 10n ** 17n }));
    const ownerWallet = clientsFor(chain.anvil.rpcUrl).walletClient;
    const approve = (value: bigint) => encodeFunctionData({ abi: testUsdtAbi, functionName: "approve", args: [SPENDER, value] });
    expect(await rawCall(chain.publicClient, owner.address, chain.usdt, approve(usd("2")))).toBe("0x");

    const receipt = await chain.receipt(await ownerWallet.sendTransaction({ account: owner, to: chain.usdt, data: approve(usd("2")) }));
    expect(parseEventLogs({ abi: testUsdtAbi, eventName: "Approval", logs: receipt.logs }).map((l) => l.args)).toEqual([
      { owner: owner.address, spender: SPENDER, value: usd("2") },
    ]);
    const pull = encodeFunctionData({ abi: testUsdtAbi, functionName: "transferFrom", args: [owner.address, payee, usd("1.5")] });
    expect(await rawCall(chain.publicClient, SPENDER, chain.usdt, pull)).toBe("0x");
    await chain.receipt(await chain.wallet(SPENDER).sendTransaction({ to: chain.usdt, data: pull }));
    expect(await chain.balanceOf(payee, chain.usdt)).toBe(usd("1.5"));
    expect(await chain.balanceOf(owner.address, chain.usdt)).toBe(usd("3.5"));
    expect(await allowance(owner.address, SPENDER)).toBe(usd("0.5"));
    // Beyond the allowance (0.5 left, 1.5 asked): refused.
    await expect(chain.publicClient.call({ account: SPENDER, to: chain.usdt, data: pull })).rejects.toThrow(/underflow/);
  });

  test("USDT's approve rule: non-zero to another non-zero reverts; through 0 it works", async () => {
    const owner = PAYEE;
    const wallet = chain.wallet(owner);
    const approve = (value: bigint) => wallet.writeContract({ address: chain.usdt, abi: testUsdtAbi, functionName: "approve", args: [SPENDER, value] });
    await chain.receipt(await approve(10n));
    expect(await allowance(owner, SPENDER)).toBe(10n);

    await expect(
      chain.publicClient.simulateContract({ account: owner, address: chain.usdt, abi: testUsdtAbi, functionName: "approve", args: [SPENDER, 5n] }),
    ).rejects.toThrow(/AllowanceNotZero/);
    // Mined as well (gas given, so no estimate refuses it first): reverted, allowance unchanged.
    const hash = await wallet.writeContract({ address: chain.usdt, abi: testUsdtAbi, functionName: "approve", args: [SPENDER, 5n], gas: 100_000n });
    expect((await chain.publicClient.waitForTransactionReceipt({ hash })).status).toBe("reverted");
    expect(await allowance(owner, SPENDER)).toBe(10n);

    await chain.receipt(await approve(0n));
    expect(await allowance(owner, SPENDER)).toBe(0n);
    await chain.receipt(await approve(5n));
    expect(await allowance(owner, SPENDER)).toBe(5n);
  });

  test("only the dev faucet mints; a mint is a Transfer from 0x0", async () => {
    const to = freshAddress();
    const receipt = await mintTestUsd({ publicClient: chain.publicClient, walletClient: chain.walletClient, to, amount: usd("7"), token: chain.usdt });
    expect(parseEventLogs({ abi: testUsdtAbi, eventName: "Transfer", logs: receipt.logs }).map((l) => l.args)).toEqual([
      { from: zeroAddress, to, value: usd("7") },
    ]);
    const supply = await chain.publicClient.readContract({ address: chain.usdt, abi: testUsdtAbi, functionName: "totalSupply" });

    await expect(
      chain.publicClient.simulateContract({ account: RELAYER, address: chain.usdt, abi: testUsdtAbi, functionName: "mint", args: [RELAYER, 1n] }),
    ).rejects.toThrow(/NotMinter/);
    const hash = await chain.walletClient.writeContract({ address: chain.usdt, abi: testUsdtAbi, functionName: "mint", args: [RELAYER, 1n], gas: 100_000n });
    expect((await chain.publicClient.waitForTransactionReceipt({ hash })).status).toBe("reverted");
    expect(await chain.balanceOf(RELAYER, chain.usdt)).toBe(0n);
    expect(await chain.publicClient.readContract({ address: chain.usdt, abi: testUsdtAbi, functionName: "totalSupply" })).toBe(supply);
    expect(await chain.balanceOf(to, chain.usdt)).toBe(usd("7"));
  });

  test("one sweep moves TestUSD and TestUSDT from a deposit to its settlement, exactly, and leaves the deposit empty", async () => {
    const settlement = freshAddress();
    const salt = sessionSalt(`ps_test_usdt_${Date.now()}`);
    const deposit = predictDepositAddress({ factory: chain.factory, settlement, sessionSalt: salt });
    await chain.mint(deposit, usd("12.345678"));
    await chain.mint(deposit, usd("98.765432"), chain.usdt);

    const call = buildSweepCall({ factory: chain.factory, deposits: [{ settlement, sessionSalt: salt }], tokens: [chain.token, chain.usdt] });
    const receipt = await chain.receipt(await chain.walletClient.sendTransaction(call));
    expect(parseEventLogs({ abi: depositFactoryAbi, eventName: "SweepFailed", logs: receipt.logs })).toEqual([]);
    expect(await chain.balanceOf(settlement)).toBe(usd("12.345678"));
    expect(await chain.balanceOf(settlement, chain.usdt)).toBe(usd("98.765432"));
    expect(await chain.balanceOf(deposit)).toBe(0n);
    expect(await chain.balanceOf(deposit, chain.usdt)).toBe(0n);
    expect(await chain.publicClient.getCode({ address: deposit })).toBeUndefined();
    // The sweep's record is each token's own Transfer(deposit → settlement).
    const moved = parseEventLogs({ abi: testUsdAbi, eventName: "Transfer", logs: receipt.logs }).map((l) => ({ token: l.address, ...l.args }));
    expect(moved).toEqual([
      { token: chain.token.toLowerCase() as Address, from: deposit, to: settlement, value: usd("12.345678") },
      { token: chain.usdt.toLowerCase() as Address, from: deposit, to: settlement, value: usd("98.765432") },
    ]);
  });
});

describe("the Ethereum stand-in: TestUSDT's code at Tether's USDT address on chain 1", () => {
  let standIn: EthereumStandIn;
  beforeAll(async () => {
    standIn = await startMainnetStandIn("ethereum");
  }, 30_000);
  afterAll(async () => {
    await standIn?.stop();
  });

  test("the faucet mints there, a plain transfer returns no data and moves the balance", async () => {
    expect(standIn.chainId).toBe(1);
    expect(standIn.usdt).toBe(ETHEREUM_USDT);
    const { publicClient, walletClient } = clientsFor(standIn.rpcUrl, PAYER);
    expect(await publicClient.readContract({ address: standIn.usdt, abi: testUsdtAbi, functionName: "symbol" })).toBe("tUSDT");
    expect(await publicClient.readContract({ address: standIn.usdt, abi: testUsdtAbi, functionName: "minter" })).toBe(DEV_FAUCET_ADDRESS);

    await standIn.mintUsdt(PAYER, usd("4"));
    expect(await standIn.balanceOf(PAYER, standIn.usdt)).toBe(usd("4"));
    expect(await standIn.balanceOf(PAYER)).toBe(0n); // USDC untouched

    const payee = freshAddress();
    expect(await rawCall(publicClient, PAYER, standIn.usdt, transferData(payee, usd("1")))).toBe("0x");
    const hash = await walletClient.writeContract({ chain: null, address: standIn.usdt, abi: testUsdtAbi, functionName: "transfer", args: [payee, usd("1")] });
    expect((await publicClient.waitForTransactionReceipt({ hash })).status).toBe("success");
    expect(await standIn.balanceOf(payee, standIn.usdt)).toBe(usd("1"));
    expect(await standIn.balanceOf(PAYER, standIn.usdt)).toBe(usd("3"));
  });
});
