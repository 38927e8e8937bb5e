/**
 * /readyz's view of the indexer on one network: caught up, or catching up and how many blocks
 * behind the chain's head (as last probed). The API serves throughout: payments made meanwhile
 * are detected once the indexer reaches their blocks.
 */
import { t } from "elysia";

/** Behind by more than this many blocks counts as catching up (one block in flight is normal). */
export const CAUGHT_UP_WITHIN_BLOCKS = 2n;

export const IndexerLag = t.Object({
  state: t.Union([t.Literal("caught_up"), t.Literal("catching_up"), t.Literal("not_indexed")], {
    description: "`catching_up`: the indexer is working off a backlog (payments in it are detected when it gets there); `not_indexed`: no indexer has stored this network yet",
  }),
  indexedBlock: t.Union([t.String(), t.Null()]),
  blocksBehind: t.Union([t.String(), t.Null()], { description: "the chain's head as last probed minus the newest indexed block" }),
  message: t.String(),
});

export type IndexerLagView = typeof IndexerLag.static;

export function indexerLag(ready: boolean | null, indexed: bigint | undefined, chainHead: string | null): IndexerLagView {
  if (ready === null || indexed === undefined) {
    return { state: "not_indexed", indexedBlock: null, blocksBehind: null, message: ready === false ? "indexer starting: nothing indexed yet" : "no indexer has stored this network yet" };
  }
  const behind = chainHead === null ? null : BigInt(chainHead) > indexed ? BigInt(chainHead) - indexed : 0n;
  const catching = !ready || (behind !== null && behind > CAUGHT_UP_WITHIN_BLOCKS);
  return {
    state: catching ? "catching_up" : "caught_up",
    indexedBlock: indexed.toString(),
    blocksBehind: behind === null ? null : behind.toString(),
    message: catching ? `catching up, ${behind ?? "?"} blocks behind` : "caught up",
  };
}
