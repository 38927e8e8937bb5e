/** /readyz's indexer state per network (pure). */
import { expect, test } from "bun:test";
import { indexerLag } from "./indexer-lag.ts";

test("catching up while the indexer is in its backfill, with the blocks behind the probed head", () => {
  expect(indexerLag(false, 100n, "1100")).toEqual({ state: "catching_up", indexedBlock: "100", blocksBehind: "1000", message: "catching up, 1000 blocks behind" });
});

test("caught up within two blocks; catching up past that even when the backfill is done", () => {
  expect(indexerLag(true, 1000n, "1002").state).toBe("caught_up");
  expect(indexerLag(true, 1000n, "999")).toMatchObject({ state: "caught_up", blocksBehind: "0" });
  expect(indexerLag(true, 1000n, "1010")).toMatchObject({ state: "catching_up", blocksBehind: "10" });
});

test("no index yet, or no head known", () => {
  expect(indexerLag(null, undefined, "5").state).toBe("not_indexed");
  expect(indexerLag(false, undefined, "5").message).toBe("indexer starting: nothing indexed yet");
  expect(indexerLag(true, 7n, null)).toMatchObject({ state: "caught_up", blocksBehind: null });
});
