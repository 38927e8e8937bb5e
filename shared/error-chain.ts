/**
 * What kind of failure an error is, wherever on its chain the telling part sits. Errors arrive
 * wrapped: drizzle throws a `DrizzleQueryError` whose `cause` is postgres.js's `PostgresError`
 * (the SQLSTATE, such as 57014 for a statement timeout, is on the cause, not on the wrapper);
 * Node's connection errors may come as an `AggregateError` of one per address; wallets put the
 * real error in `data.originalError` of an internal one (-32603). A check that reads only the
 * top-level `code` misses all of them — a statement timeout through drizzle was answered 500
 * instead of 503. So every check of an error's kind goes through here, and never reads `.code`
 * or tests `instanceof` on the thrown value alone.
 *
 *   hasErrorCode(e, "40P01", "40001")        a deadlock or a serialization failure, at any depth
 *   findErrorCode(e, (c) => c.startsWith("08"))   the first code that matches, or undefined
 *   findInChain(e, (x) => x instanceof ApiError)  the first link that is one, or undefined
 *
 * Pure, imports nothing: the API, the indexer's launcher and the checkout's browser code use it.
 */

/** Links followed per error, at most (a chain that loops, or one absurdly deep, ends here). */
const MAX_LINKS = 32;

/**
 * The error and everything it wraps, outermost first: `cause`, an AggregateError's `errors`,
 * and a wallet's `data.originalError`. Each link once (a cause that points back is not followed).
 */
export function errorChain(err: unknown): unknown[] {
  const out: unknown[] = [];
  const seen = new Set<unknown>();
  const queue: unknown[] = [err];
  while (queue.length > 0 && out.length < MAX_LINKS) {
    const e = queue.shift();
    if (e === undefined || e === null || seen.has(e)) continue;
    seen.add(e);
    out.push(e);
    if (typeof e !== "object") continue;
    const link = e as { cause?: unknown; errors?: unknown; data?: { originalError?: unknown } | null };
    queue.push(link.cause);
    if (Array.isArray(link.errors)) queue.push(...link.errors);
    if (typeof link.data === "object" && link.data !== null) queue.push(link.data.originalError);
  }
  return out;
}

/** Every `code` on the chain (SQLSTATEs and Node's codes are strings; wallets' are numbers), outermost first. */
export function errorCodes(err: unknown): (string | number)[] {
  const codes: (string | number)[] = [];
  for (const e of errorChain(err)) {
    const code = typeof e === "object" ? (e as { code?: unknown }).code : undefined;
    if (typeof code === "string" || typeof code === "number") codes.push(code);
  }
  return codes;
}

/** The first string code on the chain that `accept` takes, or undefined. */
export function findErrorCode(err: unknown, accept: (code: string) => boolean): string | undefined {
  for (const c of errorCodes(err)) if (typeof c === "string" && accept(c)) return c;
  return undefined;
}

/** Whether any link of the chain has one of these codes. */
export function hasErrorCode(err: unknown, ...codes: (string | number)[]): boolean {
  return errorCodes(err).some((c) => codes.includes(c));
}

/** The first link of the chain that `is` accepts (an `instanceof` check, typically), or undefined. */
export function findInChain<T>(err: unknown, is: (e: unknown) => e is T): T | undefined {
  for (const e of errorChain(err)) if (is(e)) return e;
  return undefined;
}
