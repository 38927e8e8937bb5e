import { expect, test } from "bun:test";
import { DEFAULT_RETRY_SCHEDULE, JITTER, maxAttempts, parseSchedule, retryDelayMs, scheduleSpanMs } from "./retry-schedule.ts";

test("the default schedule spans about three days in 11 attempts", () => {
  const s = parseSchedule(DEFAULT_RETRY_SCHEDULE)!;
  expect(s).toEqual([5_000, 60_000, 300_000, 1_800_000, 3_600_000, 10_800_000, 21_600_000, 43_200_000, 86_400_000, 86_400_000]);
  expect(maxAttempts(s)).toBe(11);
  const days = scheduleSpanMs(s) / 86_400_000;
  expect(days).toBeGreaterThan(2.5);
  expect(days).toBeLessThan(3.5);
  // even with the jitter at either extreme, still "about three days"
  expect((days * (1 - JITTER))).toBeGreaterThan(2.3);
  expect((days * (1 + JITTER))).toBeLessThan(3.6);
});

test("each delay is the schedule's entry ± 20 %, and none after the last", () => {
  const s = [1000, 60_000];
  expect(retryDelayMs(s, 1, 0)).toBe(800);
  expect(retryDelayMs(s, 1, 0.5)).toBe(1000);
  expect(retryDelayMs(s, 1, 0.999999)).toBe(1200);
  expect(retryDelayMs(s, 2, 0)).toBe(48_000);
  expect(retryDelayMs(s, 3, 0.5)).toBeUndefined();
  const spread = new Set(Array.from({ length: 200 }, () => retryDelayMs(s, 2)));
  expect(spread.size).toBeGreaterThan(50);
  for (const d of spread) {
    expect(d!).toBeGreaterThanOrEqual(48_000);
    expect(d!).toBeLessThanOrEqual(72_000);
  }
});

test("schedules parse from durations; anything else is refused", () => {
  expect(parseSchedule("50ms, 1s,2m,3h,1d")).toEqual([50, 1000, 120_000, 10_800_000, 86_400_000]);
  for (const bad of ["", "5", "5x", "1s,,2s", "-1s", "0s", "8d", "1.5s", Array(31).fill("1s").join(",")]) expect(parseSchedule(bad)).toBeUndefined();
});
