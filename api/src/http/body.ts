/**
 * Reading a JSON request body ourselves, so every way a body can be wrong gets its own
 * catalogue error: not JSON → 415, over 64 KB → 413 (checked on the declared length and
 * again while reading, for chunked bodies), not parseable → 400. An empty body is `{}`,
 * so `POST …/cancel` works with no body at all.
 *
 * The cap is also the HTTP front's (withinBodyCap, serve.ts), for every route that takes a body.
 *
 * A 413 is sent only once the body has been read to its end — dropped as it comes, never kept —
 * when its end is within DRAIN_BYTES and arrives within the drain's time: a server that answers
 * while the client is still sending, and then closes the connection (the client asked for
 * `Connection: close`, or speaks HTTP/1.0), closes it with unread data, so the kernel sends a
 * reset, and a client that reads its answer only once it has sent everything (most do) finds the
 * answer thrown away with the reset: no answer at all. With the body read, the close is clean.
 * A body past the bound, one that stalls, or one the client has not sent yet (`Expect:
 * 100-continue`) is answered at once; on a kept-alive connection Bun then reads and drops the
 * rest itself, so the answer still arrives.
 */
import { ApiError } from "../errors.ts";
import { findInChain } from "../../../shared/error-chain.ts";

export const MAX_BODY_BYTES = 64 * 1024;

/** How much of an over-cap body is read (and dropped) before its 413: 16 times the cap. */
export const DRAIN_BYTES = 1024 * 1024;
/** How long the drain may take at most (less when the request's deadline is shorter: withinBodyCap). */
const DRAIN_MS = 2000;

/** The methods whose routes read a body; other methods' bodies are never read (Bun discards them). */
const BODY_METHODS = new Set(["POST", "PUT", "PATCH"]);

/**
 * The HTTP front's body cap, before any route (serve.ts). Bun's own limit cannot be ours: past it
 * Bun answers a bare 413 without our error shape and closes the connection while the client is
 * still sending, so most clients see no answer at all. Bun's limit is lifted instead, and here
 * a body declared over 64 KB is refused with 413 body_too_large without a byte of it kept (read to
 * its end and dropped first when that end is within DRAIN_BYTES, see the top of this file); a body
 * without a declared length (chunked) is read here, at most 64 KB of it kept, and handed on with
 * its length declared. So no route, including the dashboard's forms, ever buffers more than the
 * cap. `drainMs`: the most the drain before a 413 may take. Throws body_too_large, or
 * body_malformed for a body that cannot be read (its chunked framing broken, the client gone).
 */
export async function withinBodyCap(request: Request, opts: { drainMs?: number } = {}): Promise<Request> {
  if (!BODY_METHODS.has(request.method)) return request;
  const drainMs = Math.min(DRAIN_MS, opts.drainMs ?? DRAIN_MS);
  const declared = declaredLength(request.headers);
  if (declared !== undefined) {
    if (declared > MAX_BODY_BYTES) {
      // Read to its end first when the end is near enough (see the top of this file).
      if (declared <= DRAIN_BYTES && request.body && !awaitsContinue(request)) await drain(request.body.getReader(), 0, drainMs);
      throw new ApiError("body_too_large");
    }
    return request;
  }
  if (!request.body) return request;
  let bytes: Uint8Array;
  try {
    bytes = await readCapped(request, undefined, drainMs);
  } catch (e) {
    const refusal = findInChain(e, (x) => x instanceof ApiError);
    if (refusal) throw refusal;
    throw new ApiError("body_malformed", "The request body could not be read.", undefined, undefined, { cause: e });
  }
  const headers = new Headers(request.headers);
  headers.delete("transfer-encoding");
  headers.set("content-length", String(bytes.byteLength));
  return new Request(request.url, { method: request.method, headers, body: bytes as Uint8Array<ArrayBuffer>, signal: request.signal });
}

export async function readJsonBody(request: Request): Promise<unknown> {
  const declared = declaredLength(request.headers);
  if (declared !== undefined && declared > MAX_BODY_BYTES) throw new ApiError("body_too_large");
  const bytes = await readCapped(request, declared);
  if (bytes.length === 0) return {};
  const type = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/json") throw new ApiError("content_type_unsupported");
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new ApiError("body_malformed", "The request body is not valid UTF-8.");
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError("body_malformed");
  }
}

/**
 * Content-Length as a count, or undefined: absent, or not a plain count — repeated headers
 * arrive joined ("5000000, 5000000"), and such a body is read through the capped reader.
 */
function declaredLength(headers: Headers): number | undefined {
  const value = headers.get("content-length");
  return value !== null && /^\d+$/.test(value) ? Number(value) : undefined;
}

/** The client waits for a 100 Continue before it sends the body: reading it would ask for it. */
const awaitsContinue = (request: Request) => (request.headers.get("expect") ?? "").toLowerCase().includes("100-continue");

/**
 * Reads and drops what is left of a body, `read` bytes of it already read, until its end, or
 * until DRAIN_BYTES in all, or `ms` passed, or the client stops; never throws. Then lets go of it.
 */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>, read: number, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((r) => (timer = setTimeout(() => r("late"), ms)));
  let ended = false;
  try {
    while (read <= DRAIN_BYTES) {
      const next = await Promise.race([reader.read(), late]);
      if (next === "late") break;
      if (next.done) {
        ended = true;
        break;
      }
      read += next.value.byteLength;
    }
  } catch {
    // The client went away, or broke its framing: nothing left to read.
  } finally {
    clearTimeout(timer);
    if (!ended) await reader.cancel().catch(() => {});
  }
}

/** `declared`: declaredLength, already checked to be within the cap. */
async function readCapped(request: Request, declared: number | undefined, drainMs = DRAIN_MS): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0);
  // A declared length bounds the body: HTTP/1.1 framing ends it there. Read it whole, in one
  // wait instead of one per chunk plus one for the end (under load each wait is a turn of a busy
  // event loop). Without one (chunked), the capped reader below.
  if (declared !== undefined) {
    const bytes = new Uint8Array(await request.arrayBuffer());
    if (bytes.byteLength > MAX_BODY_BYTES) throw new ApiError("body_too_large");
    return bytes;
  }
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await drain(reader, size, drainMs);
      throw new ApiError("body_too_large");
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  return out;
}
