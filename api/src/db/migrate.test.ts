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

test.skipIf(Boolean(process.env.DATABASE_URL))("the embedded cluster stores UTF-8 and compares text byte by byte (builtin C.UTF-8), with Unicode case mapping", async () => {
  const tdb = await createTestDatabase();
  dbs.push(tdb);
  const sql = postgres(tdb.url, { max: 1, onnotice: () => {} });
  const [r] = await sql`
    select pg_encoding_to_char(encoding) as encoding, datlocprovider::text as provider, datlocale as locale,
           lower('ÄÖ É') as lowered,
           (select array_agg(x order by x) from unnest(array['b', 'B', 'a', '_', 'Z', 'é', 'e']) x) as sorted
      from pg_database where datname = current_database()`;
  expect(r).toEqual({ encoding: "UTF8", provider: "b", locale: "C.UTF-8", lowered: "äö é", sorted: ["B", "Z", "_", "a", "b", "e", "é"] });
  await sql.end();
});

test.skipIf(Boolean(process.env.DATABASE_URL))("the embedded cluster makes a new WAL segment without zero-filling it inside a commit (wal_init_zero off)", async () => {
  const tdb = await createTestDatabase();
  dbs.push(tdb);
  const sql = postgres(tdb.url, { max: 1, onnotice: () => {} });
  const [r] = await sql`select current_setting('wal_init_zero') as zero, current_setting('wal_recycle') as recycle, current_setting('fsync') as fsync, current_setting('synchronous_commit') as sync`;
  // Only the zero-filling is off: commits are still flushed and synced, and old segments recycled.
  expect(r).toEqual({ zero: "off", recycle: "on", fsync: "on", sync: "on" });
  await sql.end();
});
