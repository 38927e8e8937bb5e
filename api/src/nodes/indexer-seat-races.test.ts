/**
 * The seat's own races, with Ponder stood in for by a fake that takes its time to start (the
 * seat, its lock and its lease are real, on a real database): whatever happens while a start is
 * under way, never two indexers of one node alive at once.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { createTestDatabase } from "../../../testing/database.ts";
import { eventually } from "../../../testing/eventually.ts";
import { migrate } from "../db/migrate.ts";
import type { IndexerProcess } from "../../../indexer/process.ts";
import { IndexerSeat } from "./indexer-seat.ts";

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: postgres.Sql;

beforeAll(async () => {
  db = await createTestDatabase();
  sql = postgres(db.url, { max: 2, onnotice: () => {} });
  await migrate(sql);
});
afterAll(async () => {
  await sql.end();
  await db.drop();
});

/** A stand-in for Ponder: "alive" from the end of its slow start until killed or stopped. */
function fakeIndexers(startMs: number) {
  const alive = new Set<number>();
  let most = 0;
  let next = 0;
  const start = async (): Promise<IndexerProcess> => {
    const id = ++next;
    await Bun.sleep(startMs);
    alive.add(id);
    most = Math.max(most, alive.size);
    let stopped = false;
    let exit!: (code: number | null) => void;
    const exited = new Promise<number | null>((r) => (exit = r));
    return {
      url: `fake://${id}`,
      pid: id,
      config: undefined as never,
      exited,
      get stopped() {
        return stopped;
      },
      kill() {
        stopped = true;
        alive.delete(id);
        exit(null);
      },
      async stop() {
        stopped = true;
        alive.delete(id);
        exit(0);
      },
      async waitUntilReady() {},
      recentLogs: () => [],
    };
  };
  return { start, alive, most: () => most };
}

test("a seat lost while its indexer starts: that start is killed when it ends, and no second one runs beside it", async () => {
  const fakes = fakeIndexers(3000);
  const seat = new IndexerSeat({ databaseUrl: db.url, nodeId: "node_a", startIndexer: fakes.start, log: () => {} });
  const started = seat.start(); // takes the free seat, then waits for the slow start
  await eventually(async () => (await sql`select 1 from app.leases where holder = 'node_a'`).length === 1, "seat taken");
  // While it starts, another node takes the lease for a moment (the seat is fenced), then lets it go.
  await sql`update app.leases set holder = 'node_b' where name = 'indexer'`;
  await Bun.sleep(1500); // a renewal sees it: fenced
  await sql`delete from app.leases where name = 'indexer'`;
  await started;
  // Given time to take the seat again, the node runs one indexer, never two.
  await eventually(() => fakes.alive.size === 1, "one indexer running again", 15_000);
  await Bun.sleep(4000); // longer than a start: a second one would be up by now
  expect(fakes.alive.size).toBe(1);
  expect(fakes.most()).toBe(1);
  await seat.stop();
  expect(fakes.alive.size).toBe(0);
  expect((await sql`select 1 from app.leases where name = 'indexer'`).length).toBe(0);
}, 30_000);
