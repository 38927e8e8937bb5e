/**
 * Bounded mode: keep only transfers into or out of addresses in app.watched_addresses
 * (deposit and settlement addresses, owned by the API).
 *
 * How: for each transfer, ask Postgres whether its `from` or `to` is watched (an indexed
 * lookup of two addresses, watched-db.ts). Nothing about the set of addresses lives here, so
 * the indexer's memory and start-up do not grow with the sessions ever created, and the cost
 * of a block follows the transfers in it, not how many sessions are being created.
 *
 * Why it is exact (the safety argument):
 *   1. An address is committed to app.watched_addresses before anyone can learn it (the API
 *      answers a session's creation only after its transaction committed; a settlement address
 *      is watched as soon as it is saved), and rows are never deleted.
 *   2. A transfer that pays an address is in a block mined after its payer learned the address,
 *      hence after the address was committed.
 *   3. We ask while processing that block, i.e. after it was mined, on a connection of our own
 *      in autocommit (READ COMMITTED: each statement sees everything committed before it
 *      started). So the answer includes every address anyone could have paid in that block.
 *   4. A re-index asks again, later: it sees the same rows or more (never fewer), so it keeps
 *      everything the first pass kept, whatever was registered while it ran.
 *
 * Answers are remembered for the rest of the same block only (point 3 holds for every transfer
 * of the block once it holds for one), so a block with many transfers of one address asks once.
 * An answer is never carried to a later block: that block may pay an address registered since.
 */

/** Which of these lowercase addresses are watched (a subset of them). */
export type WatchedLookup = (addresses: string[]) => Promise<Set<string>>;

export class WatchedFilter {
  /** Per chain: the block the answers belong to, and the answers (address → watched). */
  private readonly memo = new Map<number, { block: bigint; answers: Map<string, boolean> }>();
  /** Lookups sent to Postgres, for tests and benches. */
  lookups = 0;

  constructor(private readonly lookup: WatchedLookup) {}

  /** True if the transfer touches a watched address, as of a moment after `blockNumber` was mined. */
  async keeps(chainId: number, blockNumber: bigint, from: string, to: string): Promise<boolean> {
    let m = this.memo.get(chainId);
    if (!m || m.block !== blockNumber) {
      m = { block: blockNumber, answers: new Map() };
      this.memo.set(chainId, m);
    }
    const pair = [from.toLowerCase(), to.toLowerCase()];
    const unknown = [...new Set(pair.filter((a) => !m.answers.has(a)))];
    if (unknown.length > 0) {
      this.lookups++;
      const watched = await this.lookup(unknown);
      for (const a of unknown) m.answers.set(a, watched.has(a));
    }
    return pair.some((a) => m.answers.get(a) === true);
  }
}
