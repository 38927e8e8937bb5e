/** ApiError under the base error: the answer is what it always was; the cause is kept, for the log only. */
import { describe, expect, test } from "bun:test";
import postgres from "postgres";
import { DrizzleQueryError } from "drizzle-orm/errors";
import { ApiError, errorBody } from "./errors.ts";
import { BaseError } from "../../shared/base-error.ts";
import { describeError } from "../../shared/describe-error.ts";
import { findInChain } from "../../shared/error-chain.ts";

describe("ApiError", () => {
  test("the catalogue's message, or the one given, is the message answered; the cause is never in the body", () => {
    const cause = new DrizzleQueryError("select 1", [], new postgres.PostgresError({ code: "57014", message: "canceling statement" } as never));
    const e = new ApiError("service_unavailable", "The database is not answering. Retry shortly.", undefined, undefined, { cause });
    expect(e).toBeInstanceOf(BaseError);
    expect(e.name).toBe("ApiError");
    expect(e.cause).toBe(cause);
    expect(errorBody(e, "req_1")).toEqual({
      error: { type: "api_error", code: "service_unavailable", message: "The database is not answering. Retry shortly.", requestId: "req_1" },
    });
    expect(errorBody(new ApiError("resource_not_found"), "req_2").error.message).toBe("No such resource.");
    expect(describeError(e, { firstLines: true })).toBe(
      "The database is not answering. Retry shortly.; caused by DrizzleQueryError: Failed query: select 1; caused by PostgresError 57014: canceling statement",
    );
  });

  test("a refusal wrapped by another error is still found as the refusal (what the HTTP layer answers)", () => {
    const refusal = new ApiError("url_invalid", undefined, "url");
    const outer = new BaseError("endpoint not saved", { cause: refusal });
    expect(findInChain(outer, (x) => x instanceof ApiError)).toBe(refusal);
    expect(outer.walk((x) => x instanceof ApiError)?.param).toBe("url");
  });
});
