/** Compiles and deploys testing/QuirkyToken.sol (a USDT-style, freezable token) for tests. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseAbi, type Address, type Hex } from "viem";
import { solcCompile } from "../compile.ts";
import type { TestChain } from "./chain.ts";

export const quirkyTokenAbi = parseAbi([
  "function balanceOf(address) view returns (uint256)",
  "function mint(address to, uint256 amount)",
  "function setFrozen(bool frozen)",
  "function transfer(address to, uint256 amount)",
  "event Transfer(address indexed from, address indexed to, uint256 value)",
]);

let bytecode: Hex | undefined;

export async function deployQuirkyToken(chain: TestChain): Promise<Address> {
  if (!bytecode) {
    const source = readFileSync(join(import.meta.dir, "QuirkyToken.sol"), "utf8");
    const object = solcCompile({ "QuirkyToken.sol": source }).contracts["QuirkyToken.sol"]?.["QuirkyToken"]?.evm.bytecode.object;
    if (!object) throw new Error("QuirkyToken did not compile");
    bytecode = `0x${object}`;
  }
  const receipt = await chain.receipt(await chain.walletClient.deployContract({ abi: quirkyTokenAbi, bytecode }));
  if (!receipt.contractAddress) throw new Error("QuirkyToken not deployed");
  return receipt.contractAddress;
}
