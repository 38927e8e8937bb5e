/**
 * The indexer seat: of all the nodes that may run the indexer (SERVICE_INDEXER=true or standby,
 * or `bun run indexer`), the one holding the seat runs Ponder; the others wait as standbys and
 * look every TICK_MS. Ponder itself allows one writer per schema (its own lock, with a 25-s
 * heartbeat expiry); the seat decides who that writer is, sooner. Holding the seat is holding two
 * things, on one database connection of the seat's own:
 *
 *   - a session advisory lock. Postgres drops it the moment the holder's connection closes — its
 *     process killed, crashed or stopped — so a standby knows at its next look, in about a second;
 *   - the `indexer` lease (lease.ts), renewed every TICK_MS for LEASE_TTL_MS: for a holder whose
 *     connection does not close (its host gone without a word, a network cut) the lease expires,
 *     and a standby then ends that stale session itself (pg_terminate_backend) to take the lock.
 *
 * The holder stops writing — kills its Ponder, or aborts a start still under way (Ponder takes its
 * lock and recovers before it says it listens) — as soon as its seat connection closes or fails
 * (the lock may be another's from that moment; a renewal counts only on the session holding it),
 * when the lease turns out to be another's, and after FENCE_MS without a renewal whatever the
 * reason (well before the lease can expire). A holder
 * killed outright takes its Ponder with it (indexer/ponder-child.ts exits when orphaned). So the
 * old writer is gone before the new one starts; the new one clears Ponder's lock (a dead
 * writer's) and Ponder resumes from its own checkpoint: rows written are kept, the blocks after
 * the last checkpoint are indexed again in place, nothing is handed to the runners twice.
 *
 * From a holder's death to the next indexed block: a process killed, TICK_MS + Ponder's start
 * (seconds); a host gone, LEASE_TTL_MS more. A clean stop releases both at once. A Ponder that
 * fails while this node holds the seat gives the seat up; this node tries again after a pause.
 */
import type { IndexerProcess } from "../../../indexer/process.ts";
import { connect, type Database } from "../db/client.ts";
import { acquireLease, INDEXER_LEASE, releaseLease, renewLease } from "./lease.ts";
import type { IndexerState } from "./registry.ts";
import { col, decodeFirst, rowShape } from "../db/rows.ts";

export const TICK_MS = 1000;
export const LEASE_TTL_MS = 10_000;
/** Without a renewal for this long, the holder stops writing (well before LEASE_TTL_MS). */
export const FENCE_MS = 6000;
/** After its Ponder failed, a node waits this long (doubling, at most 60 s) before trying again. */
const RETRY_MS = 5000;
/** Arbitrary constant: "paysession indexer seat" (db/migrate.ts has the migrations' one). */
const SEAT_LOCK_KEY = 7_301_552_020n;

const Got = rowShape("indexer seat lock", { got: col.bool });

export interface IndexerSeatOptions {
  /** The seat's own connection is opened here (one; closed when the seat is given up). */
  databaseUrl: string;
  nodeId: string;
  /**
   * Starts Ponder (with clearStaleLock: the seat is ours). `signal` aborts when the seat is lost
   * while it starts: the start must then stop where it is and kill what it spawned — Ponder takes
   * its lock and recovers before it says it listens, and another node may be starting by then.
   */
  startIndexer: (signal: AbortSignal) => Promise<IndexerProcess>;
  log: (line: string) => void;
  /** active: this node's Ponder writes the index; standby: another's does, or nobody's yet. */
  onState?: (state: IndexerState) => void;
  /** Ponder failed to start, or exited by itself, while this node held the seat (given up; retried later). */
  onFailure?: (err: unknown) => void;
}

export class IndexerSeat {
  private indexer: IndexerProcess | undefined;
  private starting: Promise<void> | undefined;
  /** Aborted when the seat is lost while a start is under way. */
  private startAbort: AbortController | undefined;
  private conn: Database | undefined;
  private holding = false;
  private lastRenewed = 0;
  private inFlight = false;
  private timer: ReturnType<typeof setInterval> | undefined;
  private stopped = false;
  private failures = 0;
  private lastFailure: unknown;
  private notBefore = 0;
  state: IndexerState | undefined;

  constructor(private readonly opts: IndexerSeatOptions) {}

  /** The running Ponder while this node holds the seat. */
  get process(): IndexerProcess | undefined {
    return this.indexer;
  }

  /**
   * Takes the seat if it is free (and then waits for Ponder to listen: a first start that fails
   * throws, as a bad configuration should), else waits as a standby.
   */
  async start(): Promise<void> {
    await this.tick();
    if (!this.holding) this.setState("standby");
    // Renewals go on while Ponder starts (that takes seconds).
    this.timer = setInterval(() => void this.tick(), TICK_MS);
    await this.starting;
    if (this.failures > 0) {
      await this.stop();
      throw this.lastFailure;
    }
  }

  private setState(state: IndexerState): void {
    if (state === this.state) return;
    this.state = state;
    this.opts.onState?.(state);
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    // Checked whatever the database does: a renewal may hang until its timeout.
    if (this.holding && performance.now() - this.lastRenewed > FENCE_MS) {
      this.fence(`no renewal of the indexer lease for ${Math.round((performance.now() - this.lastRenewed) / 1000)} s`);
    }
    if (this.inFlight) return;
    this.inFlight = true;
    try {
      if (this.holding) await this.renew();
      // Not while a start from an earlier hold is still running: it ends by killing what it
      // started (the seat was lost meanwhile), and two starts would leave two indexers.
      else if (performance.now() >= this.notBefore && !this.starting) await this.tryToTake();
    } finally {
      this.inFlight = false;
    }
  }

