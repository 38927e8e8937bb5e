/**
 * The indexer seat under the interleavings a review looked for: the seat's connection replaced
 * under it (a Postgres restart, a session ended by an operator or a proxy) — the views must
 * follow the new holder and the old one never switch them back —, and the slot's connection
 * (this node's own schema) lost while its Ponder runs or still starts. Two seats (as two nodes)
 * on a real database; their "indexer" is a real child process (`sleep`) standing in for Ponder,
 * beside a stand-in instance schema (the tables Ponder would have made), so "two writers of one
 * schema" is two children of one schema alive at once, observed, not inferred.
 */
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { createTestDatabase } from "../../../testing/database.ts";
import { eventually } from "../../../testing/eventually.ts";
import type { IndexerProcess } from "../../../indexer/process.ts";
import { migrate } from "../db/migrate.ts";
import { viewsFollow } from "../../../indexer/views.ts";
import { IndexerSeat } from "./indexer-seat.ts";

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: postgres.Sql;
const seats: IndexerSeat[] = [];
/** Every stand-in writer started, with the seat that started it. */
const writers: { seat: string; schema: string; child: ReturnType<typeof Bun.spawn>; killed: boolean }[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  sql = postgres(db.url, { max: 2, onnotice: () => {} });
  await migrate(sql);
});
afterEach(async () => {
  for (const s of seats.splice(0)) await s.stop().catch(() => {});
  for (const w of writers.splice(0)) w.child.kill("SIGKILL");
  await sql`delete from app.leases`;
  await sql`drop schema if exists indexer cascade`;
  for (const r of await sql`select nspname from pg_namespace where nspname like 'indexer\\_%' and nspname <> 'indexer_meta'`) await sql.unsafe(`drop schema "${r.nspname}" cascade`);
});
afterAll(async () => {
  await sql.end();
  await db.drop();
});

/** Writers their seat has not stopped (a kill is what the seat controls; the exit follows). */
const running = () => writers.filter((w) => !w.killed && w.child.exitCode === null);

/** What Ponder makes of an instance schema, enough for the views to follow it (its tables, its _ponder_meta). */
async function standInSchema(schema: string): Promise<void> {
  await sql.unsafe(`create schema if not exists "${schema}"`);
  await sql.unsafe(`create table if not exists "${schema}"._ponder_meta (key text primary key, value jsonb not null)`);
  await sql.unsafe(`create table if not exists "${schema}"._ponder_checkpoint (chain_name text primary key)`);
  await sql.unsafe(`create table if not exists "${schema}".transfers (tx_hash text)`);
  await sql.unsafe(`insert into "${schema}"._ponder_meta values ('app', '{"table_names": ["transfers"], "is_ready": 1}') on conflict do nothing`);
}

/** A stand-in for Ponder: a child process that runs until killed; its start takes `startMs`. */
function standIn(seat: string, startMs: number, onStart?: (schema: string) => void): (schema: string) => Promise<IndexerProcess> {
  return async (schema) => {
    onStart?.(schema);
    await Bun.sleep(startMs);
    await standInSchema(schema);
    return standInProcess(spawnWriter(seat, schema));
  };
}

