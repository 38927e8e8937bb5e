/**
 * The indexer seat: of all the nodes that may run the indexer (SERVICE_INDEXER=true or standby,
 * or `bun run indexer`), the one holding the `indexer` lease (lease.ts) runs Ponder; the others
 * wait and try for the lease every TICK_MS. Ponder itself allows one writer per schema (its own
 * lock, with a 25-s heartbeat expiry); the lease decides who that writer is, sooner:
 *
 *   - the holder renews every TICK_MS for LEASE_TTL_MS; a holder that has not renewed for
 *     FENCE_MS (its database unreachable, its event loop stuck) kills its Ponder itself, before
 *     the lease can expire and pass on — so the old writer is gone before a new one starts;
 *   - a holder killed outright takes its Ponder with it (indexer/ponder-child.ts exits when
 *     orphaned), so its lease expires with nothing left writing;
 *   - the next holder clears Ponder's lock (it is a dead writer's) and starts Ponder, which
 *     resumes from its own checkpoint: rows it had written are kept, the blocks after the last
 *     checkpoint are indexed again in place, nothing is handed to the runners twice.
 *
 * From a holder's death to the next indexed block: at most LEASE_TTL_MS + TICK_MS + Ponder's
 * start (a few seconds). A clean stop releases the lease at once.
 */
import type { Sql } from "postgres";
import type { IndexerProcess } from "../../../indexer/process.ts";
import { acquireLease, INDEXER_LEASE, releaseLease, renewLease } from "./lease.ts";
import type { IndexerState } from "./registry.ts";

export const TICK_MS = 1000;
export const LEASE_TTL_MS = 10_000;
/** Without a renewal for this long, the holder stops writing (well before LEASE_TTL_MS). */
export const FENCE_MS = 6000;

export interface IndexerSeatOptions {
  sql: Sql;
  nodeId: string;
  /** Starts Ponder (with clearStaleLock: the lease is ours). */
  startIndexer: () => Promise<IndexerProcess>;
  log: (line: string) => void;
  /** active: this node's Ponder writes the index; standby: another's does, or nobody's yet. */
  onState?: (state: IndexerState) => void;
  /** Ponder failed to start or exited by itself while we held the lease (the lease is released). */
  onFailure?: (err: unknown) => void;
  /** Tests: shorter times. */
  timing?: { tickMs?: number; ttlMs?: number; fenceMs?: number };
}

export class IndexerSeat {
  private indexer: IndexerProcess | undefined;
  private starting: Promise<void> | undefined;
  private holding = false;
  private lastRenewed = 0;
  private inFlight = false;
  private timer: ReturnType<typeof setInterval> | undefined;
  private stopped = false;
  private readonly tickMs: number;
  private readonly ttlMs: number;
  private readonly fenceMs: number;
  state: IndexerState = "standby";

  constructor(private readonly opts: IndexerSeatOptions) {
    this.tickMs = opts.timing?.tickMs ?? TICK_MS;
    this.ttlMs = opts.timing?.ttlMs ?? LEASE_TTL_MS;
    this.fenceMs = opts.timing?.fenceMs ?? FENCE_MS;
  }

  /** The running Ponder while this node holds the seat. */
  get process(): IndexerProcess | undefined {
    return this.indexer;
  }

  /** Takes the seat if it is free (and then waits for Ponder to listen), else waits as a standby. */
  async start(): Promise<void> {
    this.setState("standby");
    await this.tick();
    await this.starting;
    this.timer = setInterval(() => void this.tick(), this.tickMs);
  }

  private setState(state: IndexerState): void {
    if (state === this.state && this.timer) return;
    this.state = state;
    this.opts.onState?.(state);
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    // The fence is checked whatever the database does: a renewal may hang until its timeout.
    if (this.holding && performance.now() - this.lastRenewed > this.fenceMs) {
      this.fence(`no lease renewal for ${Math.round((performance.now() - this.lastRenewed) / 1000)} s`);
    }
    if (this.inFlight) return;
    this.inFlight = true;
    try {
      if (this.holding) {
        if (await renewLease(this.opts.sql, INDEXER_LEASE, this.opts.nodeId, this.ttlMs)) this.lastRenewed = performance.now();
        else this.fence("the indexer lease passed to another node");
      } else {
        const got = await acquireLease(this.opts.sql, INDEXER_LEASE, this.opts.nodeId, this.ttlMs);
        if (got.acquired && !this.stopped) {
          this.holding = true;
          this.lastRenewed = performance.now();
          const from = got.previous ? ` from ${got.previous} (its lease expired ${((got.previousExpiredMs ?? 0) / 1000).toFixed(1)} s ago)` : "";
          this.opts.log(`indexer   this node holds the indexer lease${from}: starting the indexer`);
          this.starting = this.startPonder().finally(() => (this.starting = undefined));
        }
      }
    } catch {
      // The database did not answer: the fence above decides when to stop writing.
    } finally {
      this.inFlight = false;
    }
  }

  private async startPonder(): Promise<void> {
    let indexer: IndexerProcess;
    try {
      indexer = await this.opts.startIndexer();
    } catch (err) {
      await this.giveUp(err);
      return;
    }
    if (!this.holding || this.stopped) {
      // Fenced or stopped while it started: it must not write.
      indexer.kill();
      return;
    }
    this.indexer = indexer;
    this.setState("active");
    void indexer.exited.then(async (code) => {
      if (indexer.stopped || this.indexer !== indexer) return;
      await this.giveUp(new Error(`the indexer exited by itself (code ${code}):\n${indexer.recentLogs().slice(-20).join("\n")}`));
    });
  }

  /** Ponder failed while ours: the lease goes back at once, so another node may try. */
  private async giveUp(err: unknown): Promise<void> {
    this.holding = false;
    this.indexer = undefined;
    this.setState("standby");
    await releaseLease(this.opts.sql, INDEXER_LEASE, this.opts.nodeId).catch(() => {});
    this.opts.onFailure?.(err);
  }

  /** Stops writing at once: the lease may be (or soon be) another node's. */
  private fence(why: string): void {
    if (!this.holding) return;
    this.holding = false;
    this.opts.log(`indexer   ${why}: stopping this node's indexer (it may no longer write)`);
    this.indexer?.kill();
    this.indexer = undefined;
    this.setState("standby");
  }

  /** A clean stop: Ponder stopped (its lock released), then the lease, so a standby takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.starting;
    const indexer = this.indexer;
    this.indexer = undefined;
    await indexer?.stop();
    if (this.holding) await releaseLease(this.opts.sql, INDEXER_LEASE, this.opts.nodeId).catch(() => {});
    this.holding = false;
  }
}
