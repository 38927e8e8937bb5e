/**
 * The geometry of the home page's stacked bar chart, as plain numbers (pixels): one bar per
 * day, one segment per series, a y axis with round ticks, a day label every few bars. Pure, so
 * it is tested apart from the page (chart.test.ts); pages/home.ts turns it into SVG. The
 * values are numbers because they only place pixels: every figure printed as money comes from
 * the exact bigints beside the chart, never from here.
 */

export interface ChartInput {
  /** YYYY-MM-DD, oldest first: the bars from left to right. */
  days: string[];
  /** Per series, one value per day (token units; ≥ 0). Stacked bottom-up in this order. */
  series: number[][];
  width?: number;
  height?: number;
}

export interface Bar {
  series: number;
  day: number;
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface Tick {
  value: number;
  y: number;
  label: string;
}

export interface DayLabel {
  day: number;
  /** The centre of the day's bar. */
  x: number;
  text: string;
}

export interface Chart {
  width: number;
  height: number;
  plot: { left: number; top: number; right: number; bottom: number };
  bars: Bar[];
  ticks: Tick[];
  labels: DayLabel[];
}

const MARGIN = { left: 56, right: 8, top: 10, bottom: 26 };
/** Roughly this many ticks on the y axis, and at most this many day labels. */
const TICKS = 4;
const LABELS = 8;

const r2 = (x: number) => Math.round(x * 100) / 100;

/** The smallest step of 1, 2, 2.5 or 5 × 10^k that covers `max` in about `count` steps. */
export function niceStep(max: number, count = TICKS): number {
  if (!(max > 0)) return 1;
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * power >= raw) return m * power;
  return 10 * power;
}

const plain = new Intl.NumberFormat("en-US", { maximumFractionDigits: 2 });
const compact = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 });
export const tickLabel = (v: number) => (v >= 10_000 ? compact.format(v) : plain.format(v));

export function stackedBars(input: ChartInput): Chart {
  const width = input.width ?? 720;
  const height = input.height ?? 240;
  const plot = { left: MARGIN.left, top: MARGIN.top, right: width - MARGIN.right, bottom: height - MARGIN.bottom };
  const n = input.days.length;
  const totals = input.days.map((_, d) => input.series.reduce((sum, values) => sum + Math.max(0, values[d] ?? 0), 0));
  const step = niceStep(Math.max(0, ...totals));
  const top = Math.max(step, Math.ceil(Math.max(0, ...totals) / step) * step);
  const scale = (plot.bottom - plot.top) / top;

  const ticks: Tick[] = [];
  for (let v = 0; v <= top + step / 2; v += step) ticks.push({ value: v, y: r2(plot.bottom - v * scale), label: tickLabel(v) });

  const slot = n > 0 ? (plot.right - plot.left) / n : 0;
  const barWidth = Math.max(1, slot * 0.7);
  const bars: Bar[] = [];
  for (let d = 0; d < n; d++) {
    const x = plot.left + d * slot + (slot - barWidth) / 2;
    let base = plot.bottom;
    input.series.forEach((values, s) => {
      const v = Math.max(0, values[d] ?? 0);
      if (v === 0) return;
      // At least a pixel, so a small day still shows it had something.
      const h = Math.max(1, v * scale);
      base -= h;
      bars.push({ series: s, day: d, x: r2(x), y: r2(base), width: r2(barWidth), height: r2(h) });
    });
  }

  // A label every `every` days, counted back from the newest, so today is always labelled.
  const every = Math.max(1, Math.ceil(n / LABELS));
  const labels: DayLabel[] = [];
  for (let d = n - 1; d >= 0; d -= every) labels.unshift({ day: d, x: r2(plot.left + d * slot + slot / 2), text: input.days[d]!.slice(5) });

  return { width, height, plot, bars, ticks, labels };
}
