/**
 * Deposit addresses and sweeps on a real anvil: where funds sit, who can move them, and where
 * they can go. Every check is on balances, logs or addresses read back from the chain.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  encodeFunctionData,
  isAddressEqual,
  parseEther,
  parseEventLogs,
  parseUnits,
  zeroAddress,
  zeroHash,
  type Address,
  type Hex,
  type TransactionReceipt,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { depositFactoryAbi, testUsdAbi } from "./artifacts.ts";
import { buildSweepCall, predictDepositAddress, sessionSalt, type SweepDeposit } from "./deploy.ts";
import { ANVIL_ACCOUNTS, startTestChain, type TestChain } from "../../testing/chain.ts";
import { deployHostileToken, deployQuirkyToken, hostileTokenAbi, quirkyTokenAbi } from "../../testing/test-tokens.ts";

const [RELAYER, PAYER, DONOR, , , ATTACKER] = ANVIL_ACCOUNTS;
const usd = (n: string) => parseUnits(n, 6);

let chain: TestChain;
beforeAll(async () => {
  chain = await startTestChain();
}, 30_000);
afterAll(async () => {
  await chain?.stop();
});

/** A brand-new address (balance 0 in everything) to serve as a merchant's settlement. */
const freshAddress = (): Address => privateKeyToAccount(generatePrivateKey()).address;
let counter = 0;
const newSalt = () => sessionSalt(`ps_test_${Date.now()}_${counter++}`);

function deposit(settlement: Address, salt: Hex = newSalt()) {
  return { settlement, sessionSalt: salt, address: predictDepositAddress({ factory: chain.factory, settlement, sessionSalt: salt }) };
}

async function sweepFrom(sender: Address, deposits: SweepDeposit[], tokens: Address[] = [chain.token]) {
  const call = buildSweepCall({ factory: chain.factory, deposits, tokens });
  return chain.receipt(await chain.wallet(sender).sendTransaction(call));
}

function transfersIn(receipt: TransactionReceipt) {
  return parseEventLogs({ abi: testUsdAbi, eventName: "Transfer", logs: receipt.logs });
}

function sweepFailures(receipt: TransactionReceipt) {
  return parseEventLogs({ abi: depositFactoryAbi, eventName: "SweepFailed", logs: receipt.logs });
}

describe("deposit address", () => {
  test("is predicted off-chain, matches the factory, receives a payment, and is where the sweep pays from", async () => {
    const settlement = freshAddress();
    const d = deposit(settlement);
    const onChain = await chain.publicClient.readContract({
      address: chain.factory,
      abi: depositFactoryAbi,
      functionName: "depositAddress",
      args: [settlement, d.sessionSalt],
    });
    expect(onChain).toBe(d.address);
    expect(await chain.publicClient.getCode({ address: d.address })).toBeUndefined();

    // A real payer transfer to the predicted address, before anything exists there.
    await chain.mint(PAYER, usd("100"));
    await chain.receipt(
      await chain.wallet(PAYER).writeContract({ address: chain.token, abi: testUsdAbi, functionName: "transfer", args: [d.address, usd("25")] }),
    );
    expect(await chain.balanceOf(d.address)).toBe(usd("25"));

    // The sweep acts at exactly that address (return value and the Transfer's `from`).
    const { result } = await chain.publicClient.simulateContract({
      account: RELAYER,
      address: chain.factory,
      abi: depositFactoryAbi,
      functionName: "sweep",
      args: [settlement, d.sessionSalt, [chain.token]],
    });
    expect(result).toBe(d.address);
    const receipt = await sweepFrom(RELAYER, [d]);
    const transfers = transfersIn(receipt);
    expect(transfers).toHaveLength(1);
    expect(transfers[0]!.args).toEqual({ from: d.address, to: settlement, value: usd("25") });
    expect(await chain.balanceOf(d.address)).toBe(0n);
    expect(await chain.balanceOf(settlement)).toBe(usd("25"));
    // Nothing stays deployed: the sweeper deleted itself in the same transaction.
    expect(await chain.publicClient.getCode({ address: d.address })).toBeUndefined();
  });
});

