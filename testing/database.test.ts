import { expect, test } from "bun:test";
import postgres from "postgres";
import { createTestDatabase } from "./database.ts";

test("each test database is a real, separate Postgres database", async () => {
  const a = await createTestDatabase();
  const b = await createTestDatabase();
  expect(a.name).not.toBe(b.name);
  const sa = postgres(a.url, { max: 1 });
  const sb = postgres(b.url, { max: 1 });
  await sa`create table only_in_a (x int)`;
  const inB = await sb`select 1 from pg_tables where tablename = 'only_in_a'`;
  expect(inB.length).toBe(0);
  const [row] = await sa`select current_setting('server_version_num')::int as v`;
  expect(row?.v).toBeGreaterThanOrEqual(170000);
  await sa.end();
  await sb.end();
  await a.drop();
  await b.drop();
});
