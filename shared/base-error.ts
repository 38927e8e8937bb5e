/**
 * The one base of our errors. Every error class of ours (ApiError, RowShapeMismatch,
 * ConfigError, …) extends it, so each keeps what it wraps and can be walked the same way:
 *
 *   - `message` is the short message, and nothing else. It is what the API answers (ApiError),
 *     what the dashboard shows and what a stored failure reason holds, so it never grows the
 *     details or the causes: those are printed by describeError (describe-error.ts) in logs.
 *   - `details`: what more there is to say, for the log only.
 *   - `cause`: the error this one wraps, kept whole (its code, its own cause), never reduced to a
 *     string. Pass it wherever an error is caught and another thrown in its place.
 *   - `walk(is)`: the first link of the chain (this one included) that `is` accepts, by the one
 *     walk of error-chain.ts; `walk()`: the innermost link.
 *
 * Pure, imports only error-chain.ts: the API, the indexer's launcher, the chain registry and
 * the checkout's browser code use it.
 */
import { errorChain, findInChain } from "./error-chain.ts";

export interface BaseErrorOptions {
  /** The error this one wraps. */
  cause?: unknown;
  /** More than the short message, for the log (describeError prints it; `message` does not hold it). */
  details?: string;
}

export class BaseError extends Error {
  override name = "BaseError";
  /** The same as `message`, under the name viem's errors give it (revert texts read it on either). */
  readonly shortMessage: string;
  readonly details: string | undefined;

  constructor(shortMessage: string, opts: BaseErrorOptions = {}) {
    // `cause` only when there is one: an own `cause: undefined` would read as a wrapped nothing.
    super(shortMessage, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.shortMessage = shortMessage;
    this.details = opts.details;
  }

  /** The innermost link of the chain (this error, when it wraps nothing). */
  walk(): unknown;
  /** The first link of the chain, this one included, that `is` accepts; undefined if none does. */
  walk<T>(is: (e: unknown) => e is T): T | undefined;
  walk<T>(is?: (e: unknown) => e is T): unknown {
    if (is) return findInChain(this, is);
    const chain = errorChain(this);
    return chain[chain.length - 1];
  }
}
