import { describe, expect, test } from "bun:test";
import { concat, decodeFunctionData, encodeAbiParameters, getAddress, getContractAddress, keccak256, stringToBytes, zeroAddress, type Address } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { depositFactoryAbi, depositSweeperBytecode } from "./artifacts.ts";
import {
  DEV_FAUCET_ADDRESS,
  DEV_FAUCET_PRIVATE_KEY,
  buildSweepCall,
  encodeSweepBatch,
  predictDepositAddress,
  predictDepositAddressLowercase,
  predictedFactoryAddress,
  sessionSalt,
} from "./addresses.ts";

const A: Address = "0x1111111111111111111111111111111111111111";
const B: Address = "0x2222222222222222222222222222222222222222";
const TOKEN: Address = "0x3333333333333333333333333333333333333333";

describe("pure address helpers", () => {
  test("sessionSalt is keccak256 of the id, stable and distinct per session", () => {
    expect(sessionSalt("ps_abc")).toBe(keccak256(stringToBytes("ps_abc")));
    expect(sessionSalt("ps_abc")).toBe(sessionSalt("ps_abc"));
    expect(sessionSalt("ps_abc")).not.toBe(sessionSalt("ps_abd"));
    expect(() => sessionSalt("")).toThrow();
  });

  test("the deposit address commits to settlement, salt and factory", () => {
    const salt = sessionSalt("ps_1");
    const base = predictDepositAddress({ settlement: A, sessionSalt: salt });
    expect(predictDepositAddress({ factory: predictedFactoryAddress(), settlement: A, sessionSalt: salt })).toBe(base);
    // Case of the settlement does not matter; its value does.
    expect(predictDepositAddress({ settlement: A.toLowerCase() as Address, sessionSalt: salt })).toBe(base);
    expect(predictDepositAddress({ settlement: B, sessionSalt: salt })).not.toBe(base);
    expect(predictDepositAddress({ settlement: A, sessionSalt: sessionSalt("ps_2") })).not.toBe(base);
    expect(predictDepositAddress({ factory: B, settlement: A, sessionSalt: salt })).not.toBe(base);
  });

  test("the lowercase prediction of the creation path is viem's CREATE2 address, lowercased", () => {
    for (const [i, settlement] of ([A, B, "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "0x70997970c51812dc3a010c7d01b50e0d17dc79c8"] as Address[]).entries()) {
      for (const factory of [predictedFactoryAddress(), B]) {
        const salt = sessionSalt(`ps_${i}`);
        const initCode = concat([depositSweeperBytecode, encodeAbiParameters([{ type: "address" }], [getAddress(settlement)])]);
        const viaViem = getContractAddress({ opcode: "CREATE2", from: factory, salt, bytecode: initCode });
        expect(predictDepositAddressLowercase({ factory, settlement, sessionSalt: salt })).toBe(viaViem.toLowerCase());
        expect(predictDepositAddress({ factory, settlement, sessionSalt: salt })).toBe(viaViem);
      }
    }
    expect(() => predictDepositAddressLowercase({ settlement: zeroAddress, sessionSalt: sessionSalt("x") })).toThrow();
    expect(() => predictDepositAddressLowercase({ settlement: A, sessionSalt: "0x1234" })).toThrow();
  });

  test("bad inputs are refused instead of producing an unusable address", () => {
    expect(() => predictDepositAddress({ settlement: zeroAddress, sessionSalt: sessionSalt("x") })).toThrow();
    expect(() => predictDepositAddress({ settlement: "0x1234" as Address, sessionSalt: sessionSalt("x") })).toThrow();
    expect(() => predictDepositAddress({ settlement: A, sessionSalt: "0x1234" })).toThrow();
  });

  test("buildSweepCall: sweep() for one deposit, sweepBatch() for several; duplicates refused", () => {
    const one = buildSweepCall({ deposits: [{ settlement: A, sessionSalt: sessionSalt("s1") }], tokens: [TOKEN] });
    expect(one.to).toBe(predictedFactoryAddress());
    const d1 = decodeFunctionData({ abi: depositFactoryAbi, data: one.data });
    expect(d1.functionName).toBe("sweep");
    expect(d1.args).toEqual([A, sessionSalt("s1"), [TOKEN]]);

    const deposits = [
      { settlement: A, sessionSalt: sessionSalt("s1") },
      { settlement: B, sessionSalt: sessionSalt("s2") },
    ];
    const many = buildSweepCall({ factory: B, deposits, tokens: [] });
    expect(many.to).toBe(B);
    expect(many.data).toBe(encodeSweepBatch({ deposits, tokens: [] }));
    const d2 = decodeFunctionData({ abi: depositFactoryAbi, data: many.data });
    expect(d2.functionName).toBe("sweepBatch");
    expect(d2.args).toEqual([
      [
        { settlement: A, salt: sessionSalt("s1") },
        { settlement: B, salt: sessionSalt("s2") },
      ],
      [],
    ]);

    expect(() => buildSweepCall({ deposits: [], tokens: [TOKEN] })).toThrow();
    expect(() => buildSweepCall({ deposits: [deposits[0]!, deposits[0]!], tokens: [TOKEN] })).toThrow(/twice/);
  });

  test("the documented dev faucet key belongs to the dev faucet address", () => {
    expect(privateKeyToAccount(DEV_FAUCET_PRIVATE_KEY).address).toBe(DEV_FAUCET_ADDRESS);
  });
});
