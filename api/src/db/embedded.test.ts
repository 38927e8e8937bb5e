/** The embedded cluster as db/embedded.ts makes and runs it (skipped when DATABASE_URL points elsewhere). */
import { afterAll, expect, test } from "bun:test";
import postgres from "postgres";
import { createTestDatabase } from "../../../testing/database.ts";

const dbs: { drop(): Promise<void> }[] = [];
afterAll(async () => {
  for (const d of dbs) await d.drop();
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
