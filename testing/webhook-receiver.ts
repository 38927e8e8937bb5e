/**
 * Test helper: a real HTTP receiver on 127.0.0.1 (Bun.serve) that records every webhook
 * it gets and answers as the test tells it to (status, delay, redirect, down).
 */
export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  headers: Record<string, string>;
  body: string;
  json: any;
  at: number;
  path: string;
  /** The status it was answered (set once answered). */
  answered?: number;
}

export type Behaviour = (r: Received) => Response | Promise<Response> | undefined;

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** What to answer; undefined → 200 "ok". */
  behave(b: Behaviour | undefined): void;
  /** Stops listening (the port refuses connections) until start() again on the same port. */
  stop(): Promise<void>;
  start(): void;
  /** Resolves when `n` requests have come (or rejects after `ms`). */
  waitFor(n: number, ms?: number): Promise<Received[]>;
}

/** Webhook settings for delivery tests: retries, timeouts and leases in tenths of a second, not minutes. */
export const FAST_WEBHOOK_ENV: Record<string, string> = {
  SERVICE_WEBHOOK_RETRY_SCHEDULE: "100ms,200ms,400ms,800ms",
  SERVICE_WEBHOOK_TIMEOUT_MS: "400",
  SERVICE_WEBHOOK_LEASE_MS: "1300",
  SERVICE_WEBHOOK_POLL_MS: "200",
};

export function startReceiver(port = 0): Receiver {
  const received: Received[] = [];
  let behaviour: Behaviour | undefined;
  const waiters: { n: number; resolve: () => void }[] = [];
  let server: ReturnType<typeof Bun.serve> | undefined;
  const listen = (p: number) =>
    Bun.serve({
      port: p,
      hostname: "127.0.0.1",
      idleTimeout: 60,
      async fetch(req) {
        const body = await req.text();
        const headers: Record<string, string> = {};
        req.headers.forEach((v, k) => (headers[k] = v));
        let json: unknown;
        try {
          json = JSON.parse(body);
        } catch {
          json = undefined;
        }
        const r: Received = {
          id: headers["webhook-id"] ?? "",
          timestamp: headers["webhook-timestamp"] ?? "",
          signature: headers["webhook-signature"] ?? "",
          headers,
          body,
          json,
          at: performance.now(),
          path: new URL(req.url).pathname,
        };
        received.push(r);
        for (const w of [...waiters]) if (received.length >= w.n) w.resolve();
        const res = (await behaviour?.(r)) ?? new Response("ok");
        r.answered = res.status;
        return res;
      },
    });
  server = listen(port);
  const actualPort = server.port!;
  return {
    url: `http://127.0.0.1:${actualPort}`,
    port: actualPort,
    received,
    behave(b) {
      behaviour = b;
    },
    async stop() {
      await server?.stop(true);
      server = undefined;
    },
    start() {
      if (!server) server = listen(actualPort);
    },
    waitFor(n, ms = 10_000) {
      if (received.length >= n) return Promise.resolve(received);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`waited ${ms} ms for ${n} webhooks, got ${received.length}`)), ms);
        waiters.push({
          n,
          resolve: () => {
            clearTimeout(timer);
            resolve(received);
          },
        });
      });
    },
  };
}
