/** Shared bits of the benchmark scripts: percentiles, a bounded closed-loop load, CPU used by a process. */
import { readdirSync, readFileSync } from "node:fs";

export function percentile(sortedMs: number[], p: number): number {
  if (sortedMs.length === 0) return NaN;
  const i = Math.min(sortedMs.length - 1, Math.max(0, Math.ceil((p / 100) * sortedMs.length) - 1));
  return round(sortedMs[i]!);
}

export const round = (x: number, places = 2) => Math.round(x * 10 ** places) / 10 ** places;

/**
 * `concurrency` workers each run `op` back to back until `seconds` pass. Returns the
 * count, the rate and the latency percentiles of the successful operations.
 */
export async function closedLoop(concurrency: number, seconds: number, op: () => Promise<boolean>) {
  const latencies: number[] = [];
  let failures = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        const ok = await op().catch(() => false);
        if (ok) latencies.push(performance.now() - t0);
        else failures++;
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    ops: latencies.length,
    failures,
    perSecond: round(latencies.length / elapsed, 1),
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
  };
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux); 0 once it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(f[11]) + Number(f[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return 0;
  }
}

/** CPU seconds of a Postgres server so far: its postmaster and every backend and helper it started. */
export function postgresCpu(postmaster: number): number {
  let total = cpuSeconds(postmaster);
  for (const p of readdirSync("/proc")) {
    if (!/^\d+$/.test(p)) continue;
    try {
      if (readFileSync(`/proc/${p}/stat`, "utf8").split(") ")[1]!.split(" ")[1] === String(postmaster)) total += cpuSeconds(Number(p));
    } catch {
      // gone meanwhile
    }
  }
  return total;
}
