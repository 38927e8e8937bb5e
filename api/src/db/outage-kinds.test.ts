/**
 * The outage and conflict checks read the code wherever drizzle or a caller put it: on a
 * DrizzleQueryError's PostgresError cause, under further wrappers, or on the error itself.
 */
import { describe, expect, test } from "bun:test";
import postgres from "postgres";
import { DrizzleQueryError } from "drizzle-orm/errors";
import { isDatabaseUnavailable, isRetryableConflict, Outage, unavailableCode } from "./outage.ts";
import { refusedForContent } from "./group.ts";
import { isMissingTable } from "../sessions/indexed.ts";
import { BaseError } from "../../../shared/base-error.ts";
import { ApiError } from "../errors.ts";
import { RowShapeMismatch } from "./rows.ts";

const pg = (code: string) => new postgres.PostgresError({ code, message: `pg ${code}` } as never);
const drizzled = (code: string) => new DrizzleQueryError("select 1", [], pg(code));
const nested = (code: string) => new Error("outer", { cause: new Error("middle", { cause: drizzled(code) }) });

describe("error kinds through wrappers", () => {
  test("a statement timeout (57014) is an outage bare, wrapped by drizzle, and nested", () => {
    for (const e of [pg("57014"), drizzled("57014"), nested("57014")]) {
      expect(isDatabaseUnavailable(e)).toBe(true);
      expect(unavailableCode(e)).toBe("57014");
    }
  });

  test("connection class 08, shutdown, lock_not_available and the request deadline too; a bad statement is not", () => {
    for (const code of ["08006", "57P01", "53300", "55P03", "25P03"]) expect(isDatabaseUnavailable(nested(code))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error("deadline"), { code: "REQUEST_DEADLINE" }))).toBe(true);
    expect(isDatabaseUnavailable(new AggregateError([Object.assign(new Error("x"), { code: "ECONNREFUSED" })]))).toBe(true);
    for (const code of ["42601", "23505", "22P02", "0800"]) expect(isDatabaseUnavailable(nested(code))).toBe(false);
    expect(isDatabaseUnavailable(new Error("plain"))).toBe(false);
  });

  test("through our own errors' cause too: a failure we wrapped is still the outage it was", () => {
    const wrapped = new BaseError("session step failed", { cause: drizzled("57P01") });
    const refusal = new ApiError("service_unavailable", undefined, undefined, undefined, { cause: wrapped });
    const mismatch = new RowShapeMismatch("a statement", "x", { cause: drizzled("40001") });
    expect(unavailableCode(wrapped)).toBe("57P01");
    expect(isDatabaseUnavailable(refusal)).toBe(true);
    expect(isRetryableConflict(mismatch)).toBe(true);
    expect(isDatabaseUnavailable(new ApiError("internal_error"))).toBe(false);
  });

  test("a deadlock or serialization failure is a conflict to retry, not an outage", () => {
    for (const code of ["40P01", "40001"]) {
      expect(isRetryableConflict(drizzled(code))).toBe(true);
      expect(isRetryableConflict(nested(code))).toBe(true);
      expect(isDatabaseUnavailable(nested(code))).toBe(false);
    }
    expect(isRetryableConflict(nested("57014"))).toBe(false);
  });

  test("refused for content (classes 22, 23) and a missing table (42P01), through drizzle", () => {
    expect(refusedForContent(drizzled("23505"))).toBe(true);
    expect(refusedForContent(nested("22P02"))).toBe(true);
    expect(refusedForContent(nested("57014"))).toBe(false);
    expect(isMissingTable(drizzled("42P01"))).toBe(true);
    expect(isMissingTable(nested("42P01"))).toBe(true);
    expect(isMissingTable(drizzled("42703"))).toBe(false);
  });

  test("an Outage backs off on a wrapped outage and names its code once", () => {
    const lines: string[] = [];
    const outage = new Outage("test loop", (l) => lines.push(l), { random: () => 0.5 });
    expect(outage.failed(nested("57014"))).toBe(250);
    expect(outage.failed(drizzled("08006"))).toBe(500);
    expect(outage.failed(nested("42601"))).toBeUndefined();
    expect(lines).toEqual(["test loop: database unavailable (57014); backing off, retrying until it answers (logged once per outage)"]);
  });
});
