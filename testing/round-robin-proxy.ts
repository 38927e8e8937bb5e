/**
 * Test helper: a round-robin HTTP load balancer on 127.0.0.1 (Bun.serve) in front of several
 * API processes. Each request goes to the next upstream in turn; an upstream that refuses the
 * connection is skipped for that request and the next one tried, as a load balancer does once
 * its health check has seen the process gone. A request that reached an upstream is never sent
 * again (it may have done its work): if that upstream dies before answering, the client gets
 * 502 and retries itself (with its Idempotency-Key).
 */
import { hasErrorCode } from "../shared/error-chain.ts";
import { messageOf } from "../shared/describe-error.ts";

export interface RoundRobinProxy {
  url: string;
  /** Requests answered 502 because no upstream took the connection or one died mid-request. */
  failures(): number;
  stop(): void;
}

/** Bun's fetch: the connection was refused, so the request never reached the upstream. */
const neverReached = (err: unknown) => hasErrorCode(err, "ECONNREFUSED");

export function startRoundRobinProxy(upstreams: string[], port = 0): RoundRobinProxy {
  let next = 0;
  let failed = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port,
    idleTimeout: 60,
    async fetch(req) {
      const url = new URL(req.url);
      // Read once: the same bytes go to the next upstream when one refuses the connection.
      const body = req.method === "GET" || req.method === "HEAD" ? undefined : await req.arrayBuffer();
      const headers = new Headers(req.headers);
      headers.delete("host");
      const first = next++ % upstreams.length;
      for (let i = 0; i < upstreams.length; i++) {
        const upstream = upstreams[(first + i) % upstreams.length]!;
        try {
          const res = await fetch(`${upstream}${url.pathname}${url.search}`, { method: req.method, headers, body, redirect: "manual" });
          return new Response(res.body, { status: res.status, headers: res.headers });
        } catch (err) {
          if (neverReached(err)) continue;
          failed++;
          return new Response(JSON.stringify({ error: { code: "bad_gateway", message: `upstream failed: ${messageOf(err)}` } }), { status: 502 });
        }
      }
      failed++;
      return new Response(JSON.stringify({ error: { code: "bad_gateway", message: "no upstream accepted the connection" } }), { status: 502 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, failures: () => failed, stop: () => void server.stop(true) };
}