  private async renew(): Promise<void> {
    try {
      if (await renewLease(this.conn!.sql, INDEXER_LEASE, this.opts.nodeId, LEASE_TTL_MS, SEAT_LOCK_KEY)) this.lastRenewed = performance.now();
      else this.fence("the indexer lease passed to another node, or the seat's lock went with its connection");
    } catch (e) {
      // The seat's connection failed: the lock went with it and a standby may take the seat now.
      this.fence(`the seat's database connection failed (${String((e as Error)?.message ?? e)})`);
    }
  }

  private async tryToTake(): Promise<void> {
    try {
      if (!this.conn) {
        // Its lock goes with its connection: stop writing at that moment, not at the next renewal.
        const conn = connect(this.opts.databaseUrl, {
          max: 1,
          keepConnections: true,
          onConnectionClosed: () => {
            if (this.conn === conn) this.fence("the seat's database connection closed");
          },
        });
        this.conn = conn;
      }
      const { sql } = this.conn;
      const got = decodeFirst(Got, await sql`select pg_try_advisory_lock(${SEAT_LOCK_KEY.toString()}::bigint) as got`)?.got;
      if (!got) {
        // Held. If its lease expired, the session holding it is stale (its node stopped renewing,
        // so it has stopped writing): end it, and the lock is free at the next look.
        await sql`
          select pg_terminate_backend(l.pid) from pg_locks l
          where l.locktype = 'advisory' and l.granted
            and l.classid = (${SEAT_LOCK_KEY.toString()}::bigint >> 32)::oid and l.objid = (${SEAT_LOCK_KEY.toString()}::bigint & 4294967295)::oid
            and l.objsubid = 1 and l.pid <> pg_backend_pid()
            and exists (select 1 from app.leases where name = ${INDEXER_LEASE} and expires_at < now())`;
        return;
      }
      // The lock is ours: whoever held the lease is gone (or has stopped writing).
      const lease = await acquireLease(sql, INDEXER_LEASE, this.opts.nodeId, LEASE_TTL_MS, true);
      if (!lease.acquired || this.stopped) return this.dropConnection();
      this.holding = true;
      this.lastRenewed = performance.now();
      const from = lease.previous
        ? ` from ${lease.previous} (${lease.previousExpiredMs !== null && lease.previousExpiredMs > 0 ? `its lease expired ${(lease.previousExpiredMs / 1000).toFixed(1)} s ago` : "its connection closed"})`
        : "";
      this.opts.log(`indexer   this node holds the indexer seat${from}: starting the indexer`);
      const abort = (this.startAbort = new AbortController());
      this.starting = this.startPonder(abort.signal).finally(() => {
        this.starting = undefined;
        if (this.startAbort === abort) this.startAbort = undefined;
      });
    } catch {
      // The database did not answer: look again at the next tick, on a new connection.
      this.dropConnection();
    }
  }

  private async startPonder(signal: AbortSignal): Promise<void> {
    let indexer: IndexerProcess;
    try {
      indexer = await this.opts.startIndexer(signal);
    } catch (err) {
      // Aborted: the seat was lost (fenced) or the node is stopping; nothing to give up.
      if (!signal.aborted) this.giveUp(err);
      return;
    }
    if (!this.holding || this.stopped) {
      // Fenced or stopped while it started: it must not write.
      indexer.kill();
      return;
    }
    this.indexer = indexer;
    this.failures = 0;
    this.setState("active");
    void indexer.exited.then((code) => {
      if (indexer.stopped || this.indexer !== indexer) return;
      this.giveUp(new Error(`the indexer exited by itself (code ${code}):\n${indexer.recentLogs().slice(-20).join("\n")}`));
    });
  }

  /** Ponder failed while ours: the seat goes back at once (another node may try), ours again after a pause. */
  private giveUp(err: unknown): void {
    this.failures++;
    this.lastFailure = err;
    this.notBefore = performance.now() + Math.min(60_000, RETRY_MS * 2 ** (this.failures - 1));
    this.holding = false;
    this.indexer = undefined;
    const conn = this.conn;
    this.conn = undefined;
    void (conn ? releaseLease(conn.sql, INDEXER_LEASE, this.opts.nodeId).catch(() => {}).finally(() => conn.close().catch(() => {})) : undefined);
    this.setState("standby");
    this.opts.onFailure?.(err);
  }

  /** Stops writing at once: the seat may be (or soon be) another node's. */
  private fence(why: string): void {
    if (!this.holding) return;
    this.holding = false;
    this.opts.log(`indexer   ${why}: stopping this node's indexer (it may no longer write)`);
    this.startAbort?.abort();
    this.indexer?.kill();
    this.indexer = undefined;
    this.dropConnection();
    this.setState("standby");
  }

  /** Closing the seat's connection lets its lock go. */
  private dropConnection(): void {
    const conn = this.conn;
    this.conn = undefined;
    void conn?.close().catch(() => {});
  }

  /** A clean stop: Ponder stopped (its lock released), then the lease and the lock, so a standby takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    // A start under way stops where it is (what it spawned is killed): this node is leaving.
    this.startAbort?.abort();
    await this.starting;
    const indexer = this.indexer;
    this.indexer = undefined;
    await indexer?.stop();
    const conn = this.conn;
    this.conn = undefined;
    if (conn && this.holding) await releaseLease(conn.sql, INDEXER_LEASE, this.opts.nodeId).catch(() => {});
    this.holding = false;
    await conn?.close().catch(() => {});
  }
}
