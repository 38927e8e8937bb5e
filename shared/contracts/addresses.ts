/**
 * Pure address math and calldata for the Paysession contracts — no RPC, no I/O.
 * (deploy.ts re-exports all of this next to the functions that talk to a chain.)
 */
import {
  concat,
  encodeAbiParameters,
  encodeFunctionData,
  getAddress,
  getContractAddress,
  hexToBytes,
  isAddress,
  isHex,
  keccak256,
  zeroAddress,
  zeroHash,
  type Address,
  type Hex,
} from "viem";
import { authorizationBatchBytecode, depositFactoryAbi, depositFactoryBytecode, depositSweeperBytecode, testUsdBytecode, testUsdtBytecode } from "./artifacts.ts";
import { keccak256Hex } from "./keccak.ts";

/** Arachnid's deterministic deployment proxy: same address on every chain (anvil ships it). */
export const DETERMINISTIC_DEPLOYER: Address = "0x4e59b44847b379578588920cA78FbF26c0B4956C";

/** Salt handed to the deterministic deployer for every contract. */
export const DEPLOY_SALT: Hex = zeroHash;

/**
 * The sandbox faucet, TestUSD's only minter: account #9 of the public test mnemonic
 * "test test test test test test test test test test test junk" (funded by anvil by default).
 * Its key is public on purpose — TestUSD is worthless and must be mintable by every self-hosted
 * sandbox; the address is fixed so the token lands at the same address on every chain.
 */
export const DEV_FAUCET_ADDRESS: Address = "0xa0Ee7A142d267C1f36714E4a8F75612F20a79720";
export const DEV_FAUCET_PRIVATE_KEY: Hex = "0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6";

export const TEST_USD_DECIMALS = 6;
export const TEST_USDT_DECIMALS = 6;

/** TestUSD init code: creation bytecode ++ abi.encode(DEV_FAUCET_ADDRESS). */
export function testUsdInitCode(): Hex {
  return concat([testUsdBytecode, encodeAbiParameters([{ type: "address" }], [DEV_FAUCET_ADDRESS])]);
}

/** TestUSDT (the sandbox's USDT-like token) init code: creation bytecode ++ abi.encode(DEV_FAUCET_ADDRESS). */
export function testUsdtInitCode(): Hex {
  return concat([testUsdtBytecode, encodeAbiParameters([{ type: "address" }], [DEV_FAUCET_ADDRESS])]);
}

/** DepositFactory init code (no constructor arguments). */
export function depositFactoryInitCode(): Hex {
  return depositFactoryBytecode;
}

function viaDeterministicDeployer(initCode: Hex): Address {
  return getContractAddress({ opcode: "CREATE2", from: DETERMINISTIC_DEPLOYER, salt: DEPLOY_SALT, bytecode: initCode });
}

export function predictedTokenAddress(): Address {
  return viaDeterministicDeployer(testUsdInitCode());
}

/** Where TestUSDT sits on every chain it is deployed to (sandbox chains only). */
export function predictedTestUsdtAddress(): Address {
  return viaDeterministicDeployer(testUsdtInitCode());
}

let factoryAddress: Address | undefined;
export function predictedFactoryAddress(): Address {
  // Fixed by the committed bytecode: computed once (it is on the session-creation path).
  factoryAddress ??= viaDeterministicDeployer(depositFactoryInitCode());
  return factoryAddress;
}

/** AuthorizationBatch init code (no constructor arguments). */
export function authorizationBatchInitCode(): Hex {
  return authorizationBatchBytecode;
}

let batchAddress: Address | undefined;
/** Where AuthorizationBatch sits on every chain (the relayer sends several payers' authorizations through it). */
export function predictedAuthorizationBatchAddress(): Address {
  batchAddress ??= viaDeterministicDeployer(authorizationBatchInitCode());
  return batchAddress;
}

/** The CREATE2 salt of a session: keccak256 of its id's UTF-8 bytes. */
export function sessionSalt(sessionId: string): Hex {
  if (!sessionId) throw new Error("sessionSalt: empty session id");
  return `0x${keccak256Hex(sessionId)}`;
}

function checkSettlement(settlement: Address): Address {
  if (!isAddress(settlement, { strict: false })) throw new Error(`not an address: ${settlement}`);
  if (getAddress(settlement) === zeroAddress) throw new Error("settlement must not be the zero address");
  return getAddress(settlement);
}

function checkSalt(salt: Hex): Hex {
  if (!isHex(salt, { strict: true }) || salt.length !== 66) throw new Error(`session salt must be 32 bytes: ${salt}`);
  return salt;
}

