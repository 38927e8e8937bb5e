/**
 * A token bucket per API key: `perSecond` tokens a second, up to `burst`. It lives in the
 * process that serves the request, like nginx's limit_req: a rate window is not data, and
 * losing it on restart only grants a fresh burst. With N API processes the effective limit
 * is N × perSecond; documented in docs/merchant-guide.md ("Conventions").
 */
export class RateLimiter {
  private buckets = new Map<string, { tokens: number; at: number }>();
  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
  ) {}

  /** Takes one token; when none is left, says how many whole seconds until one is. */
  take(key: string, nowMs: number): { ok: true } | { ok: false; retryAfterSeconds: number } {
    const b = this.buckets.get(key) ?? { tokens: this.burst, at: nowMs };
    const refilled = Math.min(this.burst, b.tokens + ((nowMs - b.at) / 1000) * this.perSecond);
    if (refilled >= 1) {
      this.buckets.set(key, { tokens: refilled - 1, at: nowMs });
      if (this.buckets.size > 100_000) this.prune(nowMs);
      return { ok: true };
    }
    this.buckets.set(key, { tokens: refilled, at: nowMs });
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - refilled) / this.perSecond)) };
  }

  /** Full buckets carry no information: drop them. */
  private prune(nowMs: number): void {
    for (const [k, b] of this.buckets) {
      if (b.tokens + ((nowMs - b.at) / 1000) * this.perSecond >= this.burst) this.buckets.delete(k);
    }
  }
}
