import { expect, test } from "bun:test";
import { RateLimiter, shareOf } from "./rate-limit.ts";
import { LoopStalls } from "./loop-stalls.ts";

test("a burst is allowed, then requests are refused until tokens refill", () => {
  const rl = new RateLimiter(10, 3);
  const t = 1_000_000;
  expect(rl.take("k", t).ok).toBe(true);
  expect(rl.take("k", t).ok).toBe(true);
  expect(rl.take("k", t).ok).toBe(true);
  const refused = rl.take("k", t);
  expect(refused).toEqual({ ok: false, retryAfterSeconds: 1 });
  expect(rl.take("k", t + 99).ok).toBe(false);
  expect(rl.take("k", t + 100).ok).toBe(true);
});

test("keys have separate buckets", () => {
  const rl = new RateLimiter(1, 1);
  expect(rl.take("a", 0).ok).toBe(true);
  expect(rl.take("a", 0).ok).toBe(false);
  expect(rl.take("b", 0).ok).toBe(true);
});

test("retry-after grows as the rate shrinks", () => {
  const rl = new RateLimiter(0.1 as number, 1);
  rl.take("a", 0);
  const r = rl.take("a", 0);
  expect(r.ok).toBe(false);
  if (!r.ok) expect(r.retryAfterSeconds).toBe(10);
});

test("three processes sharing a limit each hold a third of it: together they admit the limit once", () => {
  const nodes = [0, 1, 2].map(() => new RateLimiter(30, 60, () => 3));
  let admitted = 0;
  // 10 s of 300 requests a second, spread round-robin over the three.
  for (let ms = 0; ms < 10_000; ms += 10) {
    for (let i = 0; i < 3; i++) if (nodes[(ms / 10 + i) % 3]!.take("k", ms).ok) admitted++;
  }
  // burst 60 + 30/s × 10 s = 360 (alone, each would admit that much: 1,080).
  expect(admitted).toBeGreaterThanOrEqual(340);
  expect(admitted).toBeLessThanOrEqual(370);
});

test("when a node leaves, the others' shares grow back at once", () => {
  let n = 3;
  const rl = new RateLimiter(30, 30, () => n);
  let t = 0;
  let admitted = 0;
  while (rl.take("k", t).ok) admitted++;
  expect(admitted).toBe(10);
  n = 1;
  t += 1000; // a second later, refilled at the whole rate up to the whole burst
  admitted = 0;
  while (rl.take("k", t).ok) admitted++;
  expect(admitted).toBe(30);
});

test("a share never holds less than one request", () => {
  expect(shareOf(100, 200, 4)).toEqual({ perSecond: 25, burst: 50 });
  expect(shareOf(1, 2, 5)).toEqual({ perSecond: 0.2, burst: 1 });
  expect(shareOf(10, 10, 0)).toEqual({ perSecond: 10, burst: 10 });
  expect(shareOf(10, 10, Number.NaN)).toEqual({ perSecond: 10, burst: 10 });
});

/** A limiter of 10/s, burst 5, shared by three processes, that knows when its loop stalled. */
function stallAware() {
  const stalls = new LoopStalls(0);
  return { stalls, rl: new RateLimiter(30, 15, () => 3, stalls) };
}
const drain = (rl: RateLimiter, t: number) => {
  let n = 0;
  while (rl.take("k", t).ok) n++;
  return n;
};

test("requests that waited through a stall of the loop get the rate they were owed, not just the burst", () => {
  const { stalls, rl } = stallAware();
  for (let t = 0; t <= 1_000; t += 10) stalls.tick(t);
  expect(drain(rl, 1_000)).toBe(5); // the share's burst
  // The loop stalls 2 s (four bursts' worth of refill); the backlog is looked at after it.
  stalls.tick(3_000);
  expect(drain(rl, 3_000)).toBe(20);
  // Without knowing the stall, only the burst.
  const blind = new RateLimiter(30, 15, () => 3);
  drain(blind, 1_000);
  expect(drain(blind, 3_000)).toBe(5);
});

test("a stall under way when the backlog is looked at (the timer has not run yet) counts too", () => {
  const { stalls, rl } = stallAware();
  for (let t = 0; t <= 1_000; t += 10) stalls.tick(t);
  drain(rl, 1_000);
  expect(drain(rl, 3_000)).toBe(20);
});

test("a key first seen in a stall's backlog gets its burst and what the stall owed", () => {
  const { stalls, rl } = stallAware();
  for (let t = 0; t <= 1_000; t += 10) stalls.tick(t);
  stalls.tick(3_000);
  expect(drain(rl, 3_000)).toBe(25);
});

test("what a stall owed lapses after its catch-up: a key idle through it gets no more than the burst later", () => {
  const { stalls, rl } = stallAware();
  for (let t = 0; t <= 1_000; t += 10) stalls.tick(t);
  drain(rl, 1_000);
  stalls.tick(3_000);
  for (let t = 3_000; t <= 10_000; t += 10) stalls.tick(t);
  expect(drain(rl, 10_000)).toBe(5);
  // Taken partly during the catch-up: the rest of the credit is not carried past it.
  stalls.tick(12_000);
  expect(rl.take("k", 12_000).ok).toBe(true);
  for (let t = 12_000; t <= 20_000; t += 10) stalls.tick(t);
  expect(drain(rl, 20_000)).toBe(5);
});

test("a clock set back neither refills nor takes away: the refill goes on from there", () => {
  const rl = new RateLimiter(10, 2);
  expect(drain(rl, 10_000)).toBe(2);
  expect(rl.take("k", 5_000).ok).toBe(false);
  expect(rl.take("k", 5_100).ok).toBe(true);
});
