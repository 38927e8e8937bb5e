/**
 * The indexer seat, and this node's own index. Every node that may run the indexer
 * (SERVICE_INDEXER=true or standby, or `bun run indexer`) runs its own Ponder all the time, into a
 * schema of its own — an instance slot, `indexer_1`, `indexer_2`, … (indexer/views.ts), held by a
 * session advisory lock on a connection of its own, so no two Ponders ever write one schema. The
 * node holding the seat is the one whose index the service reads: the views schema `indexer`
 * follows its instance. A standby is therefore warm — caught up, block by block, when it takes the
 * seat; taking it is switching the views (one transaction), not starting Ponder.
 *
 * Holding the seat is holding two things, on one database connection of the seat's own:
 *
 *   - a session advisory lock. Postgres drops it the moment the holder's connection closes — its
 *     process killed, crashed or stopped — so a standby knows at its next look, in about a second;
 *   - the `indexer` lease (lease.ts), renewed every TICK_MS for LEASE_TTL_MS: for a holder whose
 *     connection does not close (its host gone without a word, a network cut) the lease expires,
 *     and a standby then ends that stale session itself (pg_terminate_backend) to take the lock.
 *
 * The views are switched only in a transaction on the seat's connection that finds, in itself,
 * this session holding the lock and the lease this node's: a holder that lost the seat (its
 * connection closed or failed, the lease another's, FENCE_MS without a renewal) stops following at
 * once, and can never point the views back. A node whose slot connection closes kills its Ponder
 * (its schema may be another node's from that moment) and takes a slot again.
 *
 * From a holder's death to the views on the standby's index: a process killed, TICK_MS; a host
 * gone, LEASE_TTL_MS more. A clean stop releases the seat at once. A Ponder that fails gives the
 * seat up (its index no longer moves); its node starts it again after a pause.
 *
 * An index written by a build before the views schema (schema `indexer` itself) is moved to the
 * seat holder's instance schema before that instance's Ponder starts (takeLegacyIndex), so the
 * upgrade resumes it instead of indexing again.
 */
import type { IndexerProcess } from "../../../indexer/process.ts";
import { followSchema, instanceSchema, legacyIndexPresent, takeLegacyIndex, viewsFollow } from "../../../indexer/views.ts";
import { connect, type Database } from "../db/client.ts";
import { acquireLease, INDEXER_LEASE, releaseLease, renewLease } from "./lease.ts";
import type { IndexerState } from "./registry.ts";
import { col, decodeFirst, rowShape } from "../db/rows.ts";
import { describeError } from "../../../shared/describe-error.ts";

export const TICK_MS = 1000;
export const LEASE_TTL_MS = 10_000;
/** Without a renewal for this long, the holder stops following (well before LEASE_TTL_MS). */
export const FENCE_MS = 6000;
/** After its Ponder failed, a node waits this long (doubling, at most 60 s) before trying again. */
const RETRY_MS = 5000;
/** Arbitrary constant: "paysession indexer seat" (db/migrate.ts has the migrations' one). */
const SEAT_LOCK_KEY = 7_301_552_020n;
/** Instance slot n is held by the advisory lock SLOT_LOCK_BASE + n, for n in 1..MAX_SLOTS. */
const SLOT_LOCK_BASE = 7_301_552_100n;
export const MAX_SLOTS = 8;
/**
 * Held by a node while its Ponder starts (the launcher's checks, Ponder's migrations): two nodes
 * starting at once on a fresh database would race to create what they share — the launcher's
 * schema indexer_meta and Ponder's RPC cache ponder_sync (`create schema if not exists` is not
 * safe against a concurrent one) — and a first start that fails ends the node.
 */
const START_LOCK_KEY = 7_301_552_099n;

const Got = rowShape("indexer seat lock", { got: col.bool });
const StillOurs = rowShape("indexer seat still ours", { ours: col.bool });

