/**
 * Every failure of the client is a PaysessionError. An answer of the API in its error shape keeps
 * its fields (`type`, `code`, `param`, `requestId`); a network failure has `type` "connection_error"
 * and no status.
 */
import type { ApiErrorCode, ClientErrorCode } from "./types.ts";

/**
 * A code of the API's catalogue or of the client's own; open (`string & {}`) so that a code a
 * newer service adds still types, while editors offer the known ones.
 */
export type PaysessionErrorCode = ApiErrorCode | ClientErrorCode | (string & {});

export class PaysessionError extends Error {
  override readonly name = "PaysessionError";
  constructor(
    message: string,
    /** "invalid_request_error", "authentication_error", …, or "connection_error". */
    readonly type: string,
    /**
     * A code from the API's error catalogue (e.g. "amount_invalid"; "api_key_scope_missing" with
     * status 403 when a restricted key lacks the operation's scope, named in the message), or one
     * of the client's own ("connection_failed", …).
     */
    readonly code: PaysessionErrorCode,
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
