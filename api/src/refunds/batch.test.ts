import { describe, expect, test } from "bun:test";
import { chooseBatch, minorOf, partsPaid, type DueRefund } from "./batch.ts";

const T = "0x00000000000000000000000000000000000000c1";
const U = "0x00000000000000000000000000000000000000d2";
const due = (id: string, owner: string, cents: number, parts: [string, bigint][] = [[T, BigInt(cents) * 10_000n]]): DueRefund => ({ id, owner, minor: BigInt(cents), parts: parts.map(([token, baseUnits]) => ({ token, baseUnits })) });

describe("chooseBatch", () => {
  test("in order, while the vault holds each part; one that does not waits and the next still goes", () => {
    const c = chooseBatch([due("a", "m1", 300), due("b", "m1", 300), due("c", "m1", 100)], new Map(), new Map([[`m1 ${T}`, 5_000_000n]]), 1_000_000n);
    expect(c).toEqual({ send: ["a", "c"], wait: [{ id: "b", reason: "insufficient_refund_balance" }] });
  });

  test("a refund in two tokens goes only if both are covered; never in part", () => {
    const two = due("a", "m1", 200, [
      [T, 1_000_000n],
      [U, 1_000_000n],
    ]);
    expect(chooseBatch([two], new Map(), new Map([[`m1 ${T}`, 9_000_000n]]), 1_000_000n).wait).toEqual([{ id: "a", reason: "insufficient_refund_balance" }]);
    expect(chooseBatch([two], new Map(), new Map([[`m1 ${T}`, 1_000_000n], [`m1 ${U}`, 1_000_000n]]), 1_000_000n).send).toEqual(["a"]);
  });

  test("one merchant's vault never covers another's", () => {
    const c = chooseBatch([due("a", "m2", 100)], new Map(), new Map([[`m1 ${T}`, 9_000_000n]]), 1_000_000n);
    expect(c.wait).toEqual([{ id: "a", reason: "insufficient_refund_balance" }]);
  });

  test("the day's limit per merchant: what was sent today counts, and so does the batch so far", () => {
    const balances = new Map([
      [`m1 ${T}`, 99_000_000n],
      [`m2 ${T}`, 99_000_000n],
    ]);
    const c = chooseBatch([due("a", "m1", 400), due("b", "m1", 200), due("c", "m2", 500)], new Map([["m1", 500n]]), balances, 1_000n);
    expect(c).toEqual({ send: ["a", "c"], wait: [{ id: "b", reason: "spend_guard" }] });
  });
});

test("minorOf rounds up: a sub-cent refund counts a whole cent", () => {
  expect(minorOf(12_340_000n, 6)).toBe(1234n);
  expect(minorOf(12_340_001n, 6)).toBe(1235n);
  expect(minorOf(1n, 6)).toBe(1n);
});

describe("partsPaid", () => {
  const V = "0x00000000000000000000000000000000000000aa";
  const P = "0x00000000000000000000000000000000000000bb";
  test("each part must be a Transfer of its token from the vault to its destination of exactly its amount", () => {
    const logs = [{ token: T, from: V, to: P, value: 5n }];
    expect(partsPaid([{ token: T, to: P, baseUnits: 5n }], V, logs, new Set())).toBe(true);
    expect(partsPaid([{ token: T, to: P, baseUnits: 4n }], V, logs, new Set())).toBe(false);
    expect(partsPaid([{ token: U, to: P, baseUnits: 5n }], V, logs, new Set())).toBe(false);
    expect(partsPaid([{ token: T, to: V, baseUnits: 5n }], V, logs, new Set())).toBe(false);
    expect(partsPaid([{ token: T, to: P, baseUnits: 5n }], P, logs, new Set())).toBe(false);
  });
  test("one log pays one part only, across the refunds of a receipt", () => {
    const logs = [{ token: T, from: V, to: P, value: 5n }];
    const used = new Set<number>();
    expect(partsPaid([{ token: T, to: P, baseUnits: 5n }], V, logs, used)).toBe(true);
    expect(partsPaid([{ token: T, to: P, baseUnits: 5n }], V, logs, used)).toBe(false);
  });
});