describe("who can move funds, and where", () => {
  test("anyone may trigger the sweep, but the funds only go to the bound settlement", async () => {
    const settlement = freshAddress();
    const d = deposit(settlement);
    await chain.mint(d.address, usd("10"));
    const attackerBefore = await chain.balanceOf(ATTACKER);

    // Crafted calls: the attacker's own settlement with the victim's salt, and with other salts.
    const crafted: SweepDeposit[] = [
      { settlement: ATTACKER, sessionSalt: d.sessionSalt },
      { settlement: ATTACKER, sessionSalt: zeroHash },
      { settlement: ATTACKER, sessionSalt: newSalt() },
      { settlement: freshAddress(), sessionSalt: d.sessionSalt },
    ];
    for (const c of crafted) {
      expect(predictDepositAddress({ factory: chain.factory, ...c })).not.toBe(d.address);
      const r = await sweepFrom(ATTACKER, [c]);
      expect(transfersIn(r)).toHaveLength(0);
    }
    expect(await chain.balanceOf(d.address)).toBe(usd("10"));
    expect(await chain.balanceOf(ATTACKER)).toBe(attackerBefore);

    // The attacker sweeping the real deposit only pays gas to deliver it to the merchant.
    const r = await sweepFrom(ATTACKER, [d]);
    expect(transfersIn(r).map((t) => t.args)).toEqual([{ from: d.address, to: settlement, value: usd("10") }]);
    expect(await chain.balanceOf(settlement)).toBe(usd("10"));
    expect(await chain.balanceOf(ATTACKER)).toBe(attackerBefore);
  });

  test("a replayed sweep moves nothing more and sends nothing elsewhere", async () => {
    const settlement = freshAddress();
    const d = deposit(settlement);
    await chain.mint(d.address, usd("4"));
    const call = buildSweepCall({ factory: chain.factory, deposits: [d], tokens: [chain.token] });
    await chain.receipt(await chain.wallet(RELAYER).sendTransaction(call));
    expect(await chain.balanceOf(settlement)).toBe(usd("4"));

    // Same calldata again, from the relayer and from someone else.
    for (const sender of [RELAYER, ATTACKER]) {
      const replay = await chain.receipt(await chain.wallet(sender).sendTransaction(call));
      expect(transfersIn(replay)).toHaveLength(0);
    }
    expect(await chain.balanceOf(settlement)).toBe(usd("4"));
    expect(await chain.balanceOf(d.address)).toBe(0n);
  });

  test("a hostile token cannot start a sweep inside a sweep to change the rest of the batch", async () => {
    const hostile = await deployHostileToken(chain);
    const settlement = freshAddress();
    const first = deposit(settlement);
    const second = deposit(settlement);
    await chain.receipt(
      await chain.walletClient.writeContract({ address: hostile, abi: hostileTokenAbi, functionName: "mint", args: [first.address, 5n] }),
    );
    await chain.mint(first.address, usd("1"));
    await chain.mint(second.address, usd("2"));

    // The hostile transfer runs first, inside the first deposit's sweep, and tries to re-enter.
    const receipt = await sweepFrom(RELAYER, [first, second], [hostile, chain.token]);
    expect(await chain.publicClient.readContract({ address: hostile, abi: hostileTokenAbi, functionName: "reentered" })).toBe(false);
    expect(sweepFailures(receipt)).toHaveLength(0);
    // Had the re-entry emptied the token list, the second deposit's TestUSD would still be there.
    expect(await chain.balanceOf(second.address)).toBe(0n);
    expect(await chain.balanceOf(settlement)).toBe(usd("3"));
    expect(await chain.balanceOf(settlement, hostile)).toBe(5n);
  });

  test("settlement address(0) is refused on-chain", async () => {
    const salt = newSalt();
    await expect(
      chain.publicClient.simulateContract({
        account: RELAYER,
        address: chain.factory,
        abi: depositFactoryAbi,
        functionName: "sweep",
        args: [zeroAddress, salt, [chain.token]],
      }),
    ).rejects.toThrow(/ZeroSettlement/);
  });
});

