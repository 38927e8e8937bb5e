/**
 * The request deadline, and the one promise it backs: **a request answered 503 because its
 * deadline passed committed nothing** — except in the one case nobody can know, where the
 * database went away during the COMMIT itself; a create sent with an Idempotency-Key then
 * replays its first answer (or creates once) when retried.
 *
 * How: every request runs inside `requestScope` (AsyncLocalStorage). `connect()` (client.ts)
 * wraps `sql.begin`, so every transaction started on behalf of a request checks, after its
 * last statement and before COMMIT, whether the deadline has passed: if it has, the
 * transaction rolls back (a `REQUEST_DEADLINE` error); if not, the scope is marked
 * `committing` — synchronously, so the deadline timer sees it — and the HTTP layer then waits
 * for the commit's outcome (a bounded grace) instead of answering 503 over it.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { BaseError } from "../../../shared/base-error.ts";

export interface RequestScope {
  /**
   * The deadline passed: nothing new may start or commit any more. Only a COMMIT already on the
   * wire (`committing`) is waited for, within a grace, and decides the answer; else 503.
   */
  expired: boolean;
  /** Transactions of this request between their fence and the end of their COMMIT. */
  committing: number;
  /** Resolves when `committing` drops to 0. */
  settled?: () => void;
}

export const requestScope = new AsyncLocalStorage<RequestScope>();

export class DeadlineExceeded extends BaseError {
  override name = "DeadlineExceeded";
  readonly code = "REQUEST_DEADLINE";
  constructor() {
    super("the request's deadline passed before its transaction could commit");
  }
}
