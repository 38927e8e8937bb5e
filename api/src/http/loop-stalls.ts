/**
 * When this process's event loop stalled (a CPU hog beside it, a long pause of the runtime, the
 * host starving it), as the request limiter needs to know it (rate-limit.ts). During a stall the
 * requests that arrive wait in the socket; the limiter sees them only afterwards, all at once, and
 * would judge them as if they had just come — a token bucket checked after a 2-second gap refills
 * at most to its burst, so the rate owed to the requests that waited through the stall is thrown
 * away. Knowing the stall lets the limiter give them what they would have had, had they been
 * looked at on arrival (docs/decisions.md, "A stalled event loop owes its backlog the rate of the
 * stall").
 *
 * A timer ticks every TICK_MS; a tick that comes more than STALL_AFTER_MS after the one before
 * marks the time between as a stall (a stall still under way when a request asks is counted up to
 * now). A stall's time is owed to requests only during its catch-up — as long again as the stall,
 * right after it: the backlog is what came during the stall, and a key that sent nothing then gets
 * nothing more later. Of a stall longer than the registry's patience, only the part before the
 * others stopped counting this process is owed. Pure bookkeeping on the clock it is given;
 * `watchLoopStalls` runs the timer.
 */

export const TICK_MS = 10;
/** A tick this late means requests waited: the loop did not run for that long. */
export const STALL_AFTER_MS = 30;

const NOTHING_OWED = Object.freeze({ ms: 0, until: 0 });

export interface Stall {
  from: number;
  to: number;
}

export class LoopStalls {
  private lastTick: number;
  /** Stalls whose catch-up has not ended at the last tick, oldest first. */
  private readonly live: (Stall & { owedEnd: number; catchUpEnd: number })[] = [];

  /**
   * `maxOwedMs`: how much of one stall is owed at most. A process silent for long drops out of
   * the other processes' count (nodes/registry.ts ALIVE_MS) and they take its share: the time
   * after that is theirs, not this process's backlog's.
   */
  constructor(
    now: number,
    private readonly maxOwedMs = Number.POSITIVE_INFINITY,
  ) {
    this.lastTick = now;
  }

  /** The timer ran at `now`. */
  tick(now: number): void {
    if (now - this.lastTick > STALL_AFTER_MS) this.live.push(this.stall(this.lastTick, now));
    this.lastTick = Math.max(this.lastTick, now);
    // A catch-up over can matter to no later question.
    while (this.live.length > 0 && this.live[0]!.catchUpEnd < now) this.live.shift();
  }

  /**
   * How many milliseconds of [from, now] the loop was stalled, counting only stalls whose catch-up
   * has not ended by `now`, and until when the latest of them may still be caught up on.
   */
  owedWithin(from: number, now: number): { readonly ms: number; readonly until: number } {
    const stalledNow = now - this.lastTick > STALL_AFTER_MS;
    if (this.live.length === 0 && !stalledNow) return NOTHING_OWED;
    const owed = { ms: 0, until: 0 };
    for (const s of this.live) add(owed, s, from, now);
    // Still stalled as far as the timer knows: this request is part of the backlog.
    if (stalledNow) add(owed, this.stall(this.lastTick, now), from, now);
    return owed;
  }

  private stall(from: number, to: number) {
    const owedEnd = Math.min(to, from + this.maxOwedMs);
    return { from, to, owedEnd, catchUpEnd: to + (owedEnd - from) };
  }
}

function add(owed: { ms: number; until: number }, s: { from: number; owedEnd: number; catchUpEnd: number }, from: number, now: number): void {
  if (s.catchUpEnd < now) return;
  const overlap = Math.min(s.owedEnd, now) - Math.max(s.from, from);
  if (overlap <= 0) return;
  owed.ms += overlap;
  owed.until = Math.max(owed.until, s.catchUpEnd);
}

/** A LoopStalls fed by a timer on this event loop; `stop` ends the timer. */
export function watchLoopStalls(maxOwedMs?: number): { stalls: LoopStalls; stop(): void } {
  const stalls = new LoopStalls(Date.now(), maxOwedMs);
  const timer = setInterval(() => stalls.tick(Date.now()), TICK_MS);
  timer.unref?.();
  return { stalls, stop: () => clearInterval(timer) };
}
