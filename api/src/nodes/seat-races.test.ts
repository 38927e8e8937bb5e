/**
 * The indexer seat under the interleavings a review looked for: the seat's connection replaced
 * under it (a Postgres restart, a session ended by an operator or a proxy), and a start still
 * running when the seat is lost and taken again. Two seats (as two nodes) on a real database;
 * their "indexer" is a real child process (`sleep`) standing in for Ponder, so "two writers"
 * is two children alive at once, observed, not inferred.
 */
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { createTestDatabase } from "../../../testing/database.ts";
import { eventually } from "../../../testing/eventually.ts";
import type { IndexerProcess } from "../../../indexer/process.ts";
import { migrate } from "../db/migrate.ts";
import { IndexerSeat } from "./indexer-seat.ts";

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: postgres.Sql;
const seats: IndexerSeat[] = [];
/** Every stand-in writer started, with the seat that started it. */
const writers: { seat: string; child: ReturnType<typeof Bun.spawn>; killed: boolean }[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  sql = postgres(db.url, { max: 2, onnotice: () => {} });
  await migrate(sql);
});
afterEach(async () => {
  for (const s of seats.splice(0)) await s.stop().catch(() => {});
  for (const w of writers.splice(0)) w.child.kill("SIGKILL");
  await sql`delete from app.leases`;
});
afterAll(async () => {
  await sql.end();
  await db.drop();
});

/** Writers their seat has not stopped (a kill is what the seat controls; the exit follows). */
const running = () => writers.filter((w) => !w.killed && w.child.exitCode === null);

/** A stand-in for Ponder: a child process that runs until killed; its start takes `startMs`. */
function standIn(seat: string, startMs: number, onStart?: () => void): () => Promise<IndexerProcess> {
  return async () => {
    onStart?.();
    await Bun.sleep(startMs);
    return standInProcess(spawnWriter(seat));
  };
}

/** A stand-in writer: a child that runs until killed, recorded in `writers`. */
function spawnWriter(seat: string) {
  const writer = { seat, child: Bun.spawn(["sleep", "600"], { stdout: "ignore", stderr: "ignore" }), killed: false };
  writers.push(writer);
  return writer;
}

/** The IndexerProcess the seat holds for a stand-in writer. */
function standInProcess(writer: (typeof writers)[number]): IndexerProcess {
  let stopped = false;
  return {
    url: "http://127.0.0.1:1",
    pid: writer.child.pid,
    config: undefined as never,
    exited: writer.child.exited,
    get stopped() {
      return stopped;
    },
    kill() {
      stopped = true;
      writer.killed = true;
      writer.child.kill("SIGKILL");
    },
    async stop() {
      stopped = true;
      writer.killed = true;
      writer.child.kill("SIGTERM");
      await writer.child.exited;
    },
    waitUntilReady: async () => {},
    recentLogs: () => [],
  };
}

function seat(nodeId: string, startIndexer: (signal: AbortSignal) => Promise<IndexerProcess>): IndexerSeat {
  const s = new IndexerSeat({ databaseUrl: db.url, nodeId, startIndexer, log: () => {} });
  seats.push(s);
  return s;
}

/** Ends the session holding the seat's advisory lock (as a Postgres restart or an operator would). */
async function endSeatSession(): Promise<void> {
  const ended = await sql`
    select pg_terminate_backend(pid) from pg_locks
    where locktype = 'advisory' and granted and objid = (7301552020::bigint & 4294967295)::oid and pid <> pg_backend_pid()`;
  expect(ended.length).toBe(1);
}

test("a holder whose seat connection was replaced (its lock gone) stops writing before another node starts", async () => {
  const a = seat("node_a", standIn("a", 0));
  await a.start();
  expect(a.state).toBe("active");
  await endSeatSession();
  // Another node finds the lock free and takes the seat at once, before the holder's next
  // renewal (which runs on a fresh connection, holding no lock). When it starts its indexer,
  // no other may be running.
  let othersAtStart = -1;
  const b = seat("node_b", standIn("b", 0, () => (othersAtStart = running().length)));
  await b.start();
  expect(b.state).toBe("active");
  expect(othersAtStart).toBe(0);
  await Bun.sleep(2500);
  expect(a.state).toBe("standby");
  expect(running().map((w) => w.seat)).toEqual(["b"]);
}, 20_000);

test("a seat lost and taken again while its indexer is still starting never runs two", async () => {
  let starts = 0;
  const a = seat("node_a", standIn("a", 3000, () => starts++));
  const started = a.start();
  await eventually(() => starts === 1, "a's first start under way", 5000);
  await Bun.sleep(200);
  await endSeatSession();
  await started;
  // The lost seat is retaken (nobody else wants it); let every start run to its end.
  await eventually(() => a.state === "active" && running().length > 0, "a active again", 20_000);
  await Bun.sleep(4000);
  expect(running().length).toBe(1);
  expect(a.process?.pid).toBe(running()[0]!.child.pid);
}, 40_000);

/**
 * A stand-in whose Ponder is up (writing) from the first moment of its start, as Ponder's is
 * (its lock and crash recovery come before it says it listens), and whose start honours the
 * seat's abort signal as startIndexer does: the child killed, the start rejected.
 */
function writingWhileStarting(seat: string, startMs: number): (signal: AbortSignal) => Promise<IndexerProcess> {
  return async (signal) => {
    const writer = spawnWriter(seat);
    signal.addEventListener("abort", () => {
      writer.killed = true;
      writer.child.kill("SIGKILL");
    });
    await Bun.sleep(startMs);
    signal.throwIfAborted();
    return standInProcess(writer);
  };
}

test("a seat lost while its indexer is still starting stops that start at once, before another node starts", async () => {
  const a = seat("node_a", writingWhileStarting("a", 8000));
  const started = a.start();
  await eventually(() => running().length === 1, "a's start under way (its Ponder already writing)", 5000);
  // The seat's session ends (a Postgres restart, an operator): another node will take it at once.
  await endSeatSession();
  let othersAtStart = -1;
  const b = seat("node_b", standIn("b", 0, () => (othersAtStart = running().length)));
  await b.start();
  expect(b.state).toBe("active");
  // a's half-started Ponder was stopped when a lost the seat — not 8 s later when its start would end.
  expect(othersAtStart).toBe(0);
  await started;
  expect(running().map((w) => w.seat)).toEqual(["b"]);
}, 30_000);
