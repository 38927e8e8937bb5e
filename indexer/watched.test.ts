/** Pure logic of bounded mode, with an in-memory loader (no I/O to fake beyond it). */
import { expect, test } from "bun:test";
import { OVERLAP_MS, WatchedSet, type WatchedRow } from "./watched.ts";

function table() {
  const rows: WatchedRow[] = [];
  const calls: (Date | null)[] = [];
  const loader = async (since: Date | null) => {
    calls.push(since);
    return rows.filter((r) => since === null || r.createdAt > since);
  };
  return { rows, calls, loader };
}

test("refreshes once per newer block per chain, not per event", async () => {
  const t = table();
  const set = new WatchedSet(t.loader);
  t.rows.push({ address: "0xAA", createdAt: new Date(1000) });
  expect(await set.keeps(1, 10n, "0x01", "0xaa")).toBe(true);
  expect(await set.keeps(1, 10n, "0x01", "0x02")).toBe(false);
  expect(t.calls).toHaveLength(1);

  t.rows.push({ address: "0xbb", createdAt: new Date(2000) });
  expect(await set.keeps(1, 10n, "0x01", "0xbb")).toBe(false); // same block: cached set
  expect(await set.keeps(1, 11n, "0xbb", "0x02")).toBe(true); // newer block: refreshed, "from" counts too
  expect(await set.keeps(2, 5n, "0x03", "0x04")).toBe(false); // another chain has its own block clock
  expect(t.calls).toHaveLength(3);
});

test("incremental loads look back OVERLAP_MS so late-committing rows are not missed", async () => {
  const t = table();
  const set = new WatchedSet(t.loader);
  t.rows.push({ address: "0xaa", createdAt: new Date(10 * OVERLAP_MS) });
  await set.refresh();
  // A row whose transaction started earlier but committed after our last load.
  t.rows.push({ address: "0xcc", createdAt: new Date(10 * OVERLAP_MS - OVERLAP_MS / 2) });
  await set.refresh();
  expect(t.calls[1]).toEqual(new Date(9 * OVERLAP_MS));
  expect(await set.keeps(1, 1n, "0xcc", "0x00")).toBe(true);
  expect(set.size).toBe(2);
});
