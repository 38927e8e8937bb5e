import { describe, expect, test } from "bun:test";
import { getAddress, keccak256, stringToBytes, toHex } from "viem";
import { checksumAddress, keccak256Hex } from "./keccak.ts";

const random = (n: number) => crypto.getRandomValues(new Uint8Array(n));

describe("keccak-256 and EIP-55, against viem", () => {
  test("the same hash for lengths around the 136-byte rate and for UTF-8 text", () => {
    for (const n of [0, 1, 20, 32, 85, 135, 136, 137, 272, 1000]) {
      for (let i = 0; i < 20; i++) {
        const data = random(n);
        expect(`0x${keccak256Hex(data)}`).toBe(keccak256(data));
      }
    }
    for (const text of ["ps_46XSAWuJsWtRdbmXUqVOrjvT", "", "zahlung-ä€😀"]) {
      expect(`0x${keccak256Hex(text)}`).toBe(keccak256(stringToBytes(text)));
    }
  });

  test("the same checksum for random addresses, from lower, upper or mixed case", () => {
    for (let i = 0; i < 2_000; i++) {
      const lower = toHex(random(20));
      const expected = getAddress(lower);
      expect(checksumAddress(lower)).toBe(expected);
      expect(checksumAddress(`0x${lower.slice(2).toUpperCase()}`)).toBe(expected);
      expect(checksumAddress(expected)).toBe(expected);
    }
    // EIP-55's own examples.
    for (const a of ["0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359", "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB", "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb"]) {
      expect(checksumAddress(a.toLowerCase()) as string).toBe(a);
    }
  });
});
