import { afterAll, expect, test } from "bun:test";
import postgres from "postgres";
import { resolve } from "node:path";
import { createTestDatabase } from "../../../testing/database.ts";
import { migrate, readMigrations } from "./migrate.ts";

const dbs: { drop(): Promise<void> }[] = [];
afterAll(async () => {
  for (const d of dbs) await d.drop();
});

test("migrations apply once and a second run applies nothing", async () => {
  const tdb = await createTestDatabase();
  dbs.push(tdb);
  const sql = postgres(tdb.url, { max: 1, onnotice: () => {} });
  const first = await migrate(sql);
  expect(first).toEqual(readMigrations().map((m) => m.tag));
  expect(first.length).toBeGreaterThan(0);
  expect(await migrate(sql)).toEqual([]);
  const tables = await sql`select 1 from pg_tables where schemaname = 'app' and tablename = 'payment_sessions'`;
  expect(tables.length).toBe(1);
  await sql.end();
});

test("two processes migrating the same database at once both succeed, each migration applied once", async () => {
  const tdb = await createTestDatabase();
  dbs.push(tdb);
  const cli = resolve(import.meta.dir, "migrate-cli.ts");
  const run = () =>
    Bun.spawn(["bun", cli], { env: { ...process.env, DATABASE_URL: tdb.url }, stdout: "pipe", stderr: "pipe" });
  const [a, b] = [run(), run()];
  const [codeA, codeB] = await Promise.all([a.exited, b.exited]);
  const outA = JSON.parse(await new Response(a.stdout).text());
  const outB = JSON.parse(await new Response(b.stdout).text());
  expect([codeA, codeB]).toEqual([0, 0]);
  // Exactly one of the two did the work.
  const total = readMigrations().length;
  expect(outA.applied.length + outB.applied.length).toBe(total);
  const sql = postgres(tdb.url, { max: 1, onnotice: () => {} });
  const rows = await sql`select tag from app.__migrations`;
  expect(rows.length).toBe(total);
  await sql.end();
});

test("a migration edited after it was applied is refused", async () => {
  const tdb = await createTestDatabase();
  dbs.push(tdb);
  const sql = postgres(tdb.url, { max: 1, onnotice: () => {} });
  const ms = readMigrations();
  await migrate(sql, ms);
  const edited = ms.map((m, i) => (i === 0 ? { ...m, hash: "different" } : m));
  await expect(migrate(sql, edited)).rejects.toThrow(/changed after it was applied/);
  await sql.end();
});
