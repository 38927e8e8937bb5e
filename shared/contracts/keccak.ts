/**
 * keccak-256 and EIP-55 checksums for the session-creation path, where every create computes
 * three: its CREATE2 salt, its deposit address, and that address's checksum in the answer.
 *
 * viem hashes with @noble/hashes (≈ 8 µs for 85 bytes here) and keeps every checksummed
 * address in a process-wide LRU, which a never-repeating deposit address only churns
 * (getAddress ≈ 20 µs each). js-sha3 computes the same function in ≈ 4 µs. Together they
 * were a fifth of the service's CPU per create (bench/api-create.ts, --cpu-prof).
 * keccak.test.ts checks both against viem on random inputs.
 */
import { keccak256 as keccak } from "js-sha3";

/**
 * keccak-256 (Ethereum's hash: the original Keccak padding, not SHA3-256's) of bytes or of a
 * string's UTF-8, as 64 lowercase hex digits without 0x.
 */
export function keccak256Hex(data: Uint8Array | string): string {
  return keccak.hex(data);
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/**
 * EIP-55 form of an address given as 0x and 40 hex digits (any case): a letter is upper case
 * where the matching nibble of keccak-256(lowercase digits as ASCII) is 8 or more.
 */
export function checksumAddress(address: string): `0x${string}` {
  if (!ADDRESS.test(address)) throw new Error(`not an address: ${JSON.stringify(address.slice(0, 50))}`);
  const digits = address.slice(2).toLowerCase();
  const hash = keccak.hex(digits);
  let out = "0x";
  for (let i = 0; i < 40; i++) {
    const c = digits[i]!;
    out += c > "9" && hash.charCodeAt(i) >= 56 /* "8" */ ? c.toUpperCase() : c;
  }
  return out as `0x${string}`;
}
