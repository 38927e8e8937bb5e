/**
 * Database outages, seen from a loop or a request.
 *
 *   - `isDatabaseUnavailable(err)`: the error means "the database is not answering" (refused,
 *     reset, closed, connect timeout, shutting down, starting up, too many connections, a
 *     statement or request deadline) rather than "this statement is wrong". Requests answer
 *     those with 503 service_unavailable + Retry-After; loops back off. The code is looked for
 *     along the error's cause chain (shared/error-chain.ts): drizzle throws a DrizzleQueryError
 *     whose PostgresError, with the SQLSTATE, is its `cause`.
 *   - `Outage`: one per loop. `failed(err)` logs the first failure of an outage (once, not per
 *     attempt) and returns the pause before the next attempt (doubling, 250 ms → 10 s, ±20 %);
 *     `ok()` logs once that the database is back and resets the pause.
 *
 *     const outage = new Outage("session runner", log);
 *     try { await work(); outage.ok(); }
 *     catch (e) { const wait = outage.failed(e); if (wait === undefined) log(...); else await Bun.sleep(wait); }
 */

import { findErrorCode, hasErrorCode } from "../../../shared/error-chain.ts";

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
  "55P03", // lock_not_available: a lock not had within lock_timeout, as a statement timeout
  "REQUEST_DEADLINE",
]);

/** The code on the error's chain that says the database is away, or undefined. */
export function unavailableCode(err: unknown): string | undefined {
  return findErrorCode(err, (code) => CONNECTION_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code));
}

export function isDatabaseUnavailable(err: unknown): boolean {
  return unavailableCode(err) !== undefined;
}

/**
 * A deadlock (40P01) or serialization failure (40001): the transaction was rolled back whole and
 * the same work, tried again, goes through. Not an outage (a loop retries it at once, without
 * backing off); a request that loses one answers 503 + Retry-After as for an outage.
 */
export function isRetryableConflict(err: unknown): boolean {
  return hasErrorCode(err, "40P01", "40001");
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
    const code = unavailableCode(err);
    if (code === undefined) return undefined;
    if (this.since === undefined) {
      this.since = Date.now();
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
