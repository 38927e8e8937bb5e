/**
 * The sessions-per-second driver of bench/detection.ts, in a process of its own (so its CPU is
 * not the measured process's): POST /payment-sessions at a steady rate for a while, then one
 * JSON line: {"sent","created","failed","seconds"}.
 *   bun bench/detection-driver.ts <apiBaseUrl> <sandboxKey> <perSecond> <seconds>
 */
const [base, key, rateArg, secondsArg] = process.argv.slice(2);
const rate = Number(rateArg);
const seconds = Number(secondsArg);
let sent = 0;
let created = 0;
let failed = 0;
const inFlight = new Set<Promise<void>>();
const MAX_IN_FLIGHT = 256;
const t0 = performance.now();
const body = JSON.stringify({ amount: "1.00", currency: "USD" });
async function one() {
  try {
    const r = await fetch(`${base}/payment-sessions`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body });
    await r.arrayBuffer();
    if (r.status === 201) created++;
    else failed++;
  } catch {
    failed++;
  }
}
// Ticks of 10 ms: send what the rate owes so far (a steady rate, not bursts of a second).
while (rate > 0 && performance.now() - t0 < seconds * 1000) {
  const owed = Math.floor(((performance.now() - t0) / 1000) * rate) - sent;
  for (let i = 0; i < owed && inFlight.size < MAX_IN_FLIGHT; i++) {
    sent++;
    const p = one().finally(() => inFlight.delete(p));
    inFlight.add(p);
  }
  await Bun.sleep(10);
}
if (rate === 0) await Bun.sleep(seconds * 1000);
await Promise.all(inFlight);
console.log(JSON.stringify({ sent, created, failed, seconds: Math.round((performance.now() - t0) / 100) / 10 }));
export {};
