/**
 * Database outages, seen from a loop or a request.
 *
 *   - `isDatabaseUnavailable(err)`: the error means "the database is not answering" (refused,
 *     reset, closed, connect timeout, shutting down, starting up, too many connections, a
 *     statement or request deadline) rather than "this statement is wrong". Requests answer
 *     those with 503 service_unavailable + Retry-After; loops back off.
 *   - `Outage`: one per loop. `failed(err)` logs the first failure of an outage (once, not per
 *     attempt) and returns the pause before the next attempt (doubling, 250 ms → 10 s, ±20 %);
 *     `ok()` logs once that the database is back and resets the pause.
 *
 *     const outage = new Outage("session runner", log);
 *     try { await work(); outage.ok(); }
 *     catch (e) { const wait = outage.failed(e); if (wait === undefined) log(...); else await Bun.sleep(wait); }
 */

/** postgres.js connection errors, Node socket errors, and SQLSTATE classes 08 / 57P0x / 53300. */
const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  "ENOTFOUND",
  "CONNECTION_CLOSED",
  "CONNECTION_DESTROYED",
  "CONNECTION_ENDED",
  "CONNECT_TIMEOUT",
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now (starting up, recovering)
  "53300", // too_many_connections
  "57014", // query_canceled: our statement_timeout or request deadline
  "25P03", // idle_in_transaction_session_timeout
  "REQUEST_DEADLINE",
]);

/** Walks the error's `cause` chain too: drizzle wraps postgres.js's error in a DrizzleQueryError. */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && (CONNECTION_CODES.has(code) || code.startsWith("08"))) return true;
  }
  return false;
}

export interface OutageOptions {
  /** First pause; doubled per failed attempt. Default 250 ms. */
  minDelayMs?: number;
  /** Longest pause. Default 10 s. */
  maxDelayMs?: number;
  random?: () => number;
}

export class Outage {
  private since: number | undefined;
  private attempts = 0;
  private readonly min: number;
  private readonly max: number;
  private readonly random: () => number;

  constructor(
    private readonly what: string,
    private readonly log: (line: string) => void,
    opts: OutageOptions = {},
  ) {
    this.min = opts.minDelayMs ?? 250;
    this.max = opts.maxDelayMs ?? 10_000;
    this.random = opts.random ?? Math.random;
  }

  /** True while the database is taken to be away (from the first failure to the next ok()). */
  get down(): boolean {
    return this.since !== undefined;
  }

  /**
   * After a failed attempt. Not an outage error: undefined (log it yourself, as before).
   * An outage error: the pause before the next attempt; the first one of an outage is logged.
   */
  failed(err: unknown): number | undefined {
    if (!isDatabaseUnavailable(err)) return undefined;
    if (this.since === undefined) {
      this.since = Date.now();
      const code = (err as { code?: string }).code;
      this.log(`${this.what}: database unavailable (${code}); backing off, retrying until it answers (logged once per outage)`);
    }
    const base = Math.min(this.max, this.min * 2 ** Math.min(this.attempts, 20));
    this.attempts++;
    return Math.round(base * (0.8 + 0.4 * this.random()));
  }

  /** After an attempt that reached the database. Logs the end of an outage once. */
  ok(): void {
    if (this.since === undefined) return;
    const seconds = ((Date.now() - this.since) / 1000).toFixed(1);
    this.since = undefined;
    this.attempts = 0;
    this.log(`${this.what}: database answers again (after ${seconds} s)`);
  }
}
