import { expect, test } from "bun:test";
import { LoopStalls, STALL_AFTER_MS, TICK_MS } from "./loop-stalls.ts";

/** Ticks every TICK_MS from `from` to `to` (the loop running). */
function run(s: LoopStalls, from: number, to: number) {
  for (let t = from; t <= to; t += TICK_MS) s.tick(t);
}

test("ticks on time are no stall; a late tick marks the time since the last one", () => {
  const s = new LoopStalls(0);
  run(s, 0, 1_000);
  expect(s.owedWithin(0, 1_000)).toEqual({ ms: 0, until: 0 });
  s.tick(1_000 + STALL_AFTER_MS); // late, but not by more than the threshold
  expect(s.owedWithin(0, 1_000 + STALL_AFTER_MS).ms).toBe(0);
  s.tick(3_030); // 2 s without a tick
  expect(s.owedWithin(0, 3_030)).toEqual({ ms: 2_000, until: 5_030 });
  // Only the part of the stall after `from` is owed to a bucket last looked at during it.
  expect(s.owedWithin(2_030, 3_030).ms).toBe(1_000);
});

test("a stall still under way counts up to now, before the timer has run", () => {
  const s = new LoopStalls(0);
  run(s, 0, 500);
  expect(s.owedWithin(0, 2_500)).toEqual({ ms: 2_000, until: 4_500 });
});

test("a stall is owed only during its catch-up, as long again as the stall", () => {
  const s = new LoopStalls(0);
  s.tick(2_000); // stalled 0..2000
  run(s, 2_000, 4_000);
  expect(s.owedWithin(0, 4_000).ms).toBe(2_000);
  run(s, 4_000, 4_100);
  expect(s.owedWithin(0, 4_100)).toEqual({ ms: 0, until: 0 });
});

test("of a stall longer than the registry's patience, only the part before the others stop counting this process is owed", () => {
  const s = new LoopStalls(0, 5_000);
  s.tick(12_000); // stalled 12 s: the others took this process's share after about 5 s
  expect(s.owedWithin(0, 12_000)).toEqual({ ms: 5_000, until: 17_000 });
  expect(s.owedWithin(6_000, 12_000).ms).toBe(0);
});
