/**
 * The sessions-per-second driver of bench/detection.ts, in a process of its own (so its CPU is
 * not the measured process's): POST /payment-sessions at a steady rate for a while, then one
 * JSON line: {"sent","created","failed","byStatus","seconds","createdPerSecond"}.
 * `byStatus` counts every answer by its HTTP status ("201", "429", "503", …; "network" for a
 * request that got no answer), so a refusal — the per-key rate limit's 429 as much as an
 * overloaded service's 503 — can never pass for a slow machine.
 *   bun bench/detection-driver.ts <apiBaseUrl> <sandboxKey> <perSecond> <seconds>
 */
const [base, key, rateArg, secondsArg] = process.argv.slice(2);
const rate = Number(rateArg);
const seconds = Number(secondsArg);
let sent = 0;
let created = 0;
let failed = 0;
const byStatus: Record<string, number> = {};
const count = (k: string) => (byStatus[k] = (byStatus[k] ?? 0) + 1);
const inFlight = new Set<Promise<void>>();
const MAX_IN_FLIGHT = 256;
/** Ticks in which the rate owed more than MAX_IN_FLIGHT allowed: the service fell behind. */
let heldBack = 0;
const t0 = performance.now();
const body = JSON.stringify({ amount: "1.00", currency: "USD" });
async function one() {
  try {
    const r = await fetch(`${base}/payment-sessions`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body });
    await r.arrayBuffer();
    count(String(r.status));
    if (r.status === 201) created++;
    else failed++;
  } catch {
    count("network");
    failed++;
  }
}
// Ticks of 10 ms: send what the rate owes so far (a steady rate, not bursts of a second).
while (rate > 0 && performance.now() - t0 < seconds * 1000) {
  const owed = Math.floor(((performance.now() - t0) / 1000) * rate) - sent;
  for (let i = 0; i < owed; i++) {
    if (inFlight.size >= MAX_IN_FLIGHT) {
      heldBack++;
      break;
    }
    sent++;
    const p = one().finally(() => inFlight.delete(p));
    inFlight.add(p);
  }
  await Bun.sleep(10);
}
if (rate === 0) await Bun.sleep(seconds * 1000);
const sendingSeconds = (performance.now() - t0) / 1000;
await Promise.all(inFlight);
const r1 = (n: number) => Math.round(n * 10) / 10;
console.log(
  JSON.stringify({ sent, created, failed, byStatus, ticksHeldBack: heldBack, seconds: r1((performance.now() - t0) / 1000), createdPerSecond: r1(created / sendingSeconds) }),
);
export {};
