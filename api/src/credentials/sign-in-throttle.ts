/**
 * Sign-in throttling, decided from the failed sign-ins recorded in the security history
 * (durable: a restart forgets nothing). Pure: the counts come from audit.ts.
 *
 * Per email: 5 failures in 15 minutes are free, then each further try waits 30 s doubled per
 * failure, at most 15 min, counted from the last failure. Per address: the same from 20
 * failures, so one machine cannot try many emails fast either.
 */
export const WINDOW_SECONDS = 15 * 60;
export const FREE_FAILURES_PER_EMAIL = 5;
export const FREE_FAILURES_PER_IP = 20;
const FIRST_WAIT_SECONDS = 30;
const MAX_WAIT_SECONDS = 15 * 60;

export interface FailureCount {
  /** Failures within the window (since the last success, for an email). */
  count: number;
  lastAt: Date | null;
}

/** Seconds to wait after `count` failures with `free` of them allowed; 0: may try now. */
export function waitAfter(count: number, free: number): number {
  if (count < free) return 0;
  return Math.min(MAX_WAIT_SECONDS, FIRST_WAIT_SECONDS * 2 ** Math.min(count - free, 20));
}

/** Seconds left before another sign-in may be tried (0: now). */
export function retryAfterSeconds(byEmail: FailureCount, byIp: FailureCount, now: Date): number {
  const left = (f: FailureCount, free: number) => {
    const wait = waitAfter(f.count, free);
    if (wait === 0 || !f.lastAt) return 0;
    return Math.max(0, Math.ceil((f.lastAt.getTime() + wait * 1000 - now.getTime()) / 1000));
  };
  return Math.max(left(byEmail, FREE_FAILURES_PER_EMAIL), left(byIp, FREE_FAILURES_PER_IP));
}
