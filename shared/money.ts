/**
 * Money as the API speaks it: a decimal string with exactly two places ("12.34") in a
 * fiat currency. Inside, an amount is a bigint of minor units (cents); per network it
 * becomes token base units (USDC: 6 decimals, so "12.34" → 12_340_000n). Never a
 * JavaScript number: floats cannot hold every cent exactly.
 */

/** Currencies a session may be priced in. Stablecoins are dollar-pegged, so only USD. */
export const SUPPORTED_CURRENCIES = ["USD"] as const;
export type Currency = (typeof SUPPORTED_CURRENCIES)[number];

export function isSupportedCurrency(code: string): code is Currency {
  return (SUPPORTED_CURRENCIES as readonly string[]).includes(code);
}

/** Exactly: digits, a dot, two digits; no sign, no exponent, no leading zeros ("01.00"). */
const AMOUNT_PATTERN = /^(0|[1-9][0-9]{0,15})\.[0-9]{2}$/;
export const AMOUNT_PATTERN_SOURCE = AMOUNT_PATTERN.source;

export type AmountParse =
  | { ok: true; minor: bigint }
  | { ok: false; problem: "format" | "zero" };

/** "12.34" → 1234n; anything else is refused with the reason. */
export function parseAmount(text: string): AmountParse {
  if (!AMOUNT_PATTERN.test(text)) return { ok: false, problem: "format" };
  const [whole, frac] = text.split(".") as [string, string];
  const minor = BigInt(whole) * 100n + BigInt(frac);
  if (minor === 0n) return { ok: false, problem: "zero" };
  return { ok: true, minor };
}

/** 1234n → "12.34". */
export function formatAmount(minor: bigint): string {
  if (minor < 0n) throw new RangeError("negative amount");
  const whole = minor / 100n;
  const frac = minor % 100n;
  return `${whole}.${frac.toString().padStart(2, "0")}`;
}

/** Minor units (2 decimals) → token base units (`decimals` ≥ 2). */
export function minorToBaseUnits(minor: bigint, decimals: number): bigint {
  if (!Number.isInteger(decimals) || decimals < 2) throw new RangeError(`token decimals ${decimals} < 2`);
  return minor * 10n ** BigInt(decimals - 2);
}

/** An amount in the unit as a decimal string: at least two places, no trailing zeros past them ("12.34", "12.345678"). */
export function formatUnitAmount(amount: bigint, unitDecimals: number): string {
  if (amount < 0n) throw new RangeError("negative amount");
  if (unitDecimals < 2) throw new RangeError(`unit decimals ${unitDecimals} < 2`);
  const scale = 10n ** BigInt(unitDecimals);
  const frac = (amount % scale).toString().padStart(unitDecimals, "0").replace(/0+$/, "").padEnd(2, "0");
  return `${amount / scale}.${frac}`;
}

/**
 * What a session's live refunds hold, as one amount in the session's currency (`amountRefunded`):
 * each network's totals are in its own unit, so each is brought to the finest of them first.
 */
export function refundedTotal(held: readonly { held: bigint; unitDecimals: number }[]): string {
  if (held.length === 0) return "0.00";
  const unit = Math.max(2, ...held.map((h) => h.unitDecimals));
  return formatUnitAmount(held.reduce((s, h) => s + h.held * 10n ** BigInt(unit - h.unitDecimals), 0n), unit);
}
