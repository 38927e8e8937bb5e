/**
 * The retry schedule, pure. A delivery is tried at once; after the n-th failed attempt
 * it waits `schedule[n-1]` (± JITTER), and after the last entry it is given up. The
 * default spans about three days (docs/webhooks.md, "Delivery, retries and order", has the table). Jitter spreads the
 * retries of many deliveries that failed together (an endpoint that was down) so they do
 * not all come back in the same second.
 */
export const DEFAULT_RETRY_SCHEDULE = "5s,1m,5m,30m,1h,3h,6h,12h,24h,24h";
export const JITTER = 0.2;

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "5s,1m,2h" → [5000, 60000, 7200000]; undefined when any part is not a duration (ms, s, m, h, d). */
export function parseSchedule(text: string): number[] | undefined {
  const parts = text.split(",").map((p) => p.trim());
  const out: number[] = [];
  for (const p of parts) {
    const m = /^([0-9]{1,6})(ms|s|m|h|d)$/.exec(p);
    if (!m) return undefined;
    const ms = Number(m[1]) * UNIT_MS[m[2]!]!;
    if (ms <= 0 || ms > 7 * 86_400_000) return undefined;
    out.push(ms);
  }
  return out.length > 0 && out.length <= 30 ? out : undefined;
}

/** Attempts a delivery gets in all: the first plus one per schedule entry. */
export const maxAttempts = (schedule: readonly number[]) => schedule.length + 1;

/**
 * Milliseconds to wait after failed attempt number `attempt` (1-based), or undefined
 * when that was the last one. `random` in [0, 1) picks the jitter.
 */
export function retryDelayMs(schedule: readonly number[], attempt: number, random: number = Math.random()): number | undefined {
  const base = schedule[attempt - 1];
  if (base === undefined) return undefined;
  return Math.round(base * (1 - JITTER + 2 * JITTER * random));
}

/** The schedule's total span without jitter, from the first attempt to the last. */
export const scheduleSpanMs = (schedule: readonly number[]) => schedule.reduce((a, b) => a + b, 0);

/** "5 s", "1 min", "3 h" for the docs. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${ms / 1000} s`;
  if (ms < 3_600_000) return `${ms / 60_000} min`;
  return `${ms / 3_600_000} h`;
}