describe("sweeping", () => {
  test("a batch of 20 pays each deposit to its own settlement", async () => {
    const settlements = [freshAddress(), freshAddress()];
    const deposits = Array.from({ length: 20 }, (_, i) => deposit(settlements[i % 2]!));
    for (const [i, d] of deposits.entries()) await chain.mint(d.address, usd(String(i + 1)));

    const receipt = await sweepFrom(RELAYER, deposits);
    const transfers = transfersIn(receipt).map((t) => t.args);
    expect(transfers).toEqual(deposits.map((d, i) => ({ from: d.address, to: d.settlement, value: usd(String(i + 1)) })));
    for (const d of deposits) expect(await chain.balanceOf(d.address)).toBe(0n);
    // 1+3+…+19 = 100 to the first settlement, 2+4+…+20 = 110 to the second.
    expect(await chain.balanceOf(settlements[0]!)).toBe(usd("100"));
    expect(await chain.balanceOf(settlements[1]!)).toBe(usd("110"));
  }, 30_000);

  test("a second payment to an already swept address is swept again", async () => {
    const settlement = freshAddress();
    const d = deposit(settlement);
    await chain.mint(d.address, usd("5"));
    await sweepFrom(RELAYER, [d]);
    expect(await chain.balanceOf(settlement)).toBe(usd("5"));

    await chain.mint(d.address, usd("7"));
    const again = await sweepFrom(RELAYER, [d]);
    expect(transfersIn(again).map((t) => t.args)).toEqual([{ from: d.address, to: settlement, value: usd("7") }]);
    expect(await chain.balanceOf(d.address)).toBe(0n);
    expect(await chain.balanceOf(settlement)).toBe(usd("12"));
  });

  test("a stray ERC-20 (USDT-style, no return value) and native coin are recovered to settlement", async () => {
    const quirky = await deployQuirkyToken(chain);
    const settlement = freshAddress();
    const d = deposit(settlement);
    await chain.mint(d.address, usd("3"));
    await chain.receipt(
      await chain.walletClient.writeContract({ address: quirky, abi: quirkyTokenAbi, functionName: "mint", args: [d.address, 42n] }),
    );
    await chain.receipt(await chain.wallet(DONOR).sendTransaction({ to: d.address, value: parseEther("1.5") }));
    expect(await chain.publicClient.getBalance({ address: d.address })).toBe(parseEther("1.5"));

    await sweepFrom(RELAYER, [d], [chain.token, quirky]);
    expect(await chain.balanceOf(settlement)).toBe(usd("3"));
    expect(await chain.balanceOf(settlement, quirky)).toBe(42n);
    expect(await chain.balanceOf(d.address, quirky)).toBe(0n);
    expect(await chain.publicClient.getBalance({ address: settlement })).toBe(parseEther("1.5"));
    expect(await chain.publicClient.getBalance({ address: d.address })).toBe(0n);

    // Native coin alone: an empty token list still hands the coin over.
    await chain.receipt(await chain.wallet(DONOR).sendTransaction({ to: d.address, value: parseEther("0.25") }));
    await sweepFrom(ATTACKER, [d], []);
    expect(await chain.publicClient.getBalance({ address: settlement })).toBe(parseEther("1.75"));
    expect(await chain.publicClient.getBalance({ address: d.address })).toBe(0n);
  }, 30_000);

  test("a deposit whose sweep fails is reported and left intact; the rest of the batch goes through", async () => {
    const quirky = await deployQuirkyToken(chain);
    const settlement = freshAddress();
    const stuck = deposit(settlement);
    const fine = deposit(settlement);
    await chain.mint(stuck.address, usd("2"));
    await chain.mint(fine.address, usd("9"));
    await chain.receipt(
      await chain.walletClient.writeContract({ address: quirky, abi: quirkyTokenAbi, functionName: "mint", args: [stuck.address, 5n] }),
    );
    await chain.receipt(
      await chain.walletClient.writeContract({ address: quirky, abi: quirkyTokenAbi, functionName: "setFrozen", args: [true] }),
    );

    const receipt = await sweepFrom(RELAYER, [stuck, fine], [chain.token, quirky]);
    expect(sweepFailures(receipt).map((e) => e.args)).toEqual([{ settlement, salt: stuck.sessionSalt }]);
    expect(await chain.balanceOf(stuck.address)).toBe(usd("2"));
    expect(await chain.balanceOf(stuck.address, quirky)).toBe(5n);
    expect(await chain.balanceOf(fine.address)).toBe(0n);
    expect(await chain.balanceOf(settlement)).toBe(usd("9"));

    // Once the token moves again, the same deposit sweeps normally.
    await chain.receipt(
      await chain.walletClient.writeContract({ address: quirky, abi: quirkyTokenAbi, functionName: "setFrozen", args: [false] }),
    );
    const retry = await sweepFrom(RELAYER, [stuck], [chain.token, quirky]);
    expect(sweepFailures(retry)).toHaveLength(0);
    expect(await chain.balanceOf(settlement)).toBe(usd("11"));
    expect(await chain.balanceOf(settlement, quirky)).toBe(5n);
  }, 30_000);

  test("the same deposit twice in one on-chain batch pays once (the duplicate is reported, not paid twice)", async () => {
    const settlement = freshAddress();
    const d = deposit(settlement);
    await chain.mint(d.address, usd("6"));
    // buildSweepCall refuses duplicates, so encode by hand as a careless or hostile caller would.
    const data = encodeFunctionData({
      abi: depositFactoryAbi,
      functionName: "sweepBatch",
      args: [
        [
          { settlement, salt: d.sessionSalt },
          { settlement, salt: d.sessionSalt },
        ],
        [chain.token],
      ],
    });
    const receipt = await chain.receipt(await chain.wallet(ATTACKER).sendTransaction({ to: chain.factory, data }));
    expect(transfersIn(receipt)).toHaveLength(1);
    expect(sweepFailures(receipt)).toHaveLength(1);
    expect(await chain.balanceOf(settlement)).toBe(usd("6"));
    expect(isAddressEqual(transfersIn(receipt)[0]!.args.from, d.address)).toBe(true);
  });
});
