import { describe, expect, test } from "bun:test";
import { formatUnitAmount, refundedTotal } from "../../../shared/money.ts";
import {
  nextRefundState,
  onePayer,
  planRefund,
  refundableRests,
  splitProportionally,
  unitToTokenUnits,
  REFUND_STATES,
  type Refundable,
  type RefundEvent,
  type SessionNetwork,
} from "./logic.ts";

const USDC = "0x00000000000000000000000000000000000000c1";
const USDT = "0x00000000000000000000000000000000000000d2";
const DAI = "0x00000000000000000000000000000000000000e3";
const U = (cents: number) => BigInt(cents) * 10_000n; // cents → 6-decimal unit

const base: SessionNetwork = {
  chainId: 1,
  mainToken: USDC,
  unitDecimals: 6,
  tokens: [
    { address: USDC, symbol: "USDC", decimals: 6 },
    { address: USDT, symbol: "USDT", decimals: 6 },
  ],
};
const other: SessionNetwork = { ...base, chainId: 8453 };

describe("refundableRests", () => {
  test("received per token (a row without a token is the main one), reverted money left out, held taken off", () => {
    const rests = refundableRests(
      [base],
      [
        { chainId: 1, token: null, amount: U(300), reverted: false },
        { chainId: 1, token: USDC, amount: U(200), reverted: false },
        { chainId: 1, token: USDT, amount: U(250), reverted: false },
        { chainId: 1, token: USDT, amount: U(999), reverted: true },
      ],
      [{ chainId: 1, token: USDT, held: U(50) }],
    );
    expect(rests.map((r) => [r.token, r.received, r.held, r.rest])).toEqual([
      [USDC, U(500), 0n, U(500)],
      [USDT, U(250), U(50), U(200)],
    ]);
  });

  test("tokens that received nothing, stray tokens and other networks' money stay apart", () => {
    const rests = refundableRests(
      [base, other],
      [
        { chainId: 1, token: DAI, amount: U(100), reverted: false },
        { chainId: 8453, token: USDT, amount: U(100), reverted: false },
      ],
      [],
    );
    expect(rests.map((r) => [r.chainId, r.token, r.rest])).toEqual([[8453, USDT, U(100)]]);
  });

  test("held above received (a payment reverted after a refund) leaves zero, never a negative rest", () => {
    const [r] = refundableRests([base], [{ chainId: 1, token: USDC, amount: U(100), reverted: false }], [{ chainId: 1, token: USDC, held: U(150) }]);
    expect(r!.rest).toBe(0n);
  });
});

describe("amounts", () => {
  test("unit → token base units, exact", () => {
    expect(unitToTokenUnits(12_340_000n, 6, 6)).toBe(12_340_000n);
    expect(unitToTokenUnits(12_340_000_000_000_000_000n, 18, 6)).toBe(12_340_000n);
    expect(() => unitToTokenUnits(12_340_000_000_000_000_001n, 18, 6)).toThrow(RangeError);
  });

  test("format: at least two places, exact", () => {
    expect(formatUnitAmount(12_340_000n, 6)).toBe("12.34");
    expect(formatUnitAmount(12_345_678n, 6)).toBe("12.345678");
    expect(formatUnitAmount(0n, 6)).toBe("0.00");
    expect(formatUnitAmount(5n, 6)).toBe("0.000005");
    expect(formatUnitAmount(100n, 2)).toBe("1.00");
  });
});

const rest = (token: string, r: bigint, decimals = 6, unitDecimals = 6): Refundable => ({ chainId: 1, token, symbol: "X", decimals, unitDecimals, received: r, held: 0n, rest: r });