export interface IndexerSeatOptions {
  /** The seat's and the slot's connections are opened here (one each; closed when given up). */
  databaseUrl: string;
  nodeId: string;
  /**
   * Starts this node's Ponder into `schema` (its instance's; with clearStaleLock: the slot is
   * ours). `signal` aborts when the slot is lost or the node stops while it starts: the start must
   * then stop where it is and kill what it spawned.
   */
  startIndexer: (schema: string, signal: AbortSignal) => Promise<IndexerProcess>;
  log: (line: string) => void;
  /** active: the service reads this node's index (it holds the seat); standby: another's, or nobody's yet. */
  onState?: (state: IndexerState) => void;
  /** Ponder failed to start, or exited by itself (the seat given up if held; started again later). */
  onFailure?: (err: unknown) => void;
}

export class IndexerSeat {
  private indexer: IndexerProcess | undefined;
  private starting: Promise<void> | undefined;
  /** Aborted when the slot is lost or the node stops while a start is under way. */
  private startAbort: AbortController | undefined;
  /** The seat's connection (its lock) while this node holds or tries for the seat. */
  private conn: Database | undefined;
  /** The slot's connection (its lock: this node's schema is its own) and the slot. */
  private slotConn: Database | undefined;
  private slot: number | undefined;
  private holding = false;
  /** A legacy index waits for this node to hold the seat before its Ponder starts (takeLegacyIndex). */
  private legacyWaiting = false;
  private lastRenewed = 0;
  private inFlight = false;
  private timer: ReturnType<typeof setInterval> | undefined;
  private stopped = false;
  private failures = 0;
  private lastFailure: unknown;
  private notBefore = 0;
  state: IndexerState | undefined;

  constructor(private readonly opts: IndexerSeatOptions) {}

  /** This node's running Ponder (whether or not it holds the seat). */
  get process(): IndexerProcess | undefined {
    return this.indexer;
  }

  /** This node's instance schema (its slot's), once it holds one. */
  get schema(): string | undefined {
    return this.slot === undefined ? undefined : instanceSchema(this.slot);
  }

