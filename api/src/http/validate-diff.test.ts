/**
 * Temporary: the old validator (validate-legacy.ts) and the new one (validate.ts) over the same
 * bad bodies of every request schema, which must answer alike.
 */
import { expect, test } from "bun:test";
import type { TSchema } from "@sinclair/typebox";
import { ApiError } from "../errors.ts";
import { validateBody as legacy } from "./validate-legacy.ts";
import { validateBody } from "./validate.ts";
import { BODY_SCHEMAS, badBodies } from "./validate-cases.ts";

function answer(run: () => unknown): string {
  try {
    run();
    return "ok";
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return JSON.stringify([e.code, e.param, e.message]);
  }
}

test("the old and the new validator answer every bad body alike", () => {
  const diffs: string[] = [];
  let n = 0;
  for (const [name, schema] of Object.entries(BODY_SCHEMAS)) {
    for (const body of badBodies(name, schema as TSchema)) {
      n++;
      const a = answer(() => legacy(schema, body));
      const b = answer(() => validateBody(schema as TSchema, body));
      if (a !== b) diffs.push(`${name} ${JSON.stringify(body)?.slice(0, 200)}: old ${a}, new ${b}`);
    }
  }
  console.log(`${n} bodies`);
  expect(diffs.slice(0, 30)).toEqual([]);
});
