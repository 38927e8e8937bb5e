/** Pipeline against real Postgres: one round trip, the order kept, the first failure reported. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { createTestDatabase } from "../../../testing/database.ts";
import { Pipeline } from "./pipeline.ts";

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: postgres.Sql;

beforeAll(async () => {
  db = await createTestDatabase("pipe");
  sql = postgres(db.url, { max: 1, onnotice: () => {} });
  await sql`create table log (n int primary key, seen int not null)`;
});
afterAll(async () => {
  await sql?.end();
  await db?.drop();
});

test("statements run in the order sent, each seeing the ones before it, before any answer is awaited", async () => {
  const counts = await sql.begin(async (tx) => {
    const writes = new Pipeline();
    const answers: Promise<postgres.Row[]>[] = [];
    for (let n = 1; n <= 5; n++) answers.push(writes.send(tx`insert into log (n, seen) select ${n}, count(*) from log returning seen`));
    await writes.flush();
    return Promise.all(answers.map(async (a) => (await a)[0]!.seen as number));
  });
  expect(counts).toEqual([0, 1, 2, 3, 4]);
});

test("a failing statement: flush throws its own error (not the aborted ones after it) and the transaction writes nothing", async () => {
  const before = (await sql`select count(*)::int as n from log`)[0]!.n as number;
  let thrown: { code?: string } | undefined;
  await sql
    .begin(async (tx) => {
      const writes = new Pipeline();
      writes.send(tx`insert into log (n, seen) values (100, 0)`);
      writes.send(tx`insert into log (n, seen) values (1, 0)`); // taken: 23505
      writes.send(tx`insert into log (n, seen) values (101, 0)`); // aborted transaction: 25P02
      await writes.flush();
    })
    .catch((e) => (thrown = e));
  expect(thrown?.code).toBe("23505");
  expect((await sql`select count(*)::int as n from log`)[0]!.n).toBe(before);
});