  /**
   * Takes a slot and starts this node's Ponder (waiting for it to listen: a first start that fails
   * throws, as a bad configuration should), then takes the seat if it is free, else waits as a
   * standby — with its index kept up to date all the while.
   */
  async start(): Promise<void> {
    await this.tick();
    // Renewals go on while Ponder starts (that takes seconds).
    this.timer = setInterval(() => void this.tick(), TICK_MS);
    await this.starting;
    if (this.failures > 0) {
      await this.stop();
      throw this.lastFailure;
    }
    // The seat at once if it is free (not at the next tick): `bun run dev` reads its index from the start.
    while (this.inFlight) await Bun.sleep(10);
    await this.tick();
    if (!this.holding) this.setState("standby");
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
      if (this.holding) {
        await this.renew();
        if (this.holding) await this.follow();
      } else if (this.indexer || this.legacyWaiting) {
        // Only a node whose index runs takes the seat (or one that must hold it to move a legacy index).
        await this.tryToTake();
      }
      if (!this.indexer && !this.starting && !this.stopped && performance.now() >= this.notBefore) await this.beginStart();
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
      this.fence(`the seat's database connection failed (${describeError(e)})`);
    }
  }

  /**
   * Points the views schema at this node's index if it does not follow it yet — in a transaction
   * that finds this session holding the seat's lock and the lease this node's, so a holder that
   * lost the seat can never switch them.
   */
  private async follow(): Promise<void> {
    const schema = this.schema;
    if (!this.indexer || !this.conn || !schema) return;
    const { sql } = this.conn;
    try {
      if ((await viewsFollow(sql)) === schema) return;
      const outcome = await sql.begin(async (tx) => {
        const ours = decodeFirst(
          StillOurs,
          await tx`
            select exists (select 1 from pg_locks where locktype = 'advisory' and granted and pid = pg_backend_pid()
                             and classid = (${SEAT_LOCK_KEY.toString()}::bigint >> 32)::oid and objid = (${SEAT_LOCK_KEY.toString()}::bigint & 4294967295)::oid and objsubid = 1)
               and exists (select 1 from app.leases where name = ${INDEXER_LEASE} and holder = ${this.opts.nodeId} and expires_at > now()) as ours`,
        )?.ours;
        if (!ours) return "lost" as const;
        return (await followSchema(tx, schema)) ? ("switched" as const) : ("not yet" as const);
      });
      if (outcome === "lost") this.fence("the seat is no longer this node's (its lock or its lease)");
      else if (outcome === "switched") this.opts.log(`indexer   the views schema "indexer" now follows this node's index ("${schema}")`);
    } catch (e) {
      // A view's lock not had in time, the connection failing (the renewal says so): again at the next tick.
      this.opts.log(`indexer   the views schema not switched to "${schema}" yet (${describeError(e)}); trying again`);
    }
  }

  private async tryToTake(): Promise<void> {
    try {
      if (!this.conn) {
        // Its lock goes with its connection: stop following at that moment, not at the next renewal.
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
        // so it has stopped following): end it, and the lock is free at the next look.
        await sql`
          select pg_terminate_backend(l.pid) from pg_locks l
          where l.locktype = 'advisory' and l.granted
            and l.classid = (${SEAT_LOCK_KEY.toString()}::bigint >> 32)::oid and l.objid = (${SEAT_LOCK_KEY.toString()}::bigint & 4294967295)::oid
            and l.objsubid = 1 and l.pid <> pg_backend_pid()
            and exists (select 1 from app.leases where name = ${INDEXER_LEASE} and expires_at < now())`;
        return;
      }
      // The lock is ours: whoever held the lease is gone (or has stopped following).
      const lease = await acquireLease(sql, INDEXER_LEASE, this.opts.nodeId, LEASE_TTL_MS, true);
      if (!lease.acquired || this.stopped) return this.dropConnection();
      this.holding = true;
      this.lastRenewed = performance.now();
      const from = lease.previous
        ? ` from ${lease.previous} (${lease.previousExpiredMs !== null && lease.previousExpiredMs > 0 ? `its lease expired ${(lease.previousExpiredMs / 1000).toFixed(1)} s ago` : "its connection closed"})`
        : "";
      this.opts.log(`indexer   this node holds the indexer seat${from}: the service reads this node's index${this.schema ? ` ("${this.schema}")` : ""}`);
      this.setState("active");
      await this.follow();
    } catch {
      // The database did not answer: look again at the next tick, on a new connection.
      this.dropConnection();
    }
  }

  /** Takes an instance slot if this node has none (its schema), then starts its Ponder there. */
  private async beginStart(): Promise<void> {
    if (!(await this.claimSlot())) return;
    const schema = this.schema!;
    try {
      if (await legacyIndexPresent(this.slotConn!.sql)) {
        // An older build's index: moved to our schema once the seat is ours (its writer stops when it loses the seat).
        if (!this.holding) {
          if (!this.legacyWaiting) this.opts.log(`indexer   schema "indexer" holds an index of an older build: this node moves it to "${schema}" once it holds the seat`);
          this.legacyWaiting = true;
          return;
        }
        const how = await takeLegacyIndex(this.conn!.sql, schema);
        this.opts.log(`indexer   the older build's index in schema "indexer" ${how === "renamed" ? `moved to "${schema}" (resumed there)` : `dropped ("${schema}" has its own)`}`);
      }
      this.legacyWaiting = false;
    } catch (e) {
      this.opts.log(`indexer   could not look for an older build's index (${describeError(e)}); trying again`);
      return;
    }
    const abort = (this.startAbort = new AbortController());
    this.starting = this.startPonder(schema, abort.signal).finally(() => {
      this.starting = undefined;
      if (this.startAbort === abort) this.startAbort = undefined;
    });
  }

  /** The lowest free instance slot, held by its advisory lock on a connection of its own. */
  private async claimSlot(): Promise<boolean> {
    if (this.slotConn && this.slot !== undefined) return true;
    const conn = connect(this.opts.databaseUrl, {
      max: 1,
      keepConnections: true,
      onConnectionClosed: () => {
        if (this.slotConn === conn) this.loseSlot();
      },
    });
    try {
      for (let n = 1; n <= MAX_SLOTS; n++) {
        const got = decodeFirst(Got, await conn.sql`select pg_try_advisory_lock(${(SLOT_LOCK_BASE + BigInt(n)).toString()}::bigint) as got`)?.got;
        if (got) {
          this.slotConn = conn;
          this.slot = n;
          return true;
        }
      }
    } catch {
      // The database did not answer: again at the next tick.
      void conn.close().catch(() => {});
      return false;
    }
    void conn.close().catch(() => {});
    this.giveUp(new Error(`every indexer instance slot (1–${MAX_SLOTS}) is another live node's: at most ${MAX_SLOTS} indexer nodes per database`));
    return false;
  }

  /** The slot's connection closed (its lock gone): this node's schema may be another's now. */
  private loseSlot(): void {
    const schema = this.schema;
    this.slotConn = undefined;
    this.slot = undefined;
    this.opts.log(`indexer   the slot's database connection closed: stopping this node's indexer (schema "${schema}" may be another node's now)`);
    this.fence("this node's index stopped");
    this.startAbort?.abort();
    this.indexer?.kill();
    this.indexer = undefined;
    this.notBefore = performance.now() + TICK_MS;
  }

  private async startPonder(schema: string, signal: AbortSignal): Promise<void> {
    let indexer: IndexerProcess;
    try {
      indexer = await this.oneStartAtATime(signal, () => this.opts.startIndexer(schema, signal));
    } catch (err) {
      // Aborted: the slot was lost or the node is stopping; nothing to give up.
      if (!signal.aborted) this.giveUp(err);
      return;
    }
    if (signal.aborted || this.stopped || this.schema !== schema) {
      indexer.kill();
      return;
    }
    this.indexer = indexer;
    this.failures = 0;
    void indexer.exited.then((code) => {
      if (indexer.stopped || this.indexer !== indexer) return;
      this.giveUp(new Error(`the indexer exited by itself (code ${code}):\n${indexer.recentLogs().slice(-20).join("\n")}`));
    });
  }

  /** Runs `start` holding START_LOCK_KEY on the slot's connection (looked for every 200 ms: a start may take longer than a statement may). */
  private async oneStartAtATime<T>(signal: AbortSignal, start: () => Promise<T>): Promise<T> {
    const conn = this.slotConn;
    if (!conn) throw new Error("no slot");
    for (;;) {
      signal.throwIfAborted();
      if (decodeFirst(Got, await conn.sql`select pg_try_advisory_lock(${START_LOCK_KEY.toString()}::bigint) as got`)?.got) break;
      await Bun.sleep(200);
    }
    try {
      return await start();
    } finally {
      // Its connection gone, the lock went with it.
      if (this.slotConn === conn) await conn.sql`select pg_advisory_unlock(${START_LOCK_KEY.toString()}::bigint)`.catch(() => {});
    }
  }

  /** Ponder failed: the seat goes back at once if held (another node's index moves), ours again after a pause. */
  private giveUp(err: unknown): void {
    this.failures++;
    this.lastFailure = err;
    this.notBefore = performance.now() + Math.min(60_000, RETRY_MS * 2 ** (this.failures - 1));
    this.indexer = undefined;
    if (this.holding) {
      this.holding = false;
      const conn = this.conn;
      this.conn = undefined;
      void (conn ? releaseLease(conn.sql, INDEXER_LEASE, this.opts.nodeId).catch(() => {}).finally(() => conn.close().catch(() => {})) : undefined);
    }
    this.setState("standby");
    this.opts.onFailure?.(err);
  }

  /** Stops following at once: the seat may be (or soon be) another node's. This node's Ponder goes on with its own schema. */
  private fence(why: string): void {
    if (!this.holding) return;
    this.holding = false;
    this.opts.log(`indexer   ${why}: this node gives up the indexer seat (its index goes on, as a standby's)`);
    this.dropConnection();
    this.setState("standby");
  }

  /** Closing the seat's connection lets its lock go. */
  private dropConnection(): void {
    const conn = this.conn;
    this.conn = undefined;
    void conn?.close().catch(() => {});
  }

  /** A clean stop: the lease and the lock first (a standby takes over at once), then Ponder (its lock released), then the slot. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    while (this.inFlight) await Bun.sleep(10);
    const conn = this.conn;
    this.conn = undefined;
    if (conn && this.holding) await releaseLease(conn.sql, INDEXER_LEASE, this.opts.nodeId).catch(() => {});
    this.holding = false;
    await conn?.close().catch(() => {});
    // A start under way stops where it is (what it spawned is killed): this node is leaving.
    this.startAbort?.abort();
    await this.starting;
    const indexer = this.indexer;
    this.indexer = undefined;
    await indexer?.stop();
    const slotConn = this.slotConn;
    this.slotConn = undefined;
    this.slot = undefined;
    await slotConn?.close().catch(() => {});
  }
}
