/** The cause-chain walk every check of an error's kind uses: wrapped, nested, aggregated, looping. */
import { describe, expect, test } from "bun:test";
import postgres from "postgres";
import { DrizzleQueryError } from "drizzle-orm/errors";
import { errorChain, errorCodes, findErrorCode, findInChain, hasErrorCode } from "./error-chain.ts";

const pgError = (code: string) => new postgres.PostgresError({ code, message: `pg ${code}` } as never);

describe("errorChain", () => {
  test("a DrizzleQueryError's code is on its PostgresError cause, and is found there", () => {
    const wrapped = new DrizzleQueryError("select 1", [], pgError("57014"));
    expect((wrapped as { code?: unknown }).code).toBeUndefined();
    expect(errorCodes(wrapped)).toEqual(["57014"]);
    expect(hasErrorCode(wrapped, "57014")).toBe(true);
    expect(findInChain(wrapped, (e): e is InstanceType<typeof postgres.PostgresError> => e instanceof postgres.PostgresError)?.code).toBe("57014");
  });

  test("nested wrappers, outermost code first", () => {
    const inner = new DrizzleQueryError("update …", [], pgError("40P01"));
    const outer = new Error("step failed", { cause: new Error("transaction failed", { cause: inner }) });
    expect(errorCodes(outer)).toEqual(["40P01"]);
    expect(hasErrorCode(outer, "40001", "40P01")).toBe(true);
    expect(hasErrorCode(outer, "23505")).toBe(false);
    const coded = Object.assign(new Error("outer"), { code: "REQUEST_DEADLINE", cause: pgError("57014") });
    expect(errorCodes(coded)).toEqual(["REQUEST_DEADLINE", "57014"]);
    expect(findErrorCode(coded, (c) => /^\d/.test(c))).toBe("57014");
  });

  test("an AggregateError's errors, and a wallet's data.originalError, are links too", () => {
    const refused = new AggregateError([Object.assign(new Error("a"), { code: "ECONNREFUSED" })], "connect failed");
    expect(hasErrorCode(refused, "ECONNREFUSED")).toBe(true);
    const wallet = { code: -32603, message: "Internal JSON-RPC error.", data: { originalError: { code: 4001, message: "User rejected" } } };
    expect(errorCodes(wallet)).toEqual([-32603, 4001]);
  });

  test("a chain that loops ends; values that are not errors have no codes", () => {
    const a = new Error("a", { cause: undefined }) as Error & { code?: string };
    const b = new Error("b", { cause: a });
    (a as { cause?: unknown }).cause = b;
    a.code = "23505";
    expect(errorChain(b)).toEqual([b, a]);
    expect(hasErrorCode(b, "23505")).toBe(true);
    for (const v of [undefined, null, "57014", 57014, {}, { code: {} }]) expect(errorCodes(v)).toEqual([]);
  });

  test("a chain deeper than the bound is cut, not followed forever", () => {
    let e: Error = Object.assign(new Error("bottom"), { code: "57014" });
    for (let i = 0; i < 100; i++) e = new Error(`wrap ${i}`, { cause: e });
    expect(errorChain(e).length).toBe(32);
    expect(hasErrorCode(e, "57014")).toBe(false);
  });
});
