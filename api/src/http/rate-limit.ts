/**
 * A token bucket per API key: `perSecond` tokens a second, up to `burst`, for the whole service.
 * It lives in the process that serves the request, like nginx's limit_req: a rate window is not
 * data, and losing it on restart only grants a fresh burst. With N API processes behind a load
 * balancer that spreads requests, each holds 1/N of the limit (`share()`: N from the node
 * registry, nodes/presence.ts), so a key gets its documented limit whatever N is — and no request
 * waits for the database to learn it. A node that dies leaves the registry within seconds and the
 * others' shares grow back. Documented in docs/merchant-guide.md ("Conventions") and docs/topology.md.
 *
 * A bucket refills from the time elapsed, capped at its burst — except for the time this
 * process's event loop was stalled (loop-stalls.ts): the requests that waited through a stall are
 * looked at only after it, and capping that refill would take from them what they were owed (a
 * process stalled 2 s with a burst of 1 s would lose a second of its share, while the others
 * refuse). That time's tokens go to a credit beside the bucket, spent first and only during the
 * stall's catch-up; what is left then is dropped, so a key idle through a stall gets no more than
 * its burst afterwards.
 */
import type { LoopStalls } from "./loop-stalls.ts";

const NOTHING_OWED = { ms: 0, until: 0 };
const OK = Object.freeze({ ok: true as const });

interface Bucket {
  tokens: number;
  at: number;
  /** Tokens owed for a stall, above the burst, usable until `creditUntil`. */
  credit: number;
  creditUntil: number;
}

export class RateLimiter {
  private buckets = new Map<string, Bucket>();
  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    /** How many processes share the limit (each takes 1/share()). */
    private readonly share: () => number = () => 1,
    /** This process's event-loop stalls; none known: every gap is capped at the burst. */
    private readonly stalls?: LoopStalls,
  ) {}

  /** Takes one token; when none is left, says how many whole seconds until one is. */
  take(key: string, nowMs: number): { ok: true } | { ok: false; retryAfterSeconds: number } {
    const { perSecond, burst } = shareOf(this.perSecond, this.burst, this.share());
    let b = this.buckets.get(key);
    // A key not seen yet has been full forever: a stall under way still owes its backlog.
    if (!b) this.buckets.set(key, (b = { tokens: burst, at: 0, credit: 0, creditUntil: 0 }));
    // A clock set back gives nothing and takes nothing.
    const elapsed = Math.max(0, nowMs - b.at);
    const owed = this.stalls && elapsed > 0 ? this.stalls.owedWithin(b.at, nowMs) : NOTHING_OWED;
    const tokens = Math.min(burst, b.tokens + ((elapsed - owed.ms) / 1000) * perSecond);
    const creditLive = nowMs <= b.creditUntil;
    const credit = (creditLive ? b.credit : 0) + (owed.ms / 1000) * perSecond;
    b.creditUntil = credit > 0 ? Math.max(creditLive ? b.creditUntil : 0, owed.until) : 0;
    b.at = nowMs;
    if (credit + tokens >= 1) {
      // The credit first: it lapses, the bucket does not.
      const fromCredit = Math.min(1, credit);
      b.credit = credit - fromCredit;
      b.tokens = tokens - (1 - fromCredit);
      if (this.buckets.size > 100_000) this.prune(nowMs, perSecond, burst);
      return OK;
    }
    b.credit = credit;
    b.tokens = tokens;
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - tokens - credit) / perSecond)) };
  }

  /** Full buckets carry no information: drop them. */
  private prune(nowMs: number, perSecond: number, burst: number): void {
    for (const [k, b] of this.buckets) {
      if (nowMs > b.creditUntil && b.tokens + ((nowMs - b.at) / 1000) * perSecond >= burst) this.buckets.delete(k);
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
