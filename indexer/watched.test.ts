/** Pure logic of bounded mode, with an in-memory lookup (no I/O to fake beyond it). */
import { expect, test } from "bun:test";
import { WatchedFilter } from "./watched.ts";

function table() {
  const rows = new Set<string>();
  const calls: string[][] = [];
  const lookup = async (addresses: string[]) => {
    calls.push(addresses);
    return new Set(addresses.filter((a) => rows.has(a)));
  };
  return { rows, calls, lookup };
}

test("asks about a transfer's two addresses, lowercase; from counts as well as to", async () => {
  const t = table();
  const f = new WatchedFilter(t.lookup);
  t.rows.add("0xaa");
  expect(await f.keeps(1, 10n, "0x01", "0xAA")).toBe(true);
  expect(await f.keeps(1, 10n, "0xaA", "0x02")).toBe(true);
  expect(await f.keeps(1, 10n, "0x03", "0x04")).toBe(false);
  expect(t.calls).toEqual([["0x01", "0xaa"], ["0x02"], ["0x03", "0x04"]]);
});

test("answers are kept for the rest of the block only: a later block asks again", async () => {
  const t = table();
  const f = new WatchedFilter(t.lookup);
  expect(await f.keeps(1, 10n, "0x01", "0xbb")).toBe(false);
  t.rows.add("0xbb"); // registered after block 10 was processed
  expect(await f.keeps(1, 10n, "0x01", "0xbb")).toBe(false); // same block: nobody could have paid it there
  expect(t.calls).toHaveLength(1);
  expect(await f.keeps(1, 11n, "0x01", "0xbb")).toBe(true); // next block: asked again
  expect(t.calls).toHaveLength(2);
});

test("each chain has its own block: another chain's answers are not reused", async () => {
  const t = table();
  const f = new WatchedFilter(t.lookup);
  expect(await f.keeps(1, 10n, "0x01", "0xcc")).toBe(false);
  t.rows.add("0xcc");
  expect(await f.keeps(2, 10n, "0x01", "0xcc")).toBe(true);
  expect(await f.keeps(1, 10n, "0x01", "0xcc")).toBe(false); // chain 1 is still on block 10
  expect(f.lookups).toBe(2);
});

test("a failing lookup fails the transfer (Ponder retries) instead of dropping it", async () => {
  const f = new WatchedFilter(async () => {
    throw new Error("connection lost");
  });
  await expect(f.keeps(1, 1n, "0x01", "0x02")).rejects.toThrow("connection lost");
});
