import { expect, test } from "bun:test";
import { Pump } from "./pump.ts";
import { BaseError } from "../../shared/base-error.ts";

const tick = (ms = 5) => Bun.sleep(ms);

test("a wake during a pass runs exactly one more pass after it, never two at once", async () => {
  let running = 0;
  let maxRunning = 0;
  let passes = 0;
  let release: (() => void) | undefined;
  const pump = new Pump(
    async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      passes++;
      if (passes === 1) await new Promise<void>((r) => (release = r));
      running--;
      return 60_000;
    },
    { name: "t", pollMs: 60_000 },
  );
  pump.wake();
  await tick();
  pump.wake();
  pump.wake();
  pump.wake(); // three wakes during the first pass: one more pass
  expect(passes).toBe(1);
  release!();
  await tick(20);
  expect(passes).toBe(2);
  expect(maxRunning).toBe(1);
  await pump.stop();
});

test("stop waits for the pass under way and runs no other", async () => {
  let finished = false;
  let passes = 0;
  const pump = new Pump(
    async () => {
      passes++;
      await Bun.sleep(50);
      finished = true;
      return 0; // would run again at once
    },
    { name: "t", pollMs: 10 },
  );
  pump.wake();
  await tick();
  await pump.stop();
  expect(finished).toBe(true);
  await tick(40);
  expect(passes).toBe(1);
  pump.wake(); // after stop: nothing
  await tick(20);
  expect(passes).toBe(1);
});

test("a pass says when it wants the next, at most the poll interval away", async () => {
  const at: number[] = [];
  const pump = new Pump(
    async () => {
      at.push(Date.now());
      return at.length === 1 ? 0 : 1_000_000;
    },
    { name: "t", pollMs: 30 },
  );
  pump.wake();
  await tick(100);
  await pump.stop();
  expect(at.length).toBeGreaterThanOrEqual(3); // at once, then every 30 ms (capped)
  expect(at[1]! - at[0]!).toBeLessThan(20);
});

test("a failing pass is retried after a pause that doubles, and logged once per run of failures", async () => {
  const lines: string[] = [];
  let passes = 0;
  const at: number[] = [];
  const pump = new Pump(
    async () => {
      passes++;
      at.push(performance.now());
      if (passes <= 4) throw new Error("connect ECONNREFUSED 127.0.0.1:5432\nstack…");
      return undefined;
    },
    { name: "sweeper local", pollMs: 1_000, retryMs: 10, log: (l) => lines.push(l) },
  );
  pump.wake();
  await tick(400);
  await pump.stop();
  expect(passes).toBeGreaterThanOrEqual(5);
  const gaps = at.slice(1, 5).map((t, i) => t - at[i]!);
  // 10, 20, 40, 80 ms. A timer fires late under load, never early: each pause is at least its
  // doubled length (a pause that did not double would be 10 ms, and 80 is far beyond its lateness).
  gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(10 * 2 ** i - 1));
  expect(lines).toHaveLength(2);
  expect(lines[0]).toBe("sweeper local: connect ECONNREFUSED 127.0.0.1:5432 (retried; logged again only if it changes)");
  expect(lines[1]).toMatch(/^sweeper local: working again after 4 failed pass\(es\)/);
});

test("a failing pass's line says what the error wraps, one line per link, with no URL in it", async () => {
  const lines: string[] = [];
  let passes = 0;
  const rpc = new Error("HTTP request to https://rpc.example/v2/KEY123 failed.\nRequest body: {}", { cause: Object.assign(new Error("connect refused"), { code: "ECONNREFUSED" }) });
  const pump = new Pump(
    async () => {
      passes++;
      if (passes === 1) throw new BaseError("sweeper pass failed", { cause: rpc });
      return undefined;
    },
    { name: "sweeper local", pollMs: 1_000, retryMs: 10, log: (l) => lines.push(l) },
  );
  pump.wake();
  await tick(100);
  await pump.stop();
  expect(lines[0]).toBe(
    "sweeper local: sweeper pass failed; caused by HTTP request to https://<redacted> failed.; caused by ECONNREFUSED: connect refused (retried; logged again only if it changes)",
  );
  expect(lines.join("\n")).not.toContain("KEY123");
});
