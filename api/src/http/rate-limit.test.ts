import { expect, test } from "bun:test";
import { RateLimiter } from "./rate-limit.ts";

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