/** A stand-in writer: a child that runs until killed, recorded in `writers`. */
function spawnWriter(seat: string, schema: string) {
  const writer = { seat, schema, child: Bun.spawn(["sleep", "600"], { stdout: "ignore", stderr: "ignore" }), killed: false };
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

function seat(nodeId: string, startIndexer: (schema: string, signal: AbortSignal) => Promise<IndexerProcess>): IndexerSeat {
  const s = new IndexerSeat({ databaseUrl: db.url, nodeId, startIndexer, log: process.env.SEAT_TEST_LOGS ? (l) => console.log(nodeId, l) : () => {} });
  seats.push(s);
  return s;
}

/** Ends the session holding the advisory lock `key` (as a Postgres restart or an operator would). */
async function endLockSession(key: bigint): Promise<void> {
  const ended = await sql`
    select pg_terminate_backend(pid) from pg_locks
    where locktype = 'advisory' and granted and objid = (${key.toString()}::bigint & 4294967295)::oid and pid <> pg_backend_pid()`;
  expect(ended.length).toBe(1);
}
const endSeatSession = () => endLockSession(7_301_552_020n);
/** Instance slot 1's lock (indexer-seat.ts SLOT_LOCK_BASE + 1): schema indexer_1. */
const endSlotSession = () => endLockSession(7_301_552_101n);

test("a holder whose seat connection was replaced (its lock gone) stops following: one holder, and the views follow it alone", async () => {
  const a = seat("node_a", standIn("a", 0));
  await a.start();
  expect(a.state).toBe("active");
  expect(await viewsFollow(sql)).toBe("indexer_1");
  const b = seat("node_b", standIn("b", 0));
  await b.start();
  expect(b.state).toBe("standby");
  // Both warm: each its own writer, into its own schema.
  expect(running().map((w) => `${w.seat}:${w.schema}`).sort()).toEqual(["a:indexer_1", "b:indexer_2"]);
  await endSeatSession();
  // a stops following at that moment (its lock went with the session); the seat is free, and the
  // first to look takes it — a again, or b. Whoever holds it, the views follow its schema and
  // nobody else's, and a renewal on a fresh connection (no lock) never counts as holding.
  const holderOf = async () => {
    const active = [a, b].filter((s) => s.state === "active");
    return active.length === 1 && (await viewsFollow(sql)) === active[0]!.schema ? active[0] : undefined;
  };
  const first = await eventually(holderOf, "one holder, the views following it", 5000);
  await Bun.sleep(2500);
  expect(await holderOf()).toBe(first);
  expect((await sql`select count(*)::int as n from pg_locks where locktype = 'advisory' and granted and objid = (7301552020::bigint & 4294967295)::oid`)[0]!.n).toBe(1);
  expect(running().map((w) => w.seat).sort()).toEqual(["a", "b"]);
}, 20_000);

test("a node whose slot connection closed kills its Ponder (its schema may be another's) and starts one again: never two", async () => {
  const a = seat("node_a", standIn("a", 0));
  await a.start();
  const first = running()[0]!;
  await endSlotSession();
  await eventually(() => first.killed, "a's Ponder killed with its slot", 5000);
  await eventually(() => running().length === 1 && a.process?.pid === running()[0]!.child.pid, "a's Ponder started again", 10_000);
  await Bun.sleep(2000);
  expect(running().length).toBe(1);
  expect(await viewsFollow(sql)).toBe(a.schema!);
}, 30_000);

/**
 * A stand-in whose Ponder is up (writing) from the first moment of its start, as Ponder's is
 * (its lock and crash recovery come before it says it listens), and whose start honours the
 * seat's abort signal as startIndexer does: the child killed, the start rejected.
 */
function writingWhileStarting(seat: string, startMs: number): (schema: string, signal: AbortSignal) => Promise<IndexerProcess> {
  return async (schema, signal) => {
    const writer = spawnWriter(seat, schema);
    signal.addEventListener("abort", () => {
      writer.killed = true;
      writer.child.kill("SIGKILL");
    });
    await Bun.sleep(startMs);
    signal.throwIfAborted();
    return standInProcess(writer);
  };
}

test("a slot lost while its Ponder is still starting stops that start at once, before another node may write that schema", async () => {
  const a = seat("node_a", writingWhileStarting("a", 8000));
  const started = a.start();
  await eventually(() => running().length === 1, "a's start under way (its Ponder already writing)", 5000);
  // The slot's session ends: another node may take slot 1 (schema indexer_1) at once.
  await endSlotSession();
  let othersAtStart = -1;
  const b = seat("node_b", standIn("b", 0, (schema) => (othersAtStart = running().filter((w) => w.schema === schema).length)));
  await b.start();
  expect(b.schema).toBe("indexer_1");
  // a's half-started Ponder was stopped when a lost its slot — not 8 s later when its start would end.
  expect(othersAtStart).toBe(0);
  await a.stop();
  await started.catch(() => {});
  expect(running().filter((w) => w.schema === "indexer_1").map((w) => w.seat)).toEqual(["b"]);
}, 30_000);

test("two nodes starting at once start their Ponders one after the other (they would race to create the schemas they share)", async () => {
  let inStart = 0;
  let most = 0;
  const overlapping = (name: string) =>
    standIn(name, 1500, () => {
      most = Math.max(most, ++inStart);
    });
  const counted = (name: string) => {
    const start = overlapping(name);
    return async (schema: string) => {
      try {
        return await start(schema);
      } finally {
        inStart--;
      }
    };
  };
  const a = seat("node_a", counted("a"));
  const b = seat("node_b", counted("b"));
  await Promise.all([a.start(), b.start()]);
  expect(running().map((w) => w.seat).sort()).toEqual(["a", "b"]);
  expect(most).toBe(1);
}, 20_000);
