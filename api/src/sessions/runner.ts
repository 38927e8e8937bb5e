/**
 * The session runner: finds actors that are due and steps them (actor.ts). Any number of
 * runners may run, in the API process or on their own (`bun run actors`): a due session is
 * stepped by whichever runner locks it first (SKIP LOCKED), never by two at once.
 *
 * What makes a session due (its `wake_at` ≤ now):
 *   - its durable timer (expiry, a confirmation re-check) — set by the previous step;
 *   - news from the indexer: on every new indexed head of a chain, sessions with a transfer
 *     into or out of a deposit address, or a payment by their recorded authorization, in the new
 *     blocks, or still within their confirmation depth, are woken (one indexed
 *     query over the new blocks only, so the cost follows the chain's traffic, not the
 *     number of open sessions);
 *   - the sweeper or the API (wake.ts), with a NOTIFY that makes the runner look at once;
 *     likewise the indexer with each live block it commits (INDEXED_HEAD_CHANNEL).
 *
 * Its statements are named functions in runner-statements.ts.
 */
import type { Sql } from "postgres";
import type { NetworkConfig } from "../../../shared/chains/config.ts";
import { stepSession } from "./actor.ts";
import { INDEXED_HEAD_CHANNEL, indexedHeads, isMissingTable, wakeSessionsTouchedAfter } from "./indexed.ts";
import { SESSION_WAKE_CHANNEL } from "../effects/wake.ts";
import { Pump } from "../pump.ts";
import { isDatabaseUnavailable } from "../db/outage.ts";
import { backOffSession, dueSessions, wakeFundedOnChain, wakeMovedLatelyOnChain } from "./runner-statements.ts";
import { describeError } from "../../../shared/describe-error.ts";

/** How often FUNDED sessions look again for a reorg that no head showed. */
const FUNDED_SAFETY_LOOK_MS = 30_000;

export interface RunnerSettings {
  /** How often to look at the indexer's heads and the timers when nothing NOTIFYs. */
  pollMs: number;
  /** Sessions stepped at once by this runner. */
  concurrency: number;
}

export interface RunnerStats {
  steps: number;
  transitions: number;
  errors: number;
  /** Milliseconds spent working (scanning new blocks and stepping), for bench/lifecycle.ts. */
  busyMs: number;
  /** Scans that found a new head. */
  newHeads: number;
}

export class SessionRunner {
  readonly stats: RunnerStats = { steps: 0, transitions: 0, errors: 0, busyMs: 0, newHeads: 0 };
  private stopping = false;
  private readonly pump: Pump;
  private unlisten: (() => Promise<void>)[] = [];
  /** chainId → when FUNDED sessions there were last looked at for lost funding. */
  private readonly fundedLookedAt = new Map<number, number>();

  constructor(
    private readonly sql: Sql,
    private readonly networks: NetworkConfig[],
    private readonly settings: RunnerSettings,
    private readonly log: (line: string) => void = () => {},
  ) {
    // A poll, not a timer standing in for state: every due time lives in the table.
    this.pump = new Pump(() => this.pass(), { name: "session runner", pollMs: settings.pollMs, retryMs: Math.max(settings.pollMs, 1000), log });
  }

  async start(): Promise<void> {
    for (const channel of [SESSION_WAKE_CHANNEL, INDEXED_HEAD_CHANNEL]) {
      const listener = await this.sql.listen(channel, () => this.wake(), () => this.wake());
      this.unlisten.push(() => listener.unlisten());
    }
    this.wake();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    for (const u of this.unlisten) await u().catch(() => {});
    await this.pump.stop();
  }

  wake(): void {
    this.pump.wake();
  }

  private async pass(): Promise<undefined> {
    const t0 = performance.now();
    try {
      await this.pumpOnce();
    } catch (e) {
      this.stats.errors++;
      throw e;
    } finally {
      this.stats.busyMs += performance.now() - t0;
    }
    return undefined;
  }

