/**
 * When this process's event loop stalled (a CPU hog beside it, a long pause of the runtime, the
 * host starving it), as the request limiter needs to know it (rate-limit.ts). During a stall the
 * requests that arrive wait in the socket; the limiter sees them only afterwards, all at once, and
 * would judge them as if they had just come — a token bucket checked after a 2-second gap refills
 * at most to its burst, so the rate owed to the requests that waited through the stall is thrown
 * away. Knowing the stall lets the limiter give them what they would have had, had they been
 * looked at on arrival (docs/decisions.md, "The per-key limit").
 *
 * A timer ticks every TICK_MS; a tick that comes more than STALL_AFTER_MS after the one before
 * marks the time between as a stall (a stall still under way when a request asks is counted up to
 * now). A stall's time is owed to requests only during its catch-up — as long again as the stall,
 * right after it: the backlog is what came during the stall, and a key that sent nothing then gets
 * nothing more later. Of a stall longer than the registry's patience, only the part before the
 * others stopped counting this process is owed. Pure bookkeeping on the clock it is given; `watchLoopStalls` runs the timer.
 */

export const TICK_MS = 10;
/** A tick this late means requests waited: the loop did not run for that long. */
export const STALL_AFTER_MS = 30;
/** Stalls further back than this can no longer matter (no catch-up lasts as long). */
const KEEP_MS = 60_000;

export interface Stall {
  from: number;
  to: number;
}

export class LoopStalls {
  private lastTick: number;
  private readonly past: Stall[] = [];

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
    if (now - this.lastTick > STALL_AFTER_MS) this.past.push({ from: this.lastTick, to: now });
    this.lastTick = Math.max(this.lastTick, now);
    while (this.past.length > 0 && this.past[0]!.to < now - KEEP_MS) this.past.shift();
  }

  /**
   * How many milliseconds of [from, now] the loop was stalled, counting only stalls whose catch-up
   * has not ended by `now`, and until when the latest of them may still be caught up on.
   */
  owedWithin(from: number, now: number): { ms: number; until: number } {
    let ms = 0;
    let until = 0;
    const count = (s: Stall) => {
      const owedEnd = Math.min(s.to, s.from + this.maxOwedMs);
      const catchUpEnd = s.to + (owedEnd - s.from);
      if (catchUpEnd < now) return;
      const overlap = Math.min(owedEnd, now) - Math.max(s.from, from);
      if (overlap <= 0) return;
      ms += overlap;
      until = Math.max(until, catchUpEnd);
    };
    for (const s of this.past) count(s);
    // Still stalled as far as the timer knows: this request is part of the backlog.
    if (now - this.lastTick > STALL_AFTER_MS) count({ from: this.lastTick, to: now });
    return { ms, until };
  }
}

/** A LoopStalls fed by a timer on this event loop; `stop` ends the timer. */
export function watchLoopStalls(maxOwedMs?: number): { stalls: LoopStalls; stop(): void } {
  const stalls = new LoopStalls(Date.now(), maxOwedMs);
  const timer = setInterval(() => stalls.tick(Date.now()), TICK_MS);
  timer.unref?.();
  return { stalls, stop: () => clearInterval(timer) };
}