/**
 * The deposit address of a session, before anything is deployed. It is the address at which
 * the factory CREATE2s a DepositSweeper whose constructor argument is `settlement`, so the
 * address commits to the settlement address: another settlement gives another address.
 */
export function predictDepositAddress(args: { factory?: Address; settlement: Address; sessionSalt: Hex }): Address {
  return getAddress(predictDepositAddressLowercase(args));
}

/**
 * The same address in lowercase, as it is stored and indexed. On the session-creation path
 * (bench/api-create.ts): CREATE2 computed on bytes with one keccak (keccak.ts), the checks and the
 * sweeper's init-code hash kept per settlement, and no EIP-55 checksum (each costs a keccak more;
 * about 65 → 20 µs a network here, then 8 → 4 µs for the keccak itself). addresses.test.ts checks it against viem's getContractAddress.
 */
export function predictDepositAddressLowercase(args: { factory?: Address; settlement: Address; sessionSalt: Hex }): string {
  const salt = checkSalt(args.sessionSalt);
  const preimage = new Uint8Array(85);
  preimage[0] = 0xff;
  preimage.set(addressBytes(args.factory ?? predictedFactoryAddress()), 1);
  preimage.set(hexToBytes(salt), 21);
  preimage.set(sweeperInitCodeHash(args.settlement), 53);
  return `0x${keccak256Hex(preimage).slice(24)}`;
}

/** An address's 20 bytes; the factories of the few configured networks are kept. */
const factoryBytes = new Map<string, Uint8Array>();
function addressBytes(address: Address): Uint8Array {
  let bytes = factoryBytes.get(address);
  if (!bytes) {
    if (!isAddress(address, { strict: false })) throw new Error(`not an address: ${address}`);
    bytes = hexToBytes(address);
    if (factoryBytes.size >= 1_000) factoryBytes.clear();
    factoryBytes.set(address, bytes);
  }
  return bytes;
}

/**
 * keccak256 of the sweeper's init code for a settlement address, keyed by the address as given
 * (so the settlement's checks and checksum run once per merchant, not per session); a few
 * merchants' worth is kept.
 */
const initCodeHashes = new Map<string, Uint8Array>();
function sweeperInitCodeHash(settlement: Address): Uint8Array {
  let hash = initCodeHashes.get(settlement);
  if (!hash) {
    hash = keccak256(concat([depositSweeperBytecode, encodeAbiParameters([{ type: "address" }], [checkSettlement(settlement)])]), "bytes");
    if (initCodeHashes.size >= 10_000) initCodeHashes.clear();
    initCodeHashes.set(settlement, hash);
  }
  return hash;
}

export interface SweepDeposit {
  settlement: Address;
  sessionSalt: Hex;
}

function checkDeposits(deposits: readonly SweepDeposit[]) {
  if (deposits.length === 0) throw new Error("sweep: no deposits");
  const seen = new Set<string>();
  return deposits.map((d) => {
    const settlement = checkSettlement(d.settlement);
    const salt = checkSalt(d.sessionSalt);
    // A second CREATE2 at the same address in one transaction fails (the first sweeper is only
    // deleted at the end of the transaction): catch the relayer bug here rather than on-chain.
    const key = `${settlement}:${salt.toLowerCase()}`;
    if (seen.has(key)) throw new Error(`sweep: deposit listed twice (${key})`);
    seen.add(key);
    return { settlement, salt };
  });
}

/** Calldata of `DepositFactory.sweepBatch(deposits, tokens)`. `tokens` may be empty (native coin only). */
export function encodeSweepBatch(args: { deposits: readonly SweepDeposit[]; tokens: readonly Address[] }): Hex {
  return encodeFunctionData({
    abi: depositFactoryAbi,
    functionName: "sweepBatch",
    args: [checkDeposits(args.deposits), args.tokens.map((t) => getAddress(t))],
  });
}

/**
 * A transaction request `{ to, data }` for the relayer: `sweep` for one deposit (slightly less
 * calldata), `sweepBatch` for several. Every listed token's full balance and all native coin at
 * each deposit go to that deposit's own settlement address; the sender only pays gas.
 */
export function buildSweepCall(args: {
  factory?: Address;
  deposits: readonly SweepDeposit[];
  tokens: readonly Address[];
}): { to: Address; data: Hex } {
  const to = args.factory ?? predictedFactoryAddress();
  const deposits = checkDeposits(args.deposits);
  const tokens = args.tokens.map((t) => getAddress(t));
  const [only] = deposits;
  if (deposits.length === 1 && only) {
    return {
      to,
      data: encodeFunctionData({ abi: depositFactoryAbi, functionName: "sweep", args: [only.settlement, only.salt, tokens] }),
    };
  }
  return { to, data: encodeSweepBatch({ deposits: args.deposits, tokens }) };
}
