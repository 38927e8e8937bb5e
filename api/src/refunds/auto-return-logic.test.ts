/** What an automatic return gives back, case by case (refunds/logic.ts autoReturnAmount, planRefund's upToRest). */
import { describe, expect, test } from "bun:test";
import { autoReturnAmount, planRefund, type Refundable, type ReturnFacts, type TimedPayment } from "./logic.ts";

const U = (cents: number) => BigInt(cents) * 10_000n; // cents → 6-decimal unit
const EXPIRY = new Date("2026-01-01T12:00:00Z");
const before = new Date(EXPIRY.getTime() - 60_000);
const after = new Date(EXPIRY.getTime() + 60_000);
const pay = (cents: number, at: Date | null = before, reverted = false): TimedPayment => ({ amount: U(cents), blockTimestamp: at, reverted });
const facts = (over: Partial<ReturnFacts>): ReturnFacts => ({ required: U(1000), expiresAt: EXPIRY, fundingChainId: 1, underpaid: false, chainId: 1, payments: [], ...over });

describe("overpayment", () => {
  test("the excess above the price on the funding network, to the base unit", () => {
    expect(autoReturnAmount("overpayment", facts({ payments: [pay(1001)] }))).toBe(U(1));
    expect(autoReturnAmount("overpayment", facts({ payments: [{ amount: U(1000) + 7n, blockTimestamp: before, reverted: false }] }))).toBe(7n);
  });
  test("a price paid exactly, or in two payments that add up to it, returns nothing", () => {
    expect(autoReturnAmount("overpayment", facts({ payments: [pay(1000)] }))).toBe(0n);
    expect(autoReturnAmount("overpayment", facts({ payments: [pay(400), pay(600)] }))).toBe(0n);
  });
  test("two on-time payments over the price: the excess of their sum", () => {
    expect(autoReturnAmount("overpayment", facts({ payments: [pay(1000), pay(250)] }))).toBe(U(250));
  });
  test("late money is not part of the overpayment (it is a late payment), reverted money not at all", () => {
    expect(autoReturnAmount("overpayment", facts({ payments: [pay(1000), pay(300, after), pay(500, before, true)] }))).toBe(0n);
  });
  test("on another network of a session paid in full: all that arrived there by the expiry", () => {
    expect(autoReturnAmount("overpayment", facts({ chainId: 8453, payments: [pay(700), pay(100, after)] }))).toBe(U(700));
  });
  test("a session never paid in full has no overpayment", () => {
    expect(autoReturnAmount("overpayment", facts({ fundingChainId: null, underpaid: true, payments: [pay(900)] }))).toBe(0n);
  });
  test("a row without a block time counts as on time", () => {
    expect(autoReturnAmount("overpayment", facts({ payments: [pay(1100, null)] }))).toBe(U(100));
  });
});

describe("late_payment", () => {
  test("a paid session: only what arrived after the expiry", () => {
    expect(autoReturnAmount("late_payment", facts({ payments: [pay(1000), pay(300, after), pay(200, after)] }))).toBe(U(500));
  });
  test("an underpaid session: only what arrived after the expiry (the rest is the underpaid return)", () => {
    expect(autoReturnAmount("late_payment", facts({ fundingChainId: null, underpaid: true, payments: [pay(400), pay(300, after)] }))).toBe(U(300));
  });
  test("a session that ended unpaid (expired or canceled, then paid): everything, even before the clock's expiry", () => {
    expect(autoReturnAmount("late_payment", facts({ fundingChainId: null, payments: [pay(1000), pay(50, after)] }))).toBe(U(1050));
  });
  test("a late payment the chain took back returns nothing", () => {
    expect(autoReturnAmount("late_payment", facts({ fundingChainId: null, payments: [pay(1000, after, true)] }))).toBe(0n);
  });
});

describe("underpaid_expired", () => {
  test("an underpaid session: all that arrived by the expiry", () => {
    expect(autoReturnAmount("underpaid_expired", facts({ fundingChainId: null, underpaid: true, payments: [pay(400), pay(150), pay(300, after)] }))).toBe(U(550));
  });
  test("a paid session, or one not underpaid, has none", () => {
    expect(autoReturnAmount("underpaid_expired", facts({ payments: [pay(400)] }))).toBe(0n);
    expect(autoReturnAmount("underpaid_expired", facts({ fundingChainId: null, payments: [pay(400)] }))).toBe(0n);
  });
});

test("the three reasons never count one payment twice: together at most what was received", () => {
  const cases: ReturnFacts[] = [
    facts({ payments: [pay(1200), pay(300, after)] }),
    facts({ fundingChainId: null, underpaid: true, payments: [pay(400), pay(300, after)] }),
    facts({ fundingChainId: null, payments: [pay(400), pay(300, after)] }),
    facts({ chainId: 8453, payments: [pay(400), pay(300, after)] }),
  ];
  for (const f of cases) {
    const total = (["overpayment", "late_payment", "underpaid_expired"] as const).reduce((s, r) => s + autoReturnAmount(r, f), 0n);
    const received = f.payments.filter((p) => !p.reverted).reduce((s, p) => s + p.amount, 0n);
    expect(total <= received).toBe(true);
  }
});

describe("planRefund for an automatic return", () => {
  const rest = (token: string, rest: bigint): Refundable => ({ chainId: 1, token, symbol: "T", decimals: 6, unitDecimals: 6, received: rest, held: 0n, rest });
  test("an exact amount in the unit (not whole cents) is refunded as it is", () => {
    const plan = planRefund({ amountUnits: 12_345n, chainId: 1 }, [rest("0xa", U(500))]);
    expect(plan).toMatchObject({ ok: true, amount: 12_345n, parts: [{ token: "0xa", amount: 12_345n, baseUnits: 12_345n }] });
  });
  test("upToRest lowers the amount to what is left instead of refusing it", () => {
    expect(planRefund({ amountUnits: U(900), chainId: 1, upToRest: true }, [rest("0xa", U(500))])).toMatchObject({ ok: true, amount: U(500) });
    expect(planRefund({ amountUnits: U(900), chainId: 1 }, [rest("0xa", U(500))])).toMatchObject({ ok: false, problem: "exceeds" });
  });
  test("nothing left: still refused (the return then has nothing to do)", () => {
    expect(planRefund({ amountUnits: U(900), chainId: 1, upToRest: true }, [rest("0xa", 0n)])).toMatchObject({ ok: false, problem: "exceeds" });
  });
});
