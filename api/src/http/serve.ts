/**
 * The HTTP front in front of the Elysia app: every request gets an answer within
 * SERVICE_REQUEST_TIMEOUT_MS, is counted for /metrics, and is refused with 503 once the
 * process is shutting down.
 *
 * The deadline. A request still running when it passes is answered
 * `503 service_unavailable` with `Retry-After`, and its scope is marked expired: no
 * transaction of it may commit afterwards (client.ts fences COMMIT, deadline.ts). If a
 * COMMIT is already on the wire when the deadline passes, its outcome decides the answer
 * (waited for up to COMMIT_GRACE_MS more); only if the database stops answering during that
 * COMMIT is the answer a 503 whose work may have committed — retried with the same
 * Idempotency-Key, a create then replays its first answer.
 */
import type { Server } from "bun";
import { ApiError } from "../errors.ts";
import { requestScope, type RequestScope } from "../db/deadline.ts";
import { requestsOutage, type App } from "./app.ts";
import type { HttpMetrics } from "./metrics.ts";
import { clientAddresses } from "./client-address.ts";
import { withinBodyCap } from "./body.ts";
import { clientAddressOf, type TrustedProxies } from "../trusted-proxies.ts";

const COMMIT_GRACE_MS = 2000;

export interface HttpFront {
  server: Server<undefined>;
  /** Requests being handled now. */
  readonly inFlight: number;
  /**
   * Stop taking work: new requests get 503 (Connection: close); waits up to `graceMs` for
   * the requests in flight, then closes the listener (and any connection still open).
   */
  drain(graceMs: number): Promise<void>;
}

export function serveApp(
  app: App,
  opts: { port: number; hostname: string; requestTimeoutMs: number; metrics: HttpMetrics; trustedProxies: TrustedProxies },
): HttpFront {
  let draining = false;
  let inFlight = 0;
  let idle: (() => void) | undefined;
  const metrics = opts.metrics;

  const finish = (request: Request, response: Response, t0: number): Response => {
    const path = new URL(request.url).pathname;
    metrics.observe(request.method, path, response.status, (performance.now() - t0) / 1000);
    if (response.status < 500 && path !== "/healthz" && path !== "/metrics") requestsOutage.ok();
    return response;
  };

  /**
   * An HTTP/1.0 request without a Host header (a load balancer's default health check) or one
   * with an empty Host reaches us with a relative url ("/healthz"), which `new URL()` — and every
   * route after it — cannot read. It is answered as if sent to this listener's own address.
   */
  const absolute = (request: Request, srv: Server<undefined>): Request =>
    URL.canParse(request.url) ? request : new Request(new URL(request.url, `http://${opts.hostname.includes(":") ? `[${opts.hostname}]` : opts.hostname}:${srv.port}`), request);

  const server: Server<undefined> = Bun.serve({
    port: opts.port,
    hostname: opts.hostname,
    // Lifted: the body cap is ours (withinBodyCap), answered in the documented shape.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    async fetch(received, srv) {
      const t0 = performance.now();
      const request = absolute(received, srv);
      // The one client address every reader gets (client-address.ts): X-Forwarded-For counts only
      // from a trusted proxy. Headers.get joins repeated headers with ", ", in order.
      const peer = srv.requestIP(received)?.address;
      const ip = peer ? clientAddressOf(peer, opts.trustedProxies.empty ? null : received.headers.get("x-forwarded-for"), opts.trustedProxies) : undefined;
      if (ip) clientAddresses.set(request, ip);
      if (draining) {
        return finish(
          request,
          app.answerError(new ApiError("service_unavailable", "The server is shutting down. Retry shortly."), request, { connection: "close" }),
          t0,
        );
      }
      inFlight++;
      metrics.inFlight = inFlight;
      const scope: RequestScope = { expired: false, committing: 0 };
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        const handled = requestScope.run(scope, () =>
          // An over-cap body is read to its end (within a bound) before its 413, in well under the deadline.
          withinBodyCap(request, { drainMs: opts.requestTimeoutMs / 2 }).then(
            (capped) => {
              if (ip && capped !== request) clientAddresses.set(capped, ip);
              return app.handle(capped);
            },
            (err: ApiError) => app.answerError(err, request),
          ),
        );
        const late = (ms: number) => new Promise<"late">((r) => (timer = setTimeout(() => r("late"), ms)));
        let res: Response | "late" = await Promise.race([handled, late(opts.requestTimeoutMs)]);
        if (res === "late") {
          // From the deadline on nothing new of this request may start or commit: only a COMMIT
          // already on the wire is waited for (a retry inside the handler — a create whose key
          // check failed — must not begin a write that could commit after a 503).
          scope.expired = true;
          if (scope.committing > 0) {
            clearTimeout(timer);
            res = await Promise.race([handled, late(COMMIT_GRACE_MS)]);
          }
        }
        if (res === "late") {
          handled.catch(() => {});
          res = app.answerError(new ApiError("service_unavailable", `No answer within ${opts.requestTimeoutMs} ms (the database is slow or away). Retry shortly; a create retried with the same Idempotency-Key is never made twice.`), request);
        }
        return finish(request, res, t0);
      } finally {
        clearTimeout(timer);
        inFlight--;
        metrics.inFlight = inFlight;
        if (inFlight === 0) idle?.();
      }
    },
  });

  return {
    server,
    get inFlight() {
      return inFlight;
    },
    async drain(graceMs: number) {
      draining = true;
      if (inFlight > 0) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([
          new Promise<void>((r) => (idle = r)),
          new Promise<void>((r) => (timer = setTimeout(r, graceMs))),
        ]);
        clearTimeout(timer);
      }
      await server.stop(true);
    },
  };
}
