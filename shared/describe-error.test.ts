/** The one formatter: whole chains for logs, URLs redacted; the stored strings as they always read. */
import { describe, expect, test } from "bun:test";
import postgres from "postgres";
import { DrizzleQueryError } from "drizzle-orm/errors";
import { BaseError as BaseViemError, ContractFunctionExecutionError } from "viem";
import { BaseError } from "./base-error.ts";
import { describeError, messageOf, redactUrls } from "./describe-error.ts";

const pgError = (code: string, message: string) => new postgres.PostgresError({ code, message } as never);
/** What the failure strings were built with before the formatter. */
const oldFirstLine = (e: unknown) => String((e as Error)?.message ?? e).split("\n")[0]!.slice(0, 500);
const stored = (e: unknown) => describeError(e, { links: 1, firstLines: true, maxLength: 500, redact: false });

describe("messageOf", () => {
  test("an error's message, or the thrown value as a string", () => {
    expect(messageOf(new Error("boom"))).toBe("boom");
    expect(messageOf({ message: 42 })).toBe("42");
    for (const v of ["text", 7, undefined, null, {}, { message: null }] as unknown[]) expect(messageOf(v)).toBe(String((v as Error)?.message ?? v));
  });
});

describe("describeError", () => {
  test("nested causes, outermost first, each wrapped link with its class and code", () => {
    const pg = pgError("57014", "canceling statement due to statement timeout");
    const e = new BaseError("session step failed", { cause: new DrizzleQueryError("update app.sessions set x = $1", [1], pg) });
    const text = describeError(e);
    expect(text.split("\ncaused by ")).toEqual([
      "session step failed",
      "DrizzleQueryError: Failed query: update app.sessions set x = $1\nparams: 1",
      "PostgresError 57014: canceling statement due to statement timeout",
    ]);
    expect(describeError(e, { firstLines: true })).toBe(
      "session step failed; caused by DrizzleQueryError: Failed query: update app.sessions set x = $1; caused by PostgresError 57014: canceling statement due to statement timeout",
    );
    expect(describeError(e, { links: 2, firstLines: true })).toBe("session step failed; caused by DrizzleQueryError: Failed query: update app.sessions set x = $1");
  });

  test("a cause its wrapper already quotes is not said twice; details are said once", () => {
    const inner = new Error("column amount: expected string");
    expect(describeError(new BaseError(`row does not fit: ${inner.message}`, { cause: inner }))).toBe("row does not fit: column amount: expected string");
    expect(describeError(new BaseError("refused", { details: "the host resolves to 10.0.0.1" }), { firstLines: true })).toBe("refused (the host resolves to 10.0.0.1)");
  });

  test("URLs are redacted unless asked not to (an RPC URL carries its provider's key)", () => {
    const e = new BaseError("chain check failed", { cause: new Error("HTTP request failed.\nURL: https://base.example/v2/SECRETKEY\nRequest body: {}") });
    const text = describeError(e);
    expect(text).not.toContain("SECRETKEY");
    expect(text).toContain("URL: https://<redacted>");
    expect(describeError(e, { redact: false })).toContain("SECRETKEY");
    expect(describeError(e, { redact: (t) => t.replaceAll("SECRETKEY", "***") })).toContain("https://base.example/v2/***");
    expect(redactUrls("wss://x.example/k?key=1 then")).toBe("wss://<redacted> then");
  });

  test("the stored form reads exactly as the strings stored before it", () => {
    const long = new Error(`${"x".repeat(600)}\nsecond line`);
    const viem = new ContractFunctionExecutionError(new BaseViemError("The call reverted.", { details: "execution reverted: not owner" }), {
      abi: [],
      functionName: "sweep",
    });
    expect(viem.details).toBe("execution reverted: not owner");
    const wrapped = new BaseError("execution reverted: not owner\nDetails: …", { cause: new Error("inner") });
    for (const v of [new Error("one\ntwo"), long, wrapped, viem, "a string", 5, undefined, null, { message: "plain object" }]) {
      expect(stored(v)).toBe(oldFirstLine(v));
    }
  });

  test("stacks on request; a chain that loops still ends", () => {
    const e = new BaseError("outer", { cause: new TypeError("inner") });
    const text = describeError(e, { stack: true });
    expect(text.startsWith("BaseError: outer\n    at ")).toBe(true);
    expect(text).toContain("\ncaused by TypeError: inner\n    at ");
    const a = new BaseError("a");
    const b = new BaseError("b", { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect(describeError(b)).toBe("b\ncaused by BaseError: a");
  });
});
