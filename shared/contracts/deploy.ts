/**
 * Getting the Paysession contracts onto a chain, and the sandbox faucet.
 *
 * Every contract goes through Arachnid's deterministic deployment proxy with fixed init code, so
 * it sits at the same address on every chain (predictedTokenAddress / predictedFactoryAddress /
 * predictedAuthorizationBatchAddress / predictedTestUsdtAddress),
 * and deploying is idempotent: whoever deploys first, the result is byte-for-byte the same.
 * The pure helpers (addresses, salts, sweep calldata) live in addresses.ts and are re-exported.
 */
import {
  concat,
  parseEther,
  type Account,
  type Address,
  type Chain,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
  type Transport,
  type WalletClient,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import {
  DEPLOY_SALT,
  DETERMINISTIC_DEPLOYER,
  DEV_FAUCET_PRIVATE_KEY,
  authorizationBatchInitCode,
  depositFactoryInitCode,
  predictedAuthorizationBatchAddress,
  predictedFactoryAddress,
  predictedTestUsdtAddress,
  predictedTokenAddress,
  testUsdInitCode,
  testUsdtInitCode,
} from "./addresses.ts";
import { testUsdAbi } from "./artifacts.ts";

export * from "./addresses.ts";

type AnyWalletClient = WalletClient<Transport, Chain | undefined, Account | undefined>;

export interface ChainClients {
  publicClient: PublicClient;
  walletClient: AnyWalletClient;
}

/**
 * The deterministic deployer's keyless creation transaction (from its repository,
 * github.com/Arachnid/deterministic-deployment-proxy): pre-EIP-155, signed by nobody's key,
 * gas price 100 gwei, gas limit 100,000, sent from DETERMINISTIC_DEPLOYER_SIGNER at nonce 0.
 */
export const DETERMINISTIC_DEPLOYER_SIGNER: Address = "0x3fAB184622Dc19b6109349B94811493BF2a45362";
export const DETERMINISTIC_DEPLOYER_TX: Hex =
  "0xf8a58085174876e800830186a08080b853604580600e600039806000f350fe7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe03601600081602082378035828234f58015156039578182fd5b8082525050506014600cf31ba02222222222222222222222222222222222222222222222222222222222222222a02222222222222222222222222222222222222222222222222222222222222222";
const DETERMINISTIC_DEPLOYER_COST = parseEther("0.01"); // 100,000 gas × 100 gwei

function requireAccount(walletClient: AnyWalletClient): Account {
  if (!walletClient.account) throw new Error("walletClient needs an account to send transactions");
  return walletClient.account;
}

async function hasCode(publicClient: PublicClient, address: Address): Promise<boolean> {
  const code = await publicClient.getCode({ address });
  return code !== undefined && code !== "0x";
}

async function confirmed(publicClient: PublicClient, hash: Hex, what: string): Promise<TransactionReceipt> {
  const receipt = await publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success") throw new Error(`${what}: transaction ${hash} reverted`);
  return receipt;
}

/**
 * Installs the deterministic deployer on a chain that lacks it (anvil has it by default;
 * most public chains too). Funds its one-time signer with 0.01 ETH and broadcasts the keyless
 * transaction. Only works where pre-EIP-155 transactions are accepted and the gas price is
 * under 100 gwei; otherwise see shared/contracts/README.md. Returns whether anything was sent.
 */
export async function ensureDeterministicDeployer({ publicClient, walletClient }: ChainClients): Promise<boolean> {
  if (await hasCode(publicClient, DETERMINISTIC_DEPLOYER)) return false;
  const balance = await publicClient.getBalance({ address: DETERMINISTIC_DEPLOYER_SIGNER });
  if (balance < DETERMINISTIC_DEPLOYER_COST) {
    const hash = await walletClient.sendTransaction({
      account: requireAccount(walletClient),
      chain: walletClient.chain ?? null,
      to: DETERMINISTIC_DEPLOYER_SIGNER,
      value: DETERMINISTIC_DEPLOYER_COST - balance,
    });
    await confirmed(publicClient, hash, "funding the deterministic deployer signer");
  }
  const hash = await publicClient.sendRawTransaction({ serializedTransaction: DETERMINISTIC_DEPLOYER_TX });
  await confirmed(publicClient, hash, "deploying the deterministic deployer");
  if (!(await hasCode(publicClient, DETERMINISTIC_DEPLOYER))) throw new Error("deterministic deployer still missing");
  return true;
}

/**
 * CREATE2 through the deterministic deployer unless code is already at `address`. `sent`: this
 * call's transaction created it (its receipt is returned).
 */
export async function deployOnce(clients: ChainClients, initCode: Hex, address: Address, name: string): Promise<{ sent: boolean; receipt?: TransactionReceipt }> {
  const { publicClient, walletClient } = clients;
  if (await hasCode(publicClient, address)) return { sent: false };
  if (!(await hasCode(publicClient, DETERMINISTIC_DEPLOYER))) {
    throw new Error(
      `no deterministic deployer at ${DETERMINISTIC_DEPLOYER} on this chain: run ensureDeterministicDeployer() first (see shared/contracts/README.md)`,
    );
  }
  // A concurrent deployer may win the race (our gas estimate or transaction then fails); its
  // contract is byte-for-byte ours, so only the code at `address` decides success.
  let receipt: TransactionReceipt | undefined;
  try {
    const hash = await walletClient.sendTransaction({
      account: requireAccount(walletClient),
      chain: walletClient.chain ?? null,
      to: DETERMINISTIC_DEPLOYER,
      data: concat([DEPLOY_SALT, initCode]),
    });
    receipt = await publicClient.waitForTransactionReceipt({ hash });
  } catch (error) {
    if (!(await hasCode(publicClient, address))) throw error;
  }
  if (!(await hasCode(publicClient, address))) throw new Error(`deploying ${name}: still no code at ${address}`);
  const sent = receipt?.status === "success";
  return sent ? { sent, receipt } : { sent };
}

/**
 * Makes sure TestUSD, the DepositFactory, AuthorizationBatch and TestUSDT exist at their
 * predicted addresses, deploying whichever is missing. Safe to call at every start: with all
 * present it sends nothing. `deployed` lists what this call deployed.
 */
export async function ensureDeployed(
  clients: ChainClients,
): Promise<{ token: Address; factory: Address; batch: Address; usdt: Address; deployed: ("token" | "factory" | "batch" | "usdt")[] }> {
  const token = predictedTokenAddress();
  const usdt = predictedTestUsdtAddress();
  const deployed: ("token" | "factory" | "batch" | "usdt")[] = [];
  if ((await deployOnce(clients, testUsdInitCode(), token, "TestUSD")).sent) deployed.push("token");
  const { factory, batch, deployed: service } = await ensureServiceContractsDeployed(clients);
  deployed.push(...service);
  if ((await deployOnce(clients, testUsdtInitCode(), usdt, "TestUSDT")).sent) deployed.push("usdt");
  return { token, factory, batch, usdt, deployed };
}

/** The service's own contracts, each with its init code and fixed address: what a main network needs. */
function serviceContracts(): { name: "factory" | "batch"; contract: string; initCode: Hex; address: Address }[] {
  return [
    { name: "factory", contract: "DepositFactory", initCode: depositFactoryInitCode(), address: predictedFactoryAddress() },
    { name: "batch", contract: "AuthorizationBatch", initCode: authorizationBatchInitCode(), address: predictedAuthorizationBatchAddress() },
  ];
}

/**
 * Production chains need only the service's own contracts (TestUSD is sandbox-only): the
 * deposit factory (sweeps) and AuthorizationBatch (several payers' authorizations in one
 * transaction). Deploys whichever is missing; `receipts`: the transactions this call sent.
 */
export async function ensureServiceContractsDeployed(
  clients: ChainClients,
): Promise<{ factory: Address; batch: Address; deployed: ("factory" | "batch")[]; receipts: TransactionReceipt[] }> {
  const deployed: ("factory" | "batch")[] = [];
  const receipts: TransactionReceipt[] = [];
  for (const c of serviceContracts()) {
    const { sent, receipt } = await deployOnce(clients, c.initCode, c.address, c.contract);
    if (sent) deployed.push(c.name);
    if (sent && receipt) receipts.push(receipt);
  }
  return { factory: predictedFactoryAddress(), batch: predictedAuthorizationBatchAddress(), deployed, receipts };
}

/** The deployment transactions of the service's contracts (for a cost estimate before sending them). */
export function serviceContractDeployTransactions(): { name: "factory" | "batch"; address: Address; to: Address; data: Hex }[] {
  return serviceContracts().map((c) => ({ name: c.name, address: c.address, to: DETERMINISTIC_DEPLOYER, data: concat([DEPLOY_SALT, c.initCode]) }));
}

/** The sandbox faucet account (TestUSD's and TestUSDT's minter); see DEV_FAUCET_ADDRESS. */
export function devFaucetAccount() {
  return privateKeyToAccount(DEV_FAUCET_PRIVATE_KEY);
}

/**
 * Mints `amount` base units (6 decimals: 1 USD = 1_000_000n) of a sandbox token to `to`, signed
 * by the dev faucet (or `account`, which must be the minter). Waits for the receipt. `token`:
 * TestUSD by default; TestUSDT (predictedTestUsdtAddress()) or a stand-in's copy of either
 * works the same, since both have `mint(to, amount)` and the same `NotMinter` error.
 */
export async function mintTestUsd(args: {
  publicClient: PublicClient;
  walletClient: AnyWalletClient;
  to: Address;
  amount: bigint;
  token?: Address;
  account?: Account;
}): Promise<TransactionReceipt> {
  if (args.amount <= 0n) throw new Error("mintTestUsd: amount must be positive");
  const token = args.token ?? predictedTokenAddress();
  const hash = await args.walletClient.writeContract({
    account: args.account ?? devFaucetAccount(),
    chain: args.walletClient.chain ?? null,
    address: token,
    abi: testUsdAbi,
    functionName: "mint",
    args: [args.to, args.amount],
  });
  return confirmed(args.publicClient, hash, `minting at ${token}`);
}
