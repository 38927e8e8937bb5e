/** The home page's figures from per-day groups (home-figures.ts): period, counts, success rate, exact volume. */
import { describe, expect, test } from "bun:test";
import type { DayGroup } from "../db/schema.ts";
import { figures, parsePeriod, percent, periodDays, runsOf, tokenLabel } from "./home-figures.ts";
import { PRESETS } from "../../../shared/chains/presets.ts";

const TUSD = PRESETS.local.stablecoins[0].address!.toLowerCase();
const g = (status: string, sessions: number, paid?: { chainId: number; amount: string; token?: string; decimals?: number }): DayGroup => ({
  status,
  sessions,
  chainId: paid?.chainId ?? null,
  token: paid ? (paid.token ?? TUSD) : null,
  decimals: paid ? (paid.decimals ?? 6) : null,
  amount: paid?.amount ?? "0",
});

describe("period", () => {
  test("7, 30 or 90 days; nothing is the default 30; anything else is a problem (and 30)", () => {
    expect(parsePeriod(undefined)).toEqual({ days: 30 });
    expect(parsePeriod("")).toEqual({ days: 30 });
    expect(parsePeriod("7")).toEqual({ days: 7 });
    expect(parsePeriod("90")).toEqual({ days: 90 });
    for (const bad of ["8", "-7", "7.0", "1e1", "90 ", "<b>", "0090"]) {
      const p = parsePeriod(bad);
      expect(p.days).toBe(30);
      expect(p.problem).toContain("7, 30, 90 days");
    }
  });

  test("whole UTC days ending today, oldest first, across a month and a leap day", () => {
    expect(periodDays("2028-03-01", 3)).toEqual(["2028-02-28", "2028-02-29", "2028-03-01"]);
    expect(periodDays("2026-01-02", 7)[0]).toBe("2025-12-27");
    expect(periodDays("2026-01-02", 90)).toHaveLength(90);
    expect(() => periodDays("yesterday", 7)).toThrow();
  });

  test("days to count, as runs of consecutive days (one statement each)", () => {
    expect(runsOf([])).toEqual([]);
    expect(runsOf(["2026-03-02", "2026-02-28", "2026-03-01", "2026-03-05"])).toEqual([
      ["2026-02-28", "2026-03-02"],
      ["2026-03-05", "2026-03-05"],
    ]);
    expect(runsOf(periodDays("2026-03-10", 7), 3)).toEqual([
      ["2026-03-04", "2026-03-06"],
      ["2026-03-07", "2026-03-09"],
      ["2026-03-10", "2026-03-10"],
    ]);
  });
});

describe("figures", () => {
  const days = ["2026-05-01", "2026-05-02", "2026-05-03"];
  const byDay = new Map<string, DayGroup[]>([
    ["2026-05-01", [g("SUCCEEDED", 2, { chainId: 31337, amount: "20000001" }), g("CANCELED", 1), g("PENDING", 4)]],
    // Outside the period: ignored.
    ["2026-04-30", [g("SUCCEEDED", 100, { chainId: 31337, amount: "1" })]],
    [
      "2026-05-03",
      [
        g("SUCCEEDED", 1, { chainId: 31338, amount: "5000000" }),
        g("FUNDED", 1, { chainId: 31337, amount: "999999999999999999999999" }),
        // ERROR after payment (sweep failed): counted by status, not in the received volume.
        g("ERROR", 1, { chainId: 31337, amount: "7000000" }),
        g("ERROR", 1),
      ],
    ],
  ]);
  const f = figures(days, byDay);

  test("counts by status over the period's days", () => {
    expect(f.byStatus).toEqual({ PENDING: 4, FUNDED: 1, SUCCEEDED: 3, CANCELED: 1, ERROR: 2 });
    expect(f.sessions).toBe(11);
  });

  test("success rate: SUCCEEDED over the sessions that ended (SUCCEEDED, CANCELED, ERROR)", () => {
    expect(f.success).toEqual({ succeeded: 3, ended: 6, perMille: 500 });
    expect(figures(days, new Map([["2026-05-01", [g("PENDING", 3)]]])).success.perMille).toBeNull();
    expect(percent(973)).toBe("97.3 %");
    expect(percent(1000)).toBe("100.0 %");
    expect(percent(0)).toBe("0.0 %");
  });

  test("received: FUNDED and SUCCEEDED per network and token, per day, summed exactly as bigints", () => {
    expect(f.series.map((s) => [s.key, s.perDay, s.total])).toEqual([
      [`31337:${TUSD}`, [20000001n, 0n, 999999999999999999999999n], 1000000000000000020000000n],
      [`31338:${TUSD}`, [0n, 0n, 5000000n], 5000000n],
    ]);
    expect(f.series[0]!.label).toBe("Local test network (anvil) · TUSD");
  });

  test("a token that is not the network's known stablecoin is named by its address", () => {
    expect(tokenLabel(31337, TUSD)).toBe("TUSD");
    expect(tokenLabel(31337, "0x1111111111111111111111111111111111112222")).toBe("token 0x1111…2222");
    expect(tokenLabel(999, TUSD)).toMatch(/^token 0x/);
  });
});
