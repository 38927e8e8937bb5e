import { expect, test } from "bun:test";
import { chooseStartBlock } from "./state.ts";

test("start block: explicit env wins and is remembered, then the remembered block, then the head", () => {
  const n = "SERVICE_START_BLOCK_LOCAL";
  expect(chooseStartBlock(null, null, 500, n)).toEqual({ startBlock: 500, persist: "insert", source: "head when first started" });
  expect(chooseStartBlock(null, 500, 900, n)).toEqual({ startBlock: 500, persist: null, source: "indexer_meta.start_blocks" });
  expect(chooseStartBlock(42, null, null, n)).toEqual({ startBlock: 42, persist: "insert", source: n });
  expect(chooseStartBlock(42, 500, null, n)).toEqual({ startBlock: 42, persist: "update", source: n });
  expect(chooseStartBlock(42, 42, null, n).persist).toBeNull();
  expect(() => chooseStartBlock(null, null, null, n)).toThrow(n);
});
