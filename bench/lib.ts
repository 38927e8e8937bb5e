/** Shared bits of the benchmark scripts: percentiles, a bounded closed-loop load, CPU used by a process, the service in a process of its own. */
import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { freePort } from "../testing/ports.ts";

/**
 * The service (`main`, this checkout's unless another build's is given) in a process of its own
 * on `databaseUrl`, answering `/readyz`: per-key rate limits lifted for the load, a fixed
 * encryption key (nothing written to .data/), `env` on top (its networks, for one).
 */
export async function startServiceProcess(databaseUrl: string, env: Record<string, string>, main = resolve(import.meta.dir, "../api/src/main.ts")) {
  const port = await freePort();
  const proc = Bun.spawn(["bun", main], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      SERVICE_PORT: String(port),
      SERVICE_RATE_LIMIT_PER_SECOND: "1000000",
      SERVICE_RATE_LIMIT_BURST: "1000000",
      SERVICE_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString("base64"),
      ...env,
    },
    stdout: "ignore",
    stderr: "inherit",
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (i > 200) {
      proc.kill("SIGTERM");
      throw new Error("service did not start");
    }
    if (await fetch(`${url}/readyz`).then((r) => r.ok, () => false)) break;
    await Bun.sleep(50);
  }
  return { proc, url };
}

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
