/**
 * A token bucket per API key: `perSecond` tokens a second, up to `burst`, for the whole service.
 * It lives in the process that serves the request, like nginx's limit_req: a rate window is not
 * data, and losing it on restart only grants a fresh burst. With N API processes behind a load
 * balancer that spreads requests, each holds 1/N of the limit (`share()`: N from the node
 * registry, nodes/presence.ts), so a key gets its documented limit whatever N is — and no request
 * waits for the database to learn it. A node that dies leaves the registry within seconds and the
 * others' shares grow back. Documented in docs/merchant-guide.md ("Conventions") and docs/topology.md.
 */
export class RateLimiter {
  private buckets = new Map<string, { tokens: number; at: number }>();
  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    /** How many processes share the limit (each takes 1/share()). */
    private readonly share: () => number = () => 1,
  ) {}

  /** Takes one token; when none is left, says how many whole seconds until one is. */
  take(key: string, nowMs: number): { ok: true } | { ok: false; retryAfterSeconds: number } {
    const { perSecond, burst } = shareOf(this.perSecond, this.burst, this.share());
    const b = this.buckets.get(key) ?? { tokens: burst, at: nowMs };
    const refilled = Math.min(burst, b.tokens + ((nowMs - b.at) / 1000) * perSecond);
    if (refilled >= 1) {
      this.buckets.set(key, { tokens: refilled - 1, at: nowMs });
      if (this.buckets.size > 100_000) this.prune(nowMs, perSecond, burst);
      return { ok: true };
    }
    this.buckets.set(key, { tokens: refilled, at: nowMs });
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - refilled) / perSecond)) };
  }

  /** Full buckets carry no information: drop them. */
  private prune(nowMs: number, perSecond: number, burst: number): void {
    for (const [k, b] of this.buckets) {
      if (b.tokens + ((nowMs - b.at) / 1000) * perSecond >= burst) this.buckets.delete(k);
    }
  }
}

/**
 * One process's part of a limit shared by `nodes` processes. The burst never falls under one
 * request (a bucket that can never hold a whole token would refuse everything): with more API
 * processes than the burst, the service's burst is the number of processes.
 */
export function shareOf(perSecond: number, burst: number, nodes: number): { perSecond: number; burst: number } {
  const n = Number.isFinite(nodes) && nodes >= 1 ? Math.floor(nodes) : 1;
  return { perSecond: perSecond / n, burst: Math.max(1, burst / n) };
}
