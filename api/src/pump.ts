/**
 * The one loop of every background worker (session runner, sweeper, webhook worker): a pass
 * runs when woken (NOTIFY, an API write, a timer) and never twice at once; a wake during a pass
 * runs exactly one more pass after it; a pass says when it wants the next one (at most the poll
 * interval away: the due times live in the tables, the timer is only how often to look); a
 * failing pass is logged and retried after a pause that doubles while failures last (up to
 * 10 s) — logged once per run of failures, not once per attempt (an outage of the database or
 * an RPC is one line when it starts and one when it ends).
 * `stop()` waits for the pass under way and runs no other.
 */
import { describeError } from "../../shared/describe-error.ts";

/** Longest pause between two tries while passes keep failing. */
export const MAX_RETRY_MS = 10_000;

export interface PumpOptions {
  /** For the log lines. */
  name: string;
  /** Longest pause between two passes. */
  pollMs: number;
  /** Pause after a failed pass (default: pollMs). */
  retryMs?: number;
  log?: (line: string) => void;
}

/** A pass returns how many ms until it wants to run again (0: at once; undefined: the poll interval). */
export type Pass = () => Promise<number | undefined | void>;

export class Pump {
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The failure being repeated (its first line) and how many times, while passes fail. */
  private failing: { message: string; count: number; since: number } | undefined;

  constructor(
    private readonly pass: Pass,
    private readonly opts: PumpOptions,
  ) {}

  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.run().finally(() => {
      this.running = undefined;
      if (this.again && !this.stopped) this.wake();
    });
  }

  /** Stops waking; resolves once the pass under way (if any) has finished. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private async run(): Promise<void> {
    this.again = false; // wakes until now are served by this pass
    clearTimeout(this.timer);
    let next: number;
    try {
      const wanted = await this.pass();
      next = wanted ?? this.opts.pollMs;
      if (this.failing) {
        this.opts.log?.(`${this.opts.name}: working again after ${this.failing.count} failed pass(es) in ${Math.round((Date.now() - this.failing.since) / 1000)} s`);
        this.failing = undefined;
      }
    } catch (e) {
      // One line: each link of the chain by its first line (what the error wraps, too).
      const message = describeError(e, { firstLines: true, maxLength: 500 });
      if (!this.stopped && (!this.failing || this.failing.message !== message)) {
        this.opts.log?.(`${this.opts.name}: ${message}${this.failing ? "" : " (retried; logged again only if it changes)"}`);
      }
      this.failing = { message, count: (this.failing?.count ?? 0) + 1, since: this.failing?.since ?? Date.now() };
      // Backing off while it lasts: the pause doubles with each failure, up to MAX_RETRY_MS.
      const base = this.opts.retryMs ?? this.opts.pollMs;
      next = Math.min(base * 2 ** Math.min(this.failing.count - 1, 16), Math.max(base, MAX_RETRY_MS));
    }
    if (this.stopped) return;
    if (next <= 0) {
      this.again = true;
      return;
    }
    // A due time is never further than the poll interval; a failure's pause may be.
    this.timer = setTimeout(() => this.wake(), this.failing ? next : Math.min(next, this.opts.pollMs));
  }
}
