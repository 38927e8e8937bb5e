/**
 * Pure pairing of a token's EIP-3009 `AuthorizationUsed(authorizer, nonce)` with the `Transfer`
 * it carried out. A payment by authorization is one transaction in which the token marks the
 * nonce used and then moves the money: USDC (FiatToken v2.2) and TestUSD emit AuthorizationUsed
 * just before the Transfer(authorizer → to, value) of the same call. Ponder runs handlers in log
 * order, so the AuthorizationUsed handler remembers the use (when it is one we keep) and the
 * Transfer handler takes it: the first Transfer after it in the same transaction, from the
 * authorizer, of the same token (one transaction may move several tokens). Nothing outlives the block being processed (a block's logs are indexed together, and
 * a restart replays whole blocks), so memory does not grow with the chain.
 */

/** An AuthorizationUsed worth keeping (bounded mode: its nonce is one of ours). */
export interface AuthorizationUse {
  txHash: string;
  logIndex: number;
  /** The token that logged it, lowercase: its Transfer must be the same token's. */
  token: string;
  /** Lowercase 0x hex. */
  authorizer: string;
  /** Lowercase 0x hex, 32 bytes. */
  nonce: string;
}

export class AuthorizationPairs {
  private readonly pending = new Map<number, { block: bigint; uses: AuthorizationUse[] }>();

  /** Remembers a use until its Transfer comes (in the same block, later in the same transaction). */
  used(chainId: number, blockNumber: bigint, use: AuthorizationUse): void {
    const p = this.onBlock(chainId, blockNumber);
    p.uses.push({ ...use, txHash: use.txHash.toLowerCase(), token: use.token.toLowerCase(), authorizer: use.authorizer.toLowerCase(), nonce: use.nonce.toLowerCase() });
  }

  /** The use this Transfer carries out, if any (taken: one Transfer per use). */
  take(chainId: number, blockNumber: bigint, transfer: { txHash: string; logIndex: number; token: string; from: string }): AuthorizationUse | undefined {
    const p = this.pending.get(chainId);
    if (!p || p.block !== blockNumber || p.uses.length === 0) return undefined;
    const tx = transfer.txHash.toLowerCase();
    const from = transfer.from.toLowerCase();
    const token = transfer.token.toLowerCase();
    const i = p.uses.findIndex((u) => u.txHash === tx && u.token === token && u.authorizer === from && u.logIndex < transfer.logIndex);
    if (i < 0) return undefined;
    return p.uses.splice(i, 1)[0];
  }

  /** Uses waiting for their Transfer (for tests). */
  waiting(chainId: number): number {
    return this.pending.get(chainId)?.uses.length ?? 0;
  }

  private onBlock(chainId: number, blockNumber: bigint) {
    let p = this.pending.get(chainId);
    if (!p || p.block !== blockNumber) {
      p = { block: blockNumber, uses: [] };
      this.pending.set(chainId, p);
    }
    return p;
  }
}
