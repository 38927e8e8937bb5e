import { expect, test } from "bun:test";
import { formatAmount, minorToBaseUnits, parseAmount } from "./money.ts";

test("amounts with exactly two places parse to cents", () => {
  expect(parseAmount("12.34")).toEqual({ ok: true, minor: 1234n });
  expect(parseAmount("0.01")).toEqual({ ok: true, minor: 1n });
  expect(parseAmount("1000000.00")).toEqual({ ok: true, minor: 100000000n });
  expect(parseAmount("9999999999999999.99")).toEqual({ ok: true, minor: 999999999999999999n });
});

test("everything else is refused", () => {
  for (const bad of ["1", "1.001", "-1.00", "1e3", "01.00", "1.0", ".50", "1.", "", " 1.00", "1.00 ", "+1.00", "１.００", "99999999999999999.00"]) {
    expect(parseAmount(bad).ok).toBe(false);
  }
  expect(parseAmount("0.00")).toEqual({ ok: false, problem: "zero" });
});

test("format is the inverse of parse; base units scale by decimals without floats", () => {
  for (const s of ["0.01", "0.10", "12.34", "1000000.00"]) {
    const p = parseAmount(s);
    expect(p.ok && formatAmount(p.minor)).toBe(s);
  }
  expect(minorToBaseUnits(1234n, 6)).toBe(12_340_000n);
  expect(minorToBaseUnits(1n, 18)).toBe(10_000_000_000_000_000n);
  expect(() => minorToBaseUnits(1n, 1)).toThrow();
});
