/**
 * Bounded mode: keep only transfers into or out of addresses in app.watched_addresses
 * (deposit and settlement addresses, owned by the API).
 *
 * Why it is safe: an address is registered before anyone can learn it and pay it, and
 * addresses are never removed. We refresh the cached set whenever we reach a block newer
 * than the one we last refreshed for, so the refresh happens after that block was mined,
 * hence after any address its payer could have known was committed. A re-index only ever
 * sees a larger set, so it keeps everything it kept before.
 */

export interface WatchedRow {
  address: string;
  createdAt: Date;
}

/** Loads rows created after `since` (all when null). */
export type WatchedLoader = (since: Date | null) => Promise<WatchedRow[]>;

/**
 * How far back each incremental load looks beyond the newest created_at seen: created_at is
 * the inserting transaction's start time, so a row can become visible after rows with later
 * timestamps. Five minutes covers any sane transaction; re-reading a few rows is cheap.
 */
export const OVERLAP_MS = 5 * 60_000;

export class WatchedSet {
  private readonly addresses = new Set<string>();
  private newest: Date | null = null;
  private readonly refreshedFor = new Map<number, bigint>();

  constructor(private readonly load: WatchedLoader) {}

  /** True if the transfer touches a watched address, refreshing first on a newer block. */
  async keeps(chainId: number, blockNumber: bigint, from: string, to: string): Promise<boolean> {
    const last = this.refreshedFor.get(chainId);
    if (last === undefined || blockNumber > last) {
      await this.refresh();
      this.refreshedFor.set(chainId, blockNumber);
    }
    return this.addresses.has(from.toLowerCase()) || this.addresses.has(to.toLowerCase());
  }

  async refresh(): Promise<void> {
    const since = this.newest === null ? null : new Date(this.newest.getTime() - OVERLAP_MS);
    for (const row of await this.load(since)) {
      this.addresses.add(row.address.toLowerCase());
      if (this.newest === null || row.createdAt > this.newest) this.newest = row.createdAt;
    }
  }

  get size(): number {
    return this.addresses.size;
  }
}
