import { describe, expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { TransformDecodeError } from "@sinclair/typebox/value";
import { findInChain } from "../../../shared/error-chain.ts";
import { col, decodeFirst, decodeRow, decodeRows, rowShape, RowShapeMismatch } from "./rows.ts";

const Shape = rowShape("test row", {
  id: col.text,
  n: col.int,
  big: col.bigint,
  at: col.time,
  detail: col.json(),
  status: col.oneOf(["PENDING", "FUNDED"] as const),
  reference: col.nullable(col.text),
});

describe("decodeRows", () => {
  test("decodes text times and json, keeps the rest as sent", () => {
    const [r] = decodeRows(Shape, [{ id: "a", n: 1, big: 2n, at: "2026-11-26 03:00:00.5+00", detail: '{"x":1}', status: "FUNDED", reference: null, extra: true }]);
    expect(r!.at).toBeInstanceOf(Date);
    expect(r!.at.toISOString()).toBe("2026-11-26T03:00:00.500Z");
    expect(r!.detail).toEqual({ x: 1 });
    expect(r!.big).toBe(2n);
    expect(r!.status).toBe("FUNDED");
    expect(r!.reference).toBeNull();
  });

  test("a Date or parsed json passes through", () => {
    const at = new Date("2026-01-01T00:00:00Z");
    const r = decodeFirst(Shape, [{ id: "a", n: 1, big: 2n, at, detail: { y: [1] }, status: "PENDING", reference: "r" }]);
    expect(r!.at.getTime()).toBe(at.getTime());
    expect(r!.detail).toEqual({ y: [1] });
    expect(decodeFirst(Shape, [])).toBeUndefined();
  });

  test("a missing column, a wrong type or an unknown status names the statement and the column", () => {
    const good = { id: "a", n: 1, big: 2n, at: "2026-11-26", detail: "{}", status: "PENDING", reference: null };
    for (const [bad, column] of [
      [{ ...good, id: undefined }, "/id"],
      [{ ...good, big: "2" }, "/big"],
      [{ ...good, status: "SETTLED" }, "/status"],
      [{ ...good, reference: 3 }, "/reference"],
    ] as const) {
      let error: unknown;
      try {
        decodeRows(Shape, [bad]);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(RowShapeMismatch);
      expect(String(error)).toContain('"test row"');
      expect(String(error)).toContain(column);
    }
  });

  test("a column that would not decode: the mismatch names it and keeps the decoder's error as its cause", () => {
    const row = { id: "a", n: 1, big: 2n, at: "not a time", detail: "{}", status: "PENDING", reference: null };
    let error: unknown;
    try {
      decodeRows(Shape, [row]);
    } catch (e) {
      error = e;
    }
    const mismatch = findInChain(error, (x) => x instanceof RowShapeMismatch);
    expect(mismatch?.message).toBe('row of "test row" does not have its documented shape: /at: not a time: not a time');
    expect(mismatch?.cause).toBeInstanceOf(TransformDecodeError);
    expect(mismatch?.walk((x) => x instanceof TransformDecodeError)).toBe(mismatch?.cause as TransformDecodeError);
  });

  test("wholeNumber: a bigint, decimal text or safe JSON integer, exactly; a JSON number past 2^53 is refused", () => {
    const W = rowShape("whole", { n: col.wholeNumber });
    expect(decodeRows(W, [{ n: 5n }, { n: "123456789012345678901234567890" }, { n: 42 }]).map((r) => r.n)).toEqual([5n, 123456789012345678901234567890n, 42n]);
    expect(() => decodeRows(W, [{ n: 2 ** 60 }])).toThrow(RowShapeMismatch);
    expect(() => decodeRows(W, [{ n: 1.5 }])).toThrow(RowShapeMismatch);
    expect(() => decodeRows(W, [{ n: "1e3" }])).toThrow(RowShapeMismatch);
  });

  test("json checked against its schema", () => {
    const S = rowShape("json row", { d: col.json(Type.Object({ a: Type.Number() })) });
    expect(decodeRows(S, [{ d: '{"a":1}' }])[0]!.d.a).toBe(1);
    expect(() => decodeRows(S, [{ d: '{"a":"x"}' }])).toThrow(RowShapeMismatch);
    expect(() => decodeRows(S, [{ d: null }])).toThrow(RowShapeMismatch);
    const N = rowShape("nullable json row", { d: col.nullable(col.json(Type.Object({ a: Type.Number() }))) });
    expect(decodeRows(N, [{ d: null }, { d: { a: 2 } }]).map((r) => r.d)).toEqual([null, { a: 2 }]);
    // A column that would not decode is named, as one that does not check.
    expect(() => decodeRows(S, [{ d: '{"a":"x"}' }])).toThrow(/"json row".*\/d: .*\/a/);
    expect(() => decodeRows(S, [{ d: "{" }])).toThrow(/"json row".*\/d: /);
  });
});

describe("col.null", () => {
  test("tells two kinds of row apart: null passes, a value names the column", () => {
    const Plain = rowShape("plain row", { id: col.text, parent_id: col.null });
    const Child = rowShape("child row", { id: col.text, parent_id: col.text });
    const decode = (r: { id: string; parent_id: string | null }) => (r.parent_id === null ? decodeRow(Plain, r) : decodeRow(Child, r));
    const [plain, child] = [decode({ id: "a", parent_id: null }), decode({ id: "b", parent_id: "a" })];
    // The union narrows on the column: a child's parent_id is a string, a plain row's is null.
    expect(child.parent_id === null ? null : child.parent_id.toUpperCase()).toBe("A");
    expect(plain.parent_id).toBeNull();
    expect(() => decodeRow(Plain, { id: "c", parent_id: "a" })).toThrow(/"plain row".*\/parent_id/);
  });
});

describe("col.float", () => {
  test("a float8 is a number; text is not", () => {
    const S = rowShape("float row", { ms: col.nullable(col.float) });
    expect(decodeRows(S, [{ ms: -12.5 }, { ms: null }]).map((r) => r.ms)).toEqual([-12.5, null]);
    expect(() => decodeRows(S, [{ ms: "12.5" }])).toThrow(/"float row".*\/ms/);
  });
});

describe("col.hex", () => {
  test("0x-prefixed hex passes, in a column or a json array; anything else names the column", () => {
    const S = rowShape("hex row", { hash: col.hex, hashes: col.json(Type.Array(col.hex)) });
    const [r] = decodeRows(S, [{ hash: "0xAb01", hashes: '["0x", "0xff"]' }]);
    const typed: `0x${string}` = r!.hash;
    expect(typed).toBe("0xAb01");
    expect(r!.hashes).toEqual(["0x", "0xff"]);
    expect(() => decodeRows(S, [{ hash: "ab01", hashes: "[]" }])).toThrow(/"hex row".*\/hash/);
    expect(() => decodeRows(S, [{ hash: "0xzz", hashes: "[]" }])).toThrow(/"hex row".*\/hash/);
    expect(() => decodeRows(S, [{ hash: "0x01", hashes: '["01"]' }])).toThrow(/"hex row".*\/hashes/);
  });
});