describe("splitProportionally", () => {
  test("half and half: half each", () => {
    expect(splitProportionally(U(200), [rest(USDC, U(250)), rest(USDT, U(250))])).toEqual([
      { chainId: 1, token: USDC, amount: U(100), baseUnits: U(100) },
      { chainId: 1, token: USDT, amount: U(100), baseUnits: U(100) },
    ]);
  });

  test("a remainder goes to the larger rest; the parts add up exactly", () => {
    // 1 base unit over 1:2 → 0.33.. and 0.66..: floors 0 and 0, the one unit to the larger.
    const parts = splitProportionally(1n, [rest(USDC, 100n), rest(USDT, 200n)])!;
    expect(parts).toEqual([{ chainId: 1, token: USDT, amount: 1n, baseUnits: 1n }]);
    const odd = splitProportionally(10n, [rest(USDC, 1n), rest(USDT, 1n), rest(DAI, 1n)]);
    expect(odd).toBeUndefined(); // above the total
    const three = splitProportionally(2n, [rest(USDC, 1n), rest(USDT, 1n), rest(DAI, 1n)])!;
    expect(three.map((p) => [p.token, p.amount])).toEqual([
      [USDC, 1n],
      [USDT, 1n],
    ]); // a tie: the first in order first
  });

  test("never more than a token's rest, whatever the rounding", () => {
    for (let amount = 1n; amount <= 300n; amount++) {
      const parts = splitProportionally(amount, [rest(USDC, 101n), rest(USDT, 199n)])!;
      expect(parts.reduce((s, p) => s + p.amount, 0n)).toBe(amount);
      for (const p of parts) expect(p.amount).toBeLessThanOrEqual(p.token === USDC ? 101n : 199n);
    }
  });

  test("a coarser token takes whole base units only; the rest goes where it fits", () => {
    // Unit 18 decimals; USDC 6 (one base unit = 10^12 in the unit), DAI 18.
    const g = 10n ** 12n;
    const parts = splitProportionally(3n * g, [rest(USDC, 5n * g, 6, 18), rest(DAI, 5n * g, 18, 18)])!;
    expect(parts.reduce((s, p) => s + p.amount, 0n)).toBe(3n * g);
    const usdc = parts.find((p) => p.token === USDC)!;
    expect(usdc.amount % g).toBe(0n);
    expect(usdc.baseUnits * g).toBe(usdc.amount);
  });

  test("a remainder no token can take in whole base units: impossible, name the token", () => {
    const g = 10n ** 12n;
    expect(splitProportionally(g + 1n, [rest(USDC, 5n * g, 6, 18), rest(USDT, 5n * g, 6, 18)])).toBeUndefined();
  });
});

describe("planRefund", () => {
  const two = [rest(USDC, U(250)), rest(USDT, U(250))];

  test("nothing received: not refundable", () => {
    expect(planRefund({}, [])).toEqual({ ok: false, problem: "not_refundable" });
  });

  test("no amount: the whole rest, in proportion", () => {
    const p = planRefund({}, two);
    expect(p).toMatchObject({ ok: true, chainId: 1, amount: U(500), parts: [{ token: USDC, baseUnits: U(250) }, { token: USDT, baseUnits: U(250) }] });
  });

  test("an amount in cents becomes the unit; a named token takes it all", () => {
    const p = planRefund({ amountMinor: 123n, token: USDT }, two);
    expect(p).toMatchObject({ ok: true, amount: U(123), parts: [{ token: USDT, amount: U(123), baseUnits: U(123) }] });
  });

  test("above the rest, or nothing left: exceeds, with the rest", () => {
    expect(planRefund({ amountMinor: 501n }, two)).toMatchObject({ ok: false, problem: "exceeds", rest: U(500) });
    const spent = [{ ...rest(USDC, U(250)), held: U(250), rest: 0n }];
    expect(planRefund({}, spent)).toMatchObject({ ok: false, problem: "exceeds", rest: 0n });
    expect(planRefund({ amountMinor: 1n, token: USDT }, [rest(USDT, 9_999n)])).toMatchObject({ ok: false, problem: "exceeds" });
  });

  test("a token the session did not receive, a network it could not be paid on, one it received nothing on", () => {
    expect(planRefund({ token: DAI }, two)).toMatchObject({ ok: false, problem: "token_unknown" });
    // Not among the session's networks (its rests list each of them): the ask is wrong, not too large.
    expect(planRefund({ chainId: 8453 }, two)).toEqual({ ok: false, problem: "chain_unknown" });
    expect(planRefund({ chainId: 8453 }, [...two, { ...rest(USDC, 0n), chainId: 8453 }])).toMatchObject({ ok: false, problem: "exceeds", rest: 0n });
  });

  test("money left on two networks: the request must say which", () => {
    const both = [rest(USDC, U(100)), { ...rest(USDC, U(100)), chainId: 8453 }];
    expect(planRefund({}, both)).toEqual({ ok: false, problem: "chain_required" });
    expect(planRefund({ chainId: 10 }, both)).toEqual({ ok: false, problem: "chain_unknown" });
    expect(planRefund({ chainId: 8453 }, both)).toMatchObject({ ok: true, chainId: 8453, amount: U(100) });
  });
});

