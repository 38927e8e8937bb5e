/**
 * Every failure of the client is a PaysessionError. An answer of the API in its error shape keeps
 * its fields (`type`, `code`, `param`, `requestId`); a network failure has `type` "connection_error"
 * and no status.
 */
export class PaysessionError extends Error {
  override readonly name = "PaysessionError";
  constructor(
    message: string,
    /** "invalid_request_error", "authentication_error", …, or "connection_error". */
    readonly type: string,
    /** A code from the API's error catalogue (e.g. "amount_invalid"), or "connection_failed". */
    readonly code: string,
    /** The HTTP status; undefined when no answer came. */
    readonly status?: number,
    /** The request parameter the error is about. */
    readonly param?: string,
    /** Quote it to the operator: their logs carry it. */
    readonly requestId?: string,
  ) {
    super(message);
  }
}
