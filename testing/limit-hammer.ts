/**
 * Test helper: one API key's requests offered at a steady rate over several API processes in
 * turn, as a round-robin load balancer spreads them, to check the per-key limit against what it
 * promises — burst + rate × seconds admitted. The requests go out on a schedule, not one sleep
 * after another: a loaded event loop that wakes late sends what fell due meanwhile, so the offer
 * stays above the limit however late the loop is (a hammer that offered less than the limit would
 * measure itself, not the limiter). Nothing waits for an answer before the next request: a
 * process that stalls gets its share of the requests queued, as behind a real balancer.
 *
 * `hammerFromChild` runs it in a process of its own (`bun testing/limit-hammer.ts <options>`): its
 * own event loop, and room for thousands of requests in flight — Bun's fetch holds 256 at once by
 * default, so a stalled process holding 256 would hold back the requests meant for the others.
 */
import { resolve } from "node:path";
export interface HammerResult {
  /** Answered with the admitted status. */
  admitted: number;
  /** Answered 429. */
  refused: number;
  /** Admitted, per URL. */
  admittedBy: number[];
  sent: number;
  /** From the first request sent to the last. */
  seconds: number;
  /** Other answers (status: count) and failed requests ("error"). */
  odd: Record<string, number>;
  /** The first body of each other status. */
  firstOdd: Record<string, string>;
}

export interface HammerOptions {
  urls: string[];
  /** The path requested, e.g. "/payment-sessions?limit=1". */
  path: string;
  key: string;
  /** Requests a second offered, in all. */
  rate: number;
  ms: number;
  /** The status of an admitted request (default 200). */
  admittedStatus?: number;
}

export async function hammer(o: HammerOptions): Promise<HammerResult> {
  const admittedBy = o.urls.map(() => 0);
  const odd: Record<string, number> = {};
  const firstOdd: Record<string, string> = {};
  let refused = 0;
  let sent = 0;
  const inFlight: Promise<void>[] = [];
  const t0 = performance.now();
  let last = t0;
  for (;;) {
    const now = performance.now();
    if (now - t0 >= o.ms) break;
    for (const due = Math.floor(((now - t0) / 1000) * o.rate) + 1; sent < due; sent++) {
      const i = sent % o.urls.length;
      last = now;
      inFlight.push(
        fetch(`${o.urls[i]}${o.path}`, { headers: { authorization: `Bearer ${o.key}` } }).then(
          async (r) => {
            const body = await r.text();
            if (r.status === (o.admittedStatus ?? 200)) admittedBy[i]!++;
            else if (r.status === 429) refused++;
            else {
              odd[r.status] = (odd[r.status] ?? 0) + 1;
              firstOdd[r.status] ??= body.slice(0, 300);
            }
          },
          () => void (odd.error = (odd.error ?? 0) + 1),
        ),
      );
    }
    await Bun.sleep(1);
  }
  await Promise.all(inFlight);
  return { admitted: admittedBy.reduce((a, b) => a + b, 0), refused, admittedBy, sent, seconds: (last - t0) / 1000, odd, firstOdd };
}

/** `hammer` in a child process, with room for 10,000 requests in flight. */
export async function hammerFromChild(o: HammerOptions): Promise<HammerResult> {
  const child = Bun.spawn(["bun", resolve(import.meta.dir, "limit-hammer.ts"), JSON.stringify(o)], {
    env: { ...process.env, BUN_CONFIG_MAX_HTTP_REQUESTS: "10000" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  if (code !== 0) throw new Error(`the hammer exited ${code}: ${err}`);
  return JSON.parse(out) as HammerResult;
}

if (import.meta.main) console.log(JSON.stringify(await hammer(JSON.parse(process.argv[2]!) as HammerOptions)));
