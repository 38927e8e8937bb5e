/**
 * The newest block of each network, straight from its RPC, cached for a second: at a
 * session's expiry the actor compares it with the indexer's head to know whether the
 * indexer has seen everything mined until then.
 */
import type { PublicClient } from "viem";
import { publicClientFor } from "../../../shared/chains/check.ts";
import type { NetworkConfig } from "../../../shared/chains/config.ts";

const CACHE_MS = 1_000;

export class ChainHeads {
  private readonly clients = new Map<number, PublicClient>();
  private readonly cache = new Map<number, { at: number; block: Promise<bigint | undefined> }>();

  constructor(private readonly networks: readonly NetworkConfig[]) {}

  /** The chain's newest block number; undefined when the network is unknown or its RPC fails. */
  latest(chainId: number): Promise<bigint | undefined> {
    const hit = this.cache.get(chainId);
    if (hit && Date.now() - hit.at < CACHE_MS) return hit.block;
    const net = this.networks.find((n) => n.chainId === chainId);
    if (!net) return Promise.resolve(undefined);
    let client = this.clients.get(chainId);
    if (!client) {
      client = publicClientFor(net);
      this.clients.set(chainId, client);
    }
    const block = client.getBlockNumber({ cacheTime: 0 }).catch(() => undefined);
    this.cache.set(chainId, { at: Date.now(), block });
    return block;
  }
}