describe("nextRefundState", () => {
  const all = (event: RefundEvent) => Object.fromEntries(REFUND_STATES.map((s) => [s, nextRefundState(s, event)]));

  test("cancel: only while PENDING, and it gives the amount back, with refund.canceled", () => {
    const r = all({ kind: "cancel" });
    expect(r.PENDING).toEqual({ ok: true, to: "CANCELED", releases: true, webhook: "refund.canceled" });
    for (const s of ["SENT", "SUCCEEDED", "FAILED", "CANCELED"]) expect(r[s]!.ok).toBe(false);
  });

  test("sent: PENDING → SENT, with refund.sent", () => {
    const r = all({ kind: "sent", transactionId: "stx_1" });
    expect(r.PENDING).toEqual({ ok: true, to: "SENT", releases: false, webhook: "refund.sent" });
    for (const s of ["SENT", "SUCCEEDED", "FAILED", "CANCELED"]) expect(r[s]!.ok).toBe(false);
  });

  test("from SENT: succeeded keeps the amount held, failed gives it back, dropped goes out again", () => {
    expect(nextRefundState("SENT", { kind: "succeeded" })).toEqual({ ok: true, to: "SUCCEEDED", releases: false, webhook: "refund.succeeded" });
    expect(nextRefundState("SENT", { kind: "failed", reason: "reverted" })).toEqual({ ok: true, to: "FAILED", releases: true, webhook: "refund.failed" });
    expect(nextRefundState("SENT", { kind: "dropped" })).toEqual({ ok: true, to: "PENDING", releases: false });
    for (const e of [{ kind: "succeeded" }, { kind: "failed", reason: "reverted" }] as RefundEvent[]) {
      for (const s of ["PENDING", "SUCCEEDED", "FAILED", "CANCELED"] as const) expect(nextRefundState(s, e).ok).toBe(false);
    }
  });

  test("a SUCCEEDED refund whose transaction the chain took back goes out again; nothing else can lose one", () => {
    expect(nextRefundState("SUCCEEDED", { kind: "dropped" })).toEqual({ ok: true, to: "PENDING", releases: false });
    for (const s of ["PENDING", "FAILED", "CANCELED"] as const) expect(nextRefundState(s, { kind: "dropped" }).ok).toBe(false);
  });
});

describe("onePayer", () => {
  const A = "0x00000000000000000000000000000000000000Aa";
  test("one sender, however often and however spelt", () => {
    expect(onePayer([A, A.toLowerCase()])).toBe(A.toLowerCase());
  });
  test("several senders, an unknown one, none, or the zero address: no destination", () => {
    expect(onePayer([A, USDC])).toBeUndefined();
    expect(onePayer([A, null])).toBeUndefined();
    expect(onePayer([])).toBeUndefined();
    expect(onePayer(["0x0000000000000000000000000000000000000000"])).toBeUndefined();
  });
});

describe("refundedTotal", () => {
  test("nothing: 0.00; one network: its unit; two with different units: exact in the finer", () => {
    expect(refundedTotal([])).toBe("0.00");
    expect(refundedTotal([{ held: 12_340_000n, unitDecimals: 6 }])).toBe("12.34");
    expect(refundedTotal([{ held: 1_000_000n, unitDecimals: 6 }, { held: 5n, unitDecimals: 18 }])).toBe("1.000000000000000005");
  });
});
