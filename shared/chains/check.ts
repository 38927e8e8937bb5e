/**
 * Start-up checks against the live chain: the RPC URL really serves the preset's chain,
 * and every accepted stablecoin has the decimals our money math assumes (docs/decisions.md, "Money: integers in base units").
 * A mismatch would silently mis-price every payment, so we refuse to start instead.
 */
import { createPublicClient, http, webSocket, erc20Abi, type PublicClient } from "viem";
import type { NetworkConfig } from "./config.ts";
import { envSuffix } from "./presets.ts";
import { BaseError } from "../base-error.ts";
import { describeError } from "../describe-error.ts";

export interface ObservedChainFacts {
  chainId: number;
  /** Per accepted stablecoin, in the network's order: its decimals, null when the call failed (not a contract, not an ERC-20, …). */
  tokens: { decimals: number | null; error?: string }[];
}

/** Pure: what is wrong between the configuration and what the chain answered, if anything. */
export function chainFactsProblems(net: NetworkConfig, seen: ObservedChainFacts): string[] {
  const problems: string[] = [];
  const rpcVar = `SERVICE_RPC_URL_${envSuffix(net.key)}`;
  if (seen.chainId !== net.chainId) {
    problems.push(`${net.name}: ${rpcVar} serves chain id ${seen.chainId}, expected ${net.chainId}`);
    return problems; // the token check means nothing on the wrong chain
  }
  net.stablecoins.forEach((coin, i) => {
    const t = seen.tokens[i] ?? { decimals: null };
    if (t.decimals === null) {
      problems.push(
        `${net.name}: could not read decimals() of the stablecoin ${coin.address} (${coin.symbol})` + (t.error ? ` (${t.error})` : "") + "; is it deployed on this chain?",
      );
    } else if (t.decimals !== coin.decimals) {
      problems.push(
        `${net.name}: stablecoin ${coin.address} reports decimals() = ${t.decimals}, ` +
          `but ${coin.symbol} here must have ${coin.decimals}; refusing to start ` +
          `(amounts would be mis-scaled). Fix SERVICE_STABLECOINS_${envSuffix(net.key)}, SERVICE_STABLECOIN_ADDRESS_${envSuffix(net.key)} or the RPC URL.`,
      );
    }
  });
  return problems;
}

/**
 * `timeoutMs`: each RPC request gives up after this; `retryCount`: failed requests are retried
 * this many times (viem's defaults otherwise: 10 s, 3).
 */
export function publicClientFor(net: Pick<NetworkConfig, "rpcUrl">, opts: { timeoutMs?: number; retryCount?: number } = {}): PublicClient {
  const { timeoutMs: timeout, retryCount } = opts;
  const transport = net.rpcUrl.startsWith("ws") ? webSocket(net.rpcUrl, { timeout, retryCount }) : http(net.rpcUrl, { timeout, retryCount });
  return createPublicClient({ transport });
}

export async function observeChainFacts(client: PublicClient, net: NetworkConfig): Promise<ObservedChainFacts> {
  const chainId = await client.getChainId();
  const tokens = await Promise.all(
    net.stablecoins.map(async (coin) => {
      try {
        return { decimals: await client.readContract({ address: coin.address, abi: erc20Abi, functionName: "decimals" }) };
      } catch (err) {
        return { decimals: null, error: describeError(err, { links: 1, firstLines: true, redact: false }) };
      }
    }),
  );
  return { chainId, tokens };
}

/**
 * Every network's problems in one error. It keeps no `cause`: an RPC's error names the RPC URL
 * (often with a provider's key in it), so each problem is the error's first line with the URL cut.
 */
export class ChainCheckError extends BaseError {
  override name = "ChainCheckError";
  constructor(readonly problems: string[]) {
    super(`Chain start-up check failed:\n  - ${problems.join("\n  - ")}`);
  }
}

/** Checks every enabled network; throws one ChainCheckError listing all problems. */
export async function checkNetworks(networks: NetworkConfig[]): Promise<void> {
  const problems = (
    await Promise.all(
      networks.map(async (net) => {
        try {
          return chainFactsProblems(net, await observeChainFacts(publicClientFor(net), net));
        } catch (err) {
          // Never the URL itself: it often carries a provider's API key.
          return [`${net.name}: RPC (SERVICE_RPC_URL_${envSuffix(net.key)}) did not answer (${describeError(err, { links: 1, firstLines: true, redact: false }).split(net.rpcUrl).join("[RPC URL]")})`];
        }
      }),
    )
  ).flat();
  if (problems.length > 0) throw new ChainCheckError(problems);
}
