/**
 * TEST helper: one HTTP/1.1 request written byte for byte on a plain TCP socket, as an attacker
 * would (fetch cannot send repeated headers, a lying Content-Length or a hand-made chunked body),
 * and the answer read back. `answer` is undefined when the connection closed, or went quiet,
 * before a whole response arrived: the case a server must never produce.
 *
 * `sendFirst`: the client writes the whole request, in pieces as a network delivers it, before it
 * reads anything — as most HTTP clients do. A server that answers early and then closes the
 * connection with part of the body unread makes the kernel reset it, and such a client loses the
 * answer waiting in its receive buffer.
 */
import { connect } from "node:net";

export interface RawAnswer {
  status?: number;
  headers: Record<string, string>;
  /** The response body as text, and parsed when it is JSON. */
  text: string;
  json?: unknown;
  /** Why no whole answer arrived (closed, reset, timed out), when none did. */
  noAnswer?: string;
}

export interface RawOptions {
  /** Write everything (in pieces of `pieceBytes`, yielding between them) before reading. */
  sendFirst?: boolean;
  pieceBytes?: number;
}

/** `head` without the blank line that ends it; `body` is written after it as given (already framed). */
export function rawRequest(url: string, head: string, body: Uint8Array | string = "", timeoutMs = 5_000, opts: RawOptions = {}): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    let buf: Buffer = Buffer.alloc(0);
    let settled = false;
    const socket = connect({ host: hostname, port: Number(port) });
    const done = (why?: string) => {
      if (settled) return;
      const parsed = parse(buf);
      if (!parsed && !why) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(parsed ?? { headers: {}, text: buf.toString("latin1"), noAnswer: why });
    };
    const timer = setTimeout(() => done("no whole answer within the timeout"), timeoutMs);
    socket.on("data", (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      done();
    });
    socket.on("close", () => done("the connection closed"));
    // A reset while we still write (the server answered early and stopped reading) is not the
    // end: its answer may be in our receive buffer already. 'close' follows and decides.
    socket.on("error", () => {});
    if (!opts.sendFirst) {
      socket.write(`${head}\r\n\r\n`);
      socket.write(body);
      return;
    }
    socket.pause();
    void (async () => {
      const bytes = Buffer.concat([Buffer.from(`${head}\r\n\r\n`, "latin1"), Buffer.from(body)]);
      const piece = opts.pieceBytes ?? 16 * 1024;
      for (let i = 0; i < bytes.length && !socket.destroyed; i += piece) {
        socket.write(bytes.subarray(i, i + piece));
        await new Promise((r) => setImmediate(r));
      }
      socket.resume();
    })();
  });
}

/** A whole HTTP/1.1 response (its body framed by Content-Length), or undefined. */
function parse(buf: Buffer): RawAnswer | undefined {
  // Interim 100 Continue responses come before the real one.
  let start = 0;
  while (buf.subarray(start, start + 12).toString("latin1").startsWith("HTTP/1.1 100")) {
    const end = buf.indexOf("\r\n\r\n", start);
    if (end < 0) return undefined;
    start = end + 4;
  }
  const end = buf.indexOf("\r\n\r\n", start);
  if (end < 0) return undefined;
  const lines = buf.subarray(start, end).toString("latin1").split("\r\n");
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0]!)?.[1]);
  const headers: Record<string, string> = {};
  for (const l of lines.slice(1)) {
    const i = l.indexOf(":");
    if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  const length = Number(headers["content-length"] ?? 0);
  if (buf.length < end + 4 + length) return undefined;
  const text = buf.subarray(end + 4, end + 4 + length).toString("utf8");
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status, headers, text, json };
}

/** A body in HTTP/1.1 chunked framing (chunks of `chunkSize`), ending with the last-chunk marker. */
export function chunked(body: Uint8Array | string, chunkSize = 16 * 1024): Buffer {
  const bytes = Buffer.from(body);
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += chunkSize) {
    const part = bytes.subarray(i, i + chunkSize);
    parts.push(Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from("\r\n"));
  }
  parts.push(Buffer.from("0\r\n\r\n"));
  return Buffer.concat(parts);
}
