/** Compiles and deploys the test-only tokens of testing/TestTokens.sol. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseAbi, type Abi, type Address, type Hex } from "viem";
import { solcCompile } from "../shared/contracts/compile.ts";
import type { TestChain } from "./chain.ts";

/** USDT-style (transfer returns nothing), freely mintable, freezable. */
export const quirkyTokenAbi = parseAbi([
  "function balanceOf(address) view returns (uint256)",
  "function mint(address to, uint256 amount)",
  "function setFrozen(bool frozen)",
  "function transfer(address to, uint256 amount)",
  "event Transfer(address indexed from, address indexed to, uint256 value)",
]);

/** Its transfer() tries to re-enter DepositFactory.sweep and records whether that worked. */
export const hostileTokenAbi = parseAbi([
  "constructor(address factory)",
  "function balanceOf(address) view returns (uint256)",
  "function mint(address to, uint256 amount)",
  "function reentered() view returns (bool)",
]);

let compiled: Record<string, Hex> | undefined;

function bytecodeOf(name: "QuirkyToken" | "HostileToken"): Hex {
  if (!compiled) {
    const source = readFileSync(join(import.meta.dir, "TestTokens.sol"), "utf8");
    const out = solcCompile({ "TestTokens.sol": source }).contracts["TestTokens.sol"] ?? {};
    compiled = Object.fromEntries(Object.entries(out).map(([n, c]) => [n, `0x${c.evm.bytecode.object}` as Hex]));
  }
  const code = compiled[name];
  if (!code) throw new Error(`${name} did not compile`);
  return code;
}

async function deploy(chain: TestChain, abi: Abi, bytecode: Hex, args: readonly unknown[] = []): Promise<Address> {
  const receipt = await chain.receipt(await chain.walletClient.deployContract({ abi, bytecode, args }));
  if (!receipt.contractAddress) throw new Error("test token not deployed");
  return receipt.contractAddress;
}

export const deployQuirkyToken = (chain: TestChain) => deploy(chain, quirkyTokenAbi, bytecodeOf("QuirkyToken"));
export const deployHostileToken = (chain: TestChain) =>
  deploy(chain, hostileTokenAbi, bytecodeOf("HostileToken"), [chain.factory]);
