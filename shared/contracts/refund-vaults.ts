/**
 * The refund balances' contracts (src/RefundVaults.sol; docs/refunds.md): where RefundVaults sits
 * for an operator (the relayer), where a merchant's vault sits in it, and the payBatch call — pure
 * address math and calldata — plus deploying RefundVaults through the deterministic deployer.
 */
import { concat, encodeAbiParameters, encodeFunctionData, getAddress, getContractAddress, keccak256, toBytes, type Address, type Hex } from "viem";
import { refundVaultBytecode, refundVaultsAbi, refundVaultsBytecode } from "./artifacts.ts";
import { DEPLOY_SALT, DETERMINISTIC_DEPLOYER } from "./addresses.ts";
import { deployOnce, type ChainClients } from "./deploy.ts";

/** RefundVaults' init code: creation bytecode ++ abi.encode(operator). */
export function refundVaultsInitCode(operator: Address): Hex {
  return concat([refundVaultsBytecode, encodeAbiParameters([{ type: "address" }], [getAddress(operator)])]);
}

/** Where RefundVaults for `operator` sits on every chain (its address commits to the operator). */
export function predictedRefundVaultsAddress(operator: Address): Address {
  return getContractAddress({ opcode: "CREATE2", from: DETERMINISTIC_DEPLOYER, salt: DEPLOY_SALT, bytecode: refundVaultsInitCode(operator) });
}

/** A merchant's vault salt in one environment: keccak256 of "paysession-refund-vault\0<merchant id>\0<environment>". */
export function refundVaultSalt(merchantId: string, environment: string): Hex {
  if (!merchantId || !environment) throw new Error("refundVaultSalt: empty merchant id or environment");
  return keccak256(toBytes(`paysession-refund-vault\0${merchantId}\0${environment}`));
}

/** Where the vault of `salt` is, or will be, in RefundVaults at `vaults`. */
export function refundVaultAddress(vaults: Address, salt: Hex): Address {
  return getContractAddress({ opcode: "CREATE2", from: vaults, salt, bytecode: refundVaultBytecode });
}

export interface RefundPayment {
  vault: Hex;
  token: Address;
  to: Address;
  amount: bigint;
}

/** The one call that pays `payments`, each from its own vault. */
export function encodePayBatch(payments: readonly RefundPayment[]): Hex {
  return encodeFunctionData({ abi: refundVaultsAbi, functionName: "payBatch", args: [payments.map((p) => ({ vault: p.vault, token: p.token, to: p.to, amount: p.amount }))] });
}

/** Deploys RefundVaults for `operator` unless it is there already. */
export async function ensureRefundVaultsDeployed(clients: ChainClients, operator: Address): Promise<{ address: Address; sent: boolean }> {
  const address = predictedRefundVaultsAddress(operator);
  const { sent } = await deployOnce(clients, refundVaultsInitCode(operator), address, "RefundVaults");
  return { address, sent };
}
