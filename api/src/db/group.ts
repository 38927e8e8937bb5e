/**
 * Group commit: many callers' small statements sent to Postgres as one.
 *
 * Under load most of a small write's cost is per statement and per commit, not per row (a
 * round trip each way, parse/bind/execute, executor start-up, foreign-key checks set up, a WAL
 * flush): bench/api-create.ts measured a create as ~3.5× a bare single-row insert, and ten
 * creates in one statement at ~3× the rate of ten statements. So hot paths hand their work to
 * a `Group`, which sends everything that waits as one batch.
 *
 * Natural batching, no added wait: a batch leaves as soon as fewer than `maxInFlight` batches
 * are out, so an idle server sends each item alone, at once; only while batches are out do
 * newcomers queue, and the next batch takes all of them (up to `maxBatch`). Batch size follows
 * load by itself.
 *
 * The request deadline (deadline.ts) holds per item: an item whose request was already answered
 * 503 is left out of its batch (rejected with DeadlineExceeded), and each item of a batch that
 * writes is marked `committing` in its own request scope while its batch is on the wire, so the
 * HTTP layer waits for the outcome instead of answering 503 over a write that may commit. The
 * batch itself runs outside every request's scope: one request's deadline must not fence
 * another's write.
 */
import { DeadlineExceeded, requestScope, type RequestScope } from "./deadline.ts";
import { findErrorCode } from "../../../shared/error-chain.ts";

/**
 * SQLSTATE classes 22 (data exception: a value Postgres cannot store) and 23 (integrity
 * constraint): a batch refused for its content, not because the database is away. Groups that
 * write retry such a batch one item at a time, so that only the item at fault fails.
 */
export const refusedForContent = (e: unknown): boolean => findErrorCode(e, (code) => /^2[23][0-9A-Z]{3}$/.test(code)) !== undefined;

export interface Member<I, O> {
  item: I;
  resolve(value: O): void;
  reject(error: unknown): void;
}

export interface GroupOptions {
  /** Most items in one batch. */
  maxBatch: number;
  /** Most batches out at once (each holds one pool connection while out). */
  maxInFlight: number;
  /**
   * Whether a batch writes: its members are fenced by their request deadline (left out when
   * expired, marked committing while out). Reads are not fenced.
   */
  writes: boolean;
}

interface Queued<I, O> extends Member<I, O> {
  scope: RequestScope | undefined;
}

export class Group<I, O> {
  /** Batches sent and items in them since start (for tests and /metrics: items ÷ batches is the grouping). */
  readonly stats = { batches: 0, items: 0 };
  private queue: Queued<I, O>[] = [];
  private inFlight = 0;
  private scheduled = false;

  /**
   * `send` runs one batch and settles every member (a member it leaves unsettled is rejected
   * with the batch's error, or left hanging if it resolves — so settle them all).
   */
  constructor(
    private readonly send: (batch: Member<I, O>[]) => Promise<void>,
    private readonly options: GroupOptions,
  ) {}

  submit(item: I): Promise<O> {
    const scope = requestScope.getStore();
    if (this.options.writes && scope?.expired) return Promise.reject(new DeadlineExceeded());
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject, scope });
      // Items submitted in the same turn of the event loop leave together.
      if (!this.scheduled) {
        this.scheduled = true;
        queueMicrotask(() => {
          this.scheduled = false;
          this.flush();
        });
      }
    });
  }

  private flush(): void {
    while (this.inFlight < this.options.maxInFlight && this.queue.length > 0) {
      const taken = this.queue.splice(0, this.options.maxBatch);
      const batch = this.options.writes ? this.fence(taken) : taken;
      if (batch.length === 0) continue;
      this.inFlight++;
      this.stats.batches++;
      this.stats.items += batch.length;
      // Members are answered only after the next batch has left: answering them (their handlers
      // resume, build and write responses) holds the event loop for a while, and the items queued
      // meanwhile should already be on their way to Postgres. A settlement is held until this
      // batch's send is over (then the next batch is flushed first), or until the next turn of
      // the event loop if send settles members along the way (a one-by-one retry must answer each
      // as it is written, not with the slowest) or after it ended.
      const held: (() => void)[] = [];
      let drainScheduled = false;
      const drain = () => {
        drainScheduled = false;
        for (const f of held.splice(0)) f();
      };
      const hold = (f: () => void) => {
        held.push(f);
        if (!drainScheduled) {
          drainScheduled = true;
          setImmediate(drain);
        }
      };
      const members: Member<I, O>[] = batch.map((m) => ({
        item: m.item,
        resolve: (v) => hold(() => m.resolve(v)),
        reject: (e) => hold(() => m.reject(e)),
      }));
      requestScope
        .exit(() => this.send(members))
        .catch((error: unknown) => {
          for (const m of batch) hold(() => m.reject(error));
        })
        .finally(() => {
          this.inFlight--;
          try {
            this.flush();
          } finally {
            drain();
          }
        });
    }
  }

  /** Leaves out members whose request was answered already; marks the rest committing until settled. */
  private fence(taken: Queued<I, O>[]): Member<I, O>[] {
    const out: Member<I, O>[] = [];
    for (const m of taken) {
      const scope = m.scope;
      if (!scope) {
        out.push(m);
        continue;
      }
      if (scope.expired) {
        m.reject(new DeadlineExceeded());
        continue;
      }
      scope.committing++;
      let done = false;
      const release = () => {
        if (done) return;
        done = true;
        scope.committing--;
        if (scope.committing === 0) scope.settled?.();
      };
      out.push({
        item: m.item,
        resolve: (v) => {
          release();
          m.resolve(v);
        },
        reject: (e) => {
          release();
          m.reject(e);
        },
      });
    }
    return out;
  }
}
