/** The base of our errors: the short message stays the message, the cause is kept whole and walked. */
import { describe, expect, test } from "bun:test";
import postgres from "postgres";
import { DrizzleQueryError } from "drizzle-orm/errors";
import { BaseError } from "./base-error.ts";
import { errorChain, findInChain, hasErrorCode } from "./error-chain.ts";

const pgError = (code: string) => new postgres.PostgresError({ code, message: `pg ${code}` } as never);
const isPg = (e: unknown): e is InstanceType<typeof postgres.PostgresError> => e instanceof postgres.PostgresError;

class StepFailed extends BaseError {
  override name = "StepFailed";
}

describe("BaseError", () => {
  test("message is the short message alone; details and cause are kept beside it", () => {
    const cause = new Error("inner");
    const e = new BaseError("outer", { details: "more words", cause });
    expect(e).toBeInstanceOf(Error);
    expect(e.message).toBe("outer");
    expect(e.shortMessage).toBe("outer");
    expect(e.details).toBe("more words");
    expect(e.cause).toBe(cause);
    expect(e.name).toBe("BaseError");
  });

  test("no cause given: no own cause property (a wrapped nothing is not a link)", () => {
    const e = new BaseError("alone");
    expect("cause" in e).toBe(false);
    expect(errorChain(e)).toEqual([e]);
    expect(e.walk()).toBe(e);
  });

  test("a drizzle-wrapped Postgres error is found through our wrapper, by walk and by the chain's checks", () => {
    const pg = pgError("57014");
    const drizzle = new DrizzleQueryError("select 1", [], pg);
    const e = new StepFailed("session step failed", { cause: new BaseError("transaction failed", { cause: drizzle }) });
    expect(e.name).toBe("StepFailed");
    expect(e.walk(isPg)).toBe(pg);
    expect(findInChain(e, isPg)).toBe(pg);
    expect(hasErrorCode(e, "57014")).toBe(true);
    expect(e.walk()).toBe(pg);
    expect(e.walk((x): x is StepFailed => x instanceof StepFailed)).toBe(e);
    expect(e.walk((x): x is RangeError => x instanceof RangeError)).toBeUndefined();
  });

  test("a cause that points back ends the walk", () => {
    const a = new BaseError("a");
    const b = new BaseError("b", { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect(errorChain(b)).toEqual([b, a]);
    expect(b.walk()).toBe(a);
  });
});
