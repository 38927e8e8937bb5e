/** Deterministic deployment and the sandbox tokens' faucet, on real anvil nodes. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parseEventLogs, parseUnits, zeroAddress } from "viem";
import { testUsdAbi } from "./artifacts.ts";
import {
  DETERMINISTIC_DEPLOYER,
  DEV_FAUCET_ADDRESS,
  ensureDeployed,
  ensureDeterministicDeployer,
  ensureServiceContractsDeployed,
  mintTestUsd,
  predictedAuthorizationBatchAddress,
  predictedFactoryAddress,
  predictedTestUsdtAddress,
  predictedTokenAddress,
} from "./deploy.ts";
import { startAnvil, type Anvil } from "../../testing/anvil.ts";
import { ANVIL_ACCOUNTS, clientsFor } from "../../testing/chain.ts";

const [RELAYER, OTHER] = ANVIL_ACCOUNTS;

describe("ensureDeployed on a chain with the deterministic deployer (anvil's default)", () => {
  let anvil: Anvil;
  beforeAll(async () => {
    anvil = await startAnvil();
  }, 30_000);
  afterAll(async () => {
    await anvil?.stop();
  });

  test("deploys the four contracts at their predicted addresses, then nothing the second time", async () => {
    const { publicClient, walletClient } = clientsFor(anvil.rpcUrl);
    expect(await publicClient.getCode({ address: predictedTokenAddress() })).toBeUndefined();
    expect(await publicClient.getCode({ address: predictedTestUsdtAddress() })).toBeUndefined();

    const first = await ensureDeployed({ publicClient, walletClient });
    expect(first).toEqual({
      token: predictedTokenAddress(),
      factory: predictedFactoryAddress(),
      batch: predictedAuthorizationBatchAddress(),
      usdt: predictedTestUsdtAddress(),
      deployed: ["token", "factory", "batch", "usdt"],
    });
    expect((await publicClient.getCode({ address: first.token }))?.length).toBeGreaterThan(2);
    expect((await publicClient.getCode({ address: first.factory }))?.length).toBeGreaterThan(2);
    expect((await publicClient.getCode({ address: first.batch }))?.length).toBeGreaterThan(2);
    expect((await publicClient.getCode({ address: first.usdt }))?.length).toBeGreaterThan(2);
    const nonce = await publicClient.getTransactionCount({ address: RELAYER });
    const block = await publicClient.getBlockNumber({ cacheTime: 0 }); // not viem's cached number (4 s): a slow machine read a stale one

    const second = await ensureDeployed({ publicClient, walletClient });
    expect(second).toEqual({ token: first.token, factory: first.factory, batch: first.batch, usdt: first.usdt, deployed: [] });
    expect(await publicClient.getTransactionCount({ address: RELAYER })).toBe(nonce);
    expect(await publicClient.getBlockNumber({ cacheTime: 0 })).toBe(block);
  });

  test("TestUSD: 6 decimals, the dev faucet is its only minter, mints emit Transfer from 0x0", async () => {
    const { publicClient, walletClient } = clientsFor(anvil.rpcUrl);
    const { token } = await ensureDeployed({ publicClient, walletClient });
    const read = <F extends "decimals" | "minter" | "symbol">(functionName: F) =>
      publicClient.readContract({ address: token, abi: testUsdAbi, functionName });
    expect(await read("decimals")).toBe(6);
    expect(await read("minter")).toBe(DEV_FAUCET_ADDRESS);
    expect(await read("symbol")).toBe("tUSD");

    const receipt = await mintTestUsd({ publicClient, walletClient, to: OTHER, amount: parseUnits("12.34", 6) });
    const logs = parseEventLogs({ abi: testUsdAbi, eventName: "Transfer", logs: receipt.logs });
    expect(logs.map((l) => l.args)).toEqual([{ from: zeroAddress, to: OTHER, value: 12_340_000n }]);
    expect(await publicClient.readContract({ address: token, abi: testUsdAbi, functionName: "balanceOf", args: [OTHER] })).toBe(
      12_340_000n,
    );

    // Anyone else is refused, whether through eth_call or a mined transaction.
    await expect(
      publicClient.simulateContract({ account: RELAYER, address: token, abi: testUsdAbi, functionName: "mint", args: [RELAYER, 1n] }),
    ).rejects.toThrow(/NotMinter/);
    const hash = await walletClient.writeContract({
      address: token,
      abi: testUsdAbi,
      functionName: "mint",
      args: [RELAYER, 1_000_000n],
      gas: 200_000n, // skip estimation, which would refuse before sending
    });
    expect((await publicClient.waitForTransactionReceipt({ hash })).status).toBe("reverted");
    await expect(mintTestUsd({ publicClient, walletClient, to: RELAYER, amount: 1n, account: walletClient.account })).rejects.toThrow();
    expect(await publicClient.readContract({ address: token, abi: testUsdAbi, functionName: "balanceOf", args: [RELAYER] })).toBe(0n);
  });
});

describe("a chain without the deterministic deployer", () => {
  let anvil: Anvil;
  beforeAll(async () => {
    anvil = await startAnvil({ args: ["--disable-default-create2-deployer"] });
  }, 30_000);
  afterAll(async () => {
    await anvil?.stop();
  });

  test("ensureDeployed says what is missing; ensureDeterministicDeployer installs it; the addresses are the usual ones", async () => {
    const { publicClient, walletClient } = clientsFor(anvil.rpcUrl);
    expect(await publicClient.getCode({ address: DETERMINISTIC_DEPLOYER })).toBeUndefined();
    await expect(ensureDeployed({ publicClient, walletClient })).rejects.toThrow(/deterministic deployer/);

    expect(await ensureDeterministicDeployer({ publicClient, walletClient })).toBe(true);
    const code = await publicClient.getCode({ address: DETERMINISTIC_DEPLOYER });
    // The well-known runtime code of Arachnid's proxy.
    expect(code).toBe(
      "0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe03601600081602082378035828234f58015156039578182fd5b8082525050506014600cf3",
    );
    expect(await ensureDeterministicDeployer({ publicClient, walletClient })).toBe(false);

    // A production chain takes only the service's contracts; a sandbox chain then adds the tokens.
    const service = await ensureServiceContractsDeployed({ publicClient, walletClient });
    expect(service).toMatchObject({ factory: predictedFactoryAddress(), batch: predictedAuthorizationBatchAddress(), deployed: ["factory", "batch"] });
    expect(service.receipts.map((r) => r.status)).toEqual(["success", "success"]);
    expect(await publicClient.getCode({ address: predictedTokenAddress() })).toBeUndefined();
    expect(await publicClient.getCode({ address: predictedTestUsdtAddress() })).toBeUndefined();
    expect(await ensureServiceContractsDeployed({ publicClient, walletClient })).toEqual({ factory: predictedFactoryAddress(), batch: predictedAuthorizationBatchAddress(), deployed: [], receipts: [] });
    const { token, factory, usdt, deployed } = await ensureDeployed({ publicClient, walletClient });
    expect({ token, factory, usdt, deployed }).toEqual({
      token: predictedTokenAddress(),
      factory: predictedFactoryAddress(),
      usdt: predictedTestUsdtAddress(),
      deployed: ["token", "usdt"],
    });
  });
});

describe("two processes deploying at once", () => {
  let anvil: Anvil;
  beforeAll(async () => {
    anvil = await startAnvil();
  }, 30_000);
  afterAll(async () => {
    await anvil?.stop();
  });

  test("both succeed with the same addresses, and each contract is deployed exactly once", async () => {
    const a = clientsFor(anvil.rpcUrl, RELAYER);
    const b = clientsFor(anvil.rpcUrl, OTHER);
    const [ra, rb] = await Promise.all([ensureDeployed(a), ensureDeployed(b)]);
    expect(ra.token).toBe(predictedTokenAddress());
    expect(rb.token).toBe(ra.token);
    expect(rb.factory).toBe(ra.factory);
    expect(rb.usdt).toBe(ra.usdt);
    expect([...ra.deployed, ...rb.deployed].sort()).toEqual(["batch", "factory", "token", "usdt"]);
    expect((await a.publicClient.getCode({ address: ra.factory }))?.length).toBeGreaterThan(2);
  });
});
