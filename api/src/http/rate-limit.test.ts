import { expect, test } from "bun:test";
import { RateLimiter, shareOf } from "./rate-limit.ts";

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
