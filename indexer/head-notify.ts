/**
 * Telling the session runners at once that a block was indexed: the ChainHead handler sends a
 * NOTIFY from inside the block's own transaction, so Postgres delivers it when the block's rows
 * are committed (never before: a runner that wakes finds them). Runners still poll the heads
 * (SERVICE_RUNNER_POLL_MS), so a missed notification only costs a poll.
 *
 * Only for recent blocks: catching up, a notification per block would cost a round trip each and
 * tell nobody anything the next poll would not.
 */

/**
 * The channel api/src/sessions/indexed.ts listens on (INDEXED_HEAD_CHANNEL there; a test checks
 * both agree). Payload "<chainId>:<blockNumber>" (runners only need the wake-up; benches time it).
 */
export const INDEXED_HEAD_CHANNEL = "paysession_indexed_head";

/** Blocks stamped less than this before now count as live. */
export const LIVE_BLOCK_AGE_S = 60n;

export function isLiveBlock(blockTimestamp: bigint, nowMs: number): boolean {
  return blockTimestamp + LIVE_BLOCK_AGE_S >= BigInt(Math.floor(nowMs / 1000));
}
