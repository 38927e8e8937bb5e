/**
 * Fees of a new EIP-1559 transaction, for every relayer transaction (sweeps and authorization
 * submissions): what the market asks now, read from the latest block and the node's tip.
 */
import type { PublicClient } from "viem";

export interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/**
 * Fees for a new transaction: twice the latest base fee plus the suggested tip, the usual
 * margin (it survives six full blocks in a row, each raising the base fee by 12.5 %).
 */
export function marketFees(baseFeePerGas: bigint, suggestedTip: bigint): Fees {
  const tip = suggestedTip > 0n ? suggestedTip : 1n;
  return { maxFeePerGas: baseFeePerGas * 2n + tip, maxPriorityFeePerGas: tip };
}

/** The fees a new relayer transaction is signed with now (marketFees over the latest block and the node's tip). */
export async function readMarketFees(client: PublicClient): Promise<Fees> {
  const block = await client.getBlock({ blockTag: "latest" });
  let tip: bigint;
  try {
    tip = BigInt(await client.request({ method: "eth_maxPriorityFeePerGas" }));
  } catch {
    const gasPrice = await client.getGasPrice();
    tip = gasPrice > (block.baseFeePerGas ?? 0n) ? gasPrice - (block.baseFeePerGas ?? 0n) : 1n;
  }
  return marketFees(block.baseFeePerGas ?? 0n, tip);
}