  private async pumpOnce(): Promise<void> {
    // The sessions new blocks concern are stepped first, at once: no round trip to find them
    // due again (block → FUNDED is what payers wait on). Then whatever else is due.
    let queue = await this.scanNewBlocks().catch((e) => {
      // The indexer's schema dropped under us (a rebuild): nothing to scan until it is back.
      if (!isMissingTable(e)) throw e;
      const none: string[] = [];
      return none;
    });
    let woken = queue.length > 0;
    for (;;) {
      if (this.stopping) return;
      if (!woken) {
        const due = await dueSessions(this.sql, this.settings.concurrency * 8);
        if (due.length === 0) return;
        queue = due;
      }
      const stepped = await this.stepAll(queue);
      if (stepped === 0 && !woken) return; // all due ones are being stepped elsewhere
      woken = false;
    }
  }

  /** Steps the sessions of `queue` (emptied), `concurrency` at a time; how many were stepped here. */
  private async stepAll(queue: string[]): Promise<number> {
    let stepped = 0;
    await Promise.all(
      Array.from({ length: Math.min(this.settings.concurrency, queue.length) }, async () => {
        for (let id = queue.shift(); id && !this.stopping; id = queue.shift()) {
          try {
            const r = await stepSession(this.sql, id, {}, { skipLocked: true, networks: this.networks });
            if (!r.found) continue;
            stepped++;
            this.stats.steps++;
            if (r.decision?.transition) this.stats.transitions++;
          } catch (e) {
            // The database is away: no session can be stepped; the pass ends (logged once by the pump).
            if (isDatabaseUnavailable(e)) throw e;
            this.stats.errors++;
            this.log(`session ${id}: ${describeError(e)}`);
            // Back off this one session; the others go on.
            await backOffSession(this.sql, id).catch(() => {});
          }
        }
      }),
    );
    return stepped;
  }

  /** Wake the sessions that new indexed blocks concern; then remember how far we looked. Returns the woken. */
  private async scanNewBlocks(): Promise<string[]> {
    const now = Date.now();
    const woken: string[] = [];
    for (const h of await indexedHeads(this.sql)) {
      const { chainId, head, seen } = h;
      // A head lower than before, or the same height with another hash: blocks were replaced.
      const reorged = seen !== null && (head < seen || (head === seen && h.hash !== h.seenHash));
      const safetyDue = now - (this.fundedLookedAt.get(chainId) ?? 0) >= FUNDED_SAFETY_LOOK_MS;
      if (reorged || safetyDue) {
        // A reorg may have taken a funding transfer away: FUNDED sessions on this chain (few
        // at any time: until their sweep lands) look again — at once after a reorg. Also now
        // and then, should a reorg have come and gone between two looks: those looks are spread
        // over the period, so that many FUNDED sessions (a sweeper that is behind or off) never
        // queue a payment's step behind all of them at once (bench/detection.ts saw 1.4–3.5 s).
        // An earlier wake-up is never postponed.
        this.fundedLookedAt.set(chainId, now);
        const spreadMs = reorged ? 0 : FUNDED_SAFETY_LOOK_MS;
        await wakeFundedOnChain(this.sql, chainId, spreadMs);
        // A payment by authorization settles at once (SUCCEEDED, no sweep whose loss the sweeper
        // would notice), and whoever submitted it, we may hold no record of it: after a reorg,
        // every session whose money moved on this chain in the last hour (its ledger; deeper than
        // any finality window we index) looks again too, so a payment the chain no longer has is
        // reported (funds_reverted, or ERROR reorged).
        if (reorged) await wakeMovedLatelyOnChain(this.sql, chainId);
      }
      if (seen === head && !reorged) continue;
      this.stats.newHeads++;
      // Transfers still short of the confirmation depth need another look at every new block.
      const depth = BigInt(this.networks.find((n) => n.chainId === chainId)?.confirmations ?? 1);
      // Never looked at this chain: every indexed transfer into a deposit address counts (a
      // payment may have been indexed before any runner ran); after that, only new blocks.
      woken.push(...(await wakeSessionsTouchedAfter(this.sql, chainId, seen === null ? -1n : (seen < head ? seen : head) - depth, { block: head, hash: h.hash })));
    }
    return woken;
  }
}
