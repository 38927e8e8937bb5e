/**
 * The dashboard home's figures as pure functions of the per-day groups (home.ts reads them):
 * the period, the sessions by status, the success rate, and the received volume per day by
 * network and token. Money stays a bigint of token base units from the database to the page;
 * only the chart's geometry (chart.ts) turns it into numbers, for pixels.
 */
import { presetStablecoin } from "../../../shared/chains/presets.ts";
import { isSessionStatus, SESSION_STATUSES, type SessionStatus } from "../../../shared/status.ts";
import type { DayGroup } from "../db/schema.ts";
import { networkName } from "./format.ts";

/** The periods a merchant can choose (?days=), in whole UTC days ending today. */
export const PERIODS = [7, 30, 90] as const;
export type Period = (typeof PERIODS)[number];
export const DEFAULT_PERIOD: Period = 30;

/** A session counts in the received volume while its payment stands: FUNDED (being swept) or SUCCEEDED. */
export const RECEIVED_STATUSES: readonly SessionStatus[] = ["FUNDED", "SUCCEEDED"];
/** The statuses a session ends in: the success rate's denominator. */
export const ENDED_STATUSES: readonly SessionStatus[] = ["SUCCEEDED", "CANCELED", "ERROR"];

export function parsePeriod(raw: string | undefined): { days: Period; problem?: string } {
  if (raw === undefined || raw === "") return { days: DEFAULT_PERIOD };
  const n = /^\d{1,3}$/.test(raw) ? Number(raw) : NaN;
  const days = PERIODS.find((p) => p === n);
  if (days !== undefined) return { days };
  return { days: DEFAULT_PERIOD, problem: `The period is ${PERIODS.join(", ")} days; showing ${DEFAULT_PERIOD}.` };
}

/** The `n` UTC days ending with `today` (YYYY-MM-DD), oldest first. */
export function periodDays(today: string, n: number): string[] {
  const end = Date.parse(`${today}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(today) || Number.isNaN(end)) throw new RangeError(`not a day: ${today}`);
  return Array.from({ length: n }, (_, i) => new Date(end - (n - 1 - i) * 86_400_000).toISOString().slice(0, 10));
}

/**
 * Days (any order) as runs of consecutive days of at most `max` days:
 * ["05-01", "05-02", "05-05"] → [["05-01", "05-02"], ["05-05", "05-05"]].
 */
export function runsOf(days: string[], max = Infinity): [string, string][] {
  const runs: [string, string, number][] = [];
  for (const d of [...days].sort()) {
    const last = runs.at(-1);
    if (last && last[2] < max && Date.parse(`${d}T00:00:00Z`) - Date.parse(`${last[1]}T00:00:00Z`) === 86_400_000) {
      last[1] = d;
      last[2]++;
    } else runs.push([d, d, 1]);
  }
  return runs.map(([a, b]) => [a, b]);
}

/** One line of the chart and of the table: a network and the token paid on it. */
export interface Series {
  key: string;
  chainId: number;
  token: string;
  decimals: number;
  label: string;
  /** Base units received per day of the period, in the period's order. */
  perDay: bigint[];
  total: bigint;
}

export interface HomeFigures {
  days: string[];
  byStatus: Record<SessionStatus, number>;
  sessions: number;
  /** SUCCEEDED ÷ sessions that ended (SUCCEEDED, CANCELED or ERROR); null when none ended. */
  success: { succeeded: number; ended: number; perMille: number | null };
  series: Series[];
}

/** The token's symbol when it is one of the network's known stablecoins, else a shortened address. */
export function tokenLabel(chainId: number, token: string): string {
  const coin = presetStablecoin(chainId, token);
  if (coin) return coin.symbol;
  return `token ${token.slice(0, 6)}…${token.slice(-4)}`;
}

export function figures(days: string[], byDay: Map<string, DayGroup[]>): HomeFigures {
  const byStatus: Record<SessionStatus, number> = { PENDING: 0, FUNDED: 0, SUCCEEDED: 0, CANCELED: 0, ERROR: 0 };
  const series = new Map<string, Series>();
  days.forEach((day, i) => {
    for (const g of byDay.get(day) ?? []) {
      if (!isSessionStatus(g.status)) continue;
      byStatus[g.status] += g.sessions;
      if (!RECEIVED_STATUSES.includes(g.status) || g.chainId === null || g.token === null || g.decimals === null) continue;
      const key = `${g.chainId}:${g.token}`;
      let s = series.get(key);
      if (!s) {
        s = { key, chainId: g.chainId, token: g.token, decimals: g.decimals, label: `${networkName(g.chainId)} · ${tokenLabel(g.chainId, g.token)}`, perDay: days.map(() => 0n), total: 0n };
        series.set(key, s);
      }
      const amount = BigInt(g.amount);
      s.perDay[i]! += amount;
      s.total += amount;
    }
  });
  const ended = ENDED_STATUSES.reduce((n, s) => n + byStatus[s], 0);
  const succeeded = byStatus.SUCCEEDED;
  return {
    days,
    byStatus,
    sessions: SESSION_STATUSES.reduce((n, s) => n + byStatus[s], 0),
    success: { succeeded, ended, perMille: ended === 0 ? null : Math.round((succeeded * 1000) / ended) },
    series: [...series.values()].sort((a, b) => a.chainId - b.chainId || a.token.localeCompare(b.token)),
  };
}

/** 973 → "97.3 %". */
export const percent = (perMille: number) => `${Math.floor(perMille / 10)}.${perMille % 10} %`;
