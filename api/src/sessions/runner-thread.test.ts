/**
 * The API's session runner on its own thread (runner-thread.ts), against a real Postgres: it
 * steps due sessions, comes back when its thread ends unasked, and stops cleanly.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Worker } from "node:worker_threads";
import { connect, type Database } from "../db/client.ts";
import { migrate } from "../db/migrate.ts";
import { createTestDatabase } from "../../../testing/database.ts";
import { eventually } from "../../../testing/eventually.ts";
import { RunnerThread } from "./runner-thread.ts";

let db: Database;
let url: string;
let drop: () => Promise<void>;

beforeAll(async () => {
  const tdb = await createTestDatabase("runthread");
  ({ url, drop } = tdb);
  db = connect(url, { max: 2 });
  await migrate(db.sql);
  await db.sql`insert into app.merchants (id, name, sandbox_public_id, live_public_id) values ('acct_thread', 'Thread', 'mch_test_thread', 'mch_live_thread')`;
});

afterAll(async () => {
  await db.close();
  await drop();
});

/** A PENDING session due now; a step moves its wake-up (to its expiry) off "now". */
async function dueSession(n: number): Promise<string> {
  const id = `ps_threadtest${String(n).padStart(14, "0")}`;
  await db.sql`
    insert into app.payment_sessions (id, merchant_id, environment, status, status_reason, amount_minor, currency, expires_at, token_hash, token_expires_at, wake_at)
    values (${id}, 'acct_thread', 'sandbox', 'PENDING', 'created', 100, 'USD', now() + interval '1 hour', ${`hash_${id}`}, now() + interval '2 hours', now())`;
  return id;
}
const stepped = async (id: string) => {
  const [r] = await db.sql`select wake_at is null or wake_at > now() as done from app.payment_sessions where id = ${id}`;
  return r?.done === true ? true : undefined;
};

test("steps due sessions on its own thread, comes back after its thread ends unasked, and stops", async () => {
  const lines: string[] = [];
  const thread = await RunnerThread.start(
    { databaseUrl: url, pool: { max: 2, connectTimeoutMs: 2000, statementTimeoutMs: 5000 }, networks: [], settings: { pollMs: 20, concurrency: 2 } },
    (l) => lines.push(l),
  );
  try {
    const first = await dueSession(1);
    await eventually(() => stepped(first), "the first session stepped by the thread");
    // The thread dies under it (as an uncaught error would end it).
    await (thread as unknown as { worker: Worker }).worker.terminate();
    const second = await dueSession(2);
    await eventually(() => stepped(second), "the second session stepped by the restarted thread", 10_000);
    expect(lines.some((l) => l.includes("ended unasked"))).toBe(true);
  } finally {
    await thread.stop();
  }
  // Stopped: a session due now stays due.
  const third = await dueSession(3);
  await Bun.sleep(300);
  expect(await stepped(third)).toBeUndefined();
}, 30_000);
