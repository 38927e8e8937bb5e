/** The home chart's geometry (chart.ts): stacking, scale, ticks, labels. */
import { describe, expect, test } from "bun:test";
import { niceStep, stackedBars, tickLabel } from "./chart.ts";

const days = (n: number) => Array.from({ length: n }, (_, i) => `2026-05-${String(i + 1).padStart(2, "0")}`);

describe("stackedBars", () => {
  const c = stackedBars({ days: days(3), series: [[10, 0, 30], [5, 0, 10]], width: 356, height: 236 });
  // Plot: x 56..348 (292 wide, 3 slots), y 10..210 (200 high); tallest day 40 → axis to 40 in steps of 10.

  test("one segment per non-zero value, stacked bottom-up in series order, heights to scale", () => {
    expect(c.bars.map((b) => [b.series, b.day, b.y, b.height])).toEqual([
      [0, 0, 160, 50],
      [1, 0, 135, 25],
      [0, 2, 60, 150],
      [1, 2, 10, 50],
    ]);
    const [a, b] = c.bars;
    expect(a!.x).toBe(b!.x);
    expect(a!.width).toBeCloseTo((292 / 3) * 0.7, 1);
    expect(c.bars.every((bar) => bar.y >= c.plot.top && bar.y + bar.height <= c.plot.bottom + 0.01)).toBe(true);
  });

  test("ticks from 0 to a round top, bottom to top", () => {
    expect(c.ticks.map((t) => [t.value, t.y, t.label])).toEqual([
      [0, 210, "0"],
      [10, 160, "10"],
      [20, 110, "20"],
      [30, 60, "30"],
      [40, 10, "40"],
    ]);
  });

  test("a tiny value still shows a pixel; nothing at all draws no bar and a unit axis", () => {
    const tiny = stackedBars({ days: days(2), series: [[1_000_000, 0.001]] });
    expect(tiny.bars[1]!.height).toBe(1);
    const none = stackedBars({ days: days(7), series: [[0, 0, 0, 0, 0, 0, 0]] });
    expect(none.bars).toEqual([]);
    expect(none.ticks.map((t) => t.value)).toEqual([0, 1]);
  });

  test("day labels: at most 8, the newest always labelled, MM-DD", () => {
    const month = stackedBars({ days: days(30), series: [Array(30).fill(1)] });
    expect(month.labels.length).toBeLessThanOrEqual(8);
    expect(month.labels.at(-1)).toMatchObject({ day: 29, text: "05-30" });
    const week = stackedBars({ days: days(7), series: [Array(7).fill(1)] });
    expect(week.labels.map((l) => l.text)).toEqual(["05-01", "05-02", "05-03", "05-04", "05-05", "05-06", "05-07"]);
  });
});

test("nice steps and tick labels", () => {
  expect(niceStep(40)).toBe(10);
  expect(niceStep(41)).toBe(20);
  expect(niceStep(9_000)).toBe(2_500);
  expect(niceStep(0.3)).toBe(0.1);
  expect(niceStep(0)).toBe(1);
  expect(tickLabel(2_500)).toBe("2,500");
  expect(tickLabel(1_500_000)).toBe("1.5M");
  expect(tickLabel(0.25)).toBe("0.25");
});
