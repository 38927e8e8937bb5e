/**
 * The relayer-spend guard, pure. Whatever goes wrong elsewhere — a stranger's sweep, a lagging
 * indexer, a missing contract, a bug not found yet — the relayer never pays without bound:
 *
 *   per network and relayer  at most maxTxPerMinute new transactions in any minute and
 *                            maxTxPerHour in any hour, sweeps and authorization submissions
 *                            together (one table, app.sweep_transactions); past either, both
 *                            wait (with the reason recorded) and the operator is told once.
 *   per session and network  at most maxTxPerSession transactions in all, its sweeps' and its
 *                            authorization's attempts together; past it the sweep fails with the
 *                            guard's reason (the session reports it, ERROR sweep_failed while
 *                            FUNDED), or the authorization fails, instead of paying once more.
 *
 * A replacement of a stuck transaction reuses its nonce and is not a new transaction here:
 * only one of a nonce's transactions can ever be mined and paid for.
 */
import type { SweepSettings } from "../config.ts";

export type GuardLimits = Pick<SweepSettings, "maxTxPerMinute" | "maxTxPerHour" | "maxTxPerSession">;

export interface RecentSpend {
  /** New relayer transactions (nonces) on this network in the last 60 s / 3,600 s. */
  lastMinute: number;
  lastHour: number;
}

export type SpendVerdict = { ok: true } | { ok: false; reason: string; waitMs: number };

export function relayerVerdict(recent: RecentSpend, limits: GuardLimits): SpendVerdict {
  if (recent.lastMinute >= limits.maxTxPerMinute) {
    return {
      ok: false,
      waitMs: 5_000,
      reason: `relayer-spend guard: ${recent.lastMinute} relayer transactions in the last minute (limit ${limits.maxTxPerMinute}, SERVICE_SWEEP_MAX_TX_PER_MINUTE); sweeps and authorizations wait`,
    };
  }
  if (recent.lastHour >= limits.maxTxPerHour) {
    return {
      ok: false,
      waitMs: 60_000,
      reason: `relayer-spend guard: ${recent.lastHour} relayer transactions in the last hour (limit ${limits.maxTxPerHour}, SERVICE_SWEEP_MAX_TX_PER_HOUR); sweeps and authorizations wait`,
    };
  }
  return { ok: true };
}

/** Whether one more transaction for a session that already cost `sent` would pass its budget. */
export function sessionOverBudget(sent: number, limits: GuardLimits): string | undefined {
  if (sent < limits.maxTxPerSession) return undefined;
  return `relayer-spend guard: ${sent} relayer transactions already sent for this session on this network (limit ${limits.maxTxPerSession}, SERVICE_SWEEP_MAX_TX_PER_SESSION); an operator must look at it`;
}
