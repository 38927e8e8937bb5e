/** pipelinedTransaction against real Postgres: COMMIT sent with the writes (three round trips, not four), one transaction, a failed write commits nothing. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestDatabase } from "../../../testing/database.ts";
import { countingClient, type CountingClient } from "../../../testing/round-trips.ts";
import { pipelinedTransaction } from "./pipelined-transaction.ts";
import { DeadlineExceeded, requestScope } from "./deadline.ts";
import { connect } from "./client.ts";

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let c: CountingClient;

beforeAll(async () => {
  db = await createTestDatabase("ptx");
  c = countingClient(db.url);
  await c.sql`create table t (n int primary key, seen int not null)`;
});
afterAll(async () => {
  await c?.end();
  await db?.drop();
});

const count = async () => (await c.sql`select count(*)::int as n from t`)[0]!.n as number;

test("reads then writes: three round trips (BEGIN, the reads, the writes with COMMIT), committed", async () => {
  const step = (n: number) =>
    pipelinedTransaction(c.sql, async (tx, writes) => {
      const [r] = await tx`select count(*)::int as n from t`;
      writes.send(tx`insert into t (n, seen) values (${n}, ${r!.n})`);
      writes.send(tx`insert into t (n, seen) select ${n + 1}, count(*) from t`);
      return r!.n as number;
    });
  expect(await step(1)).toBe(0); // its statements prepared on the connection, as a runner's are after its first step
  c.reset();
  expect(await step(3)).toBe(2);
  expect(c.roundTrips).toBe(3);
  expect([...(await c.sql`select n, seen from t order by n`)]).toEqual([
    { n: 1, seen: 0 },
    { n: 2, seen: 1 },
    { n: 3, seen: 2 },
    { n: 4, seen: 3 },
  ]);
});

test("a failing write: its own error, and nothing of the transaction is written", async () => {
  const before = await count();
  const thrown = await pipelinedTransaction(c.sql, async (tx, writes) => {
    writes.send(tx`insert into t (n, seen) values (100, 0)`);
    writes.send(tx`insert into t (n, seen) values (1, 0)`); // taken: 23505
    writes.send(tx`insert into t (n, seen) values (101, 0)`);
  }).catch((e) => e);
  expect((thrown as { code?: string }).code).toBe("23505");
  expect(await count()).toBe(before);
  // The connection is usable again, outside any transaction.
  await pipelinedTransaction(c.sql, async (tx, writes) => void writes.send(tx`insert into t (n, seen) values (102, 0)`));
  expect(await count()).toBe(before + 1);
});

test("fn throws: rolled back, its error thrown", async () => {
  const before = await count();
  const thrown = await pipelinedTransaction(c.sql, async (tx, writes) => {
    writes.send(tx`insert into t (n, seen) values (200, 0)`);
    throw new Error("decided against it");
  }).catch((e) => e);
  expect(String(thrown)).toContain("decided against it");
  expect(await count()).toBe(before);
});

test("the service's pool (client.ts): a request whose deadline passed during fn commits nothing", async () => {
  const database = connect(db.url, { max: 1 });
  try {
    const before = await count();
    const scope = { expired: false, committing: 0 };
    const thrown = await requestScope
      .run(scope, () =>
        pipelinedTransaction(database.sql, async (tx, writes) => {
          writes.send(tx`insert into t (n, seen) values (300, 0)`);
          scope.expired = true;
        }),
      )
      .catch((e) => e);
    expect(thrown).toBeInstanceOf(DeadlineExceeded);
    expect(await count()).toBe(before);
    expect(scope.committing).toBe(0);
  } finally {
    await database.close();
  }
});
