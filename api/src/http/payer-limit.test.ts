import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { createTestDatabase } from "../../../testing/database.ts";
import { migrate } from "../db/migrate.ts";
import { takeSharedToken } from "./payer-limit.ts";

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let pools: postgres.Sql[];

beforeAll(async () => {
  db = await createTestDatabase();
  // Three pools: three API processes.
  pools = [0, 1, 2].map(() => postgres(db.url, { max: 4, onnotice: () => {} }));
  await migrate(pools[0]!);
});
afterAll(async () => {
  for (const p of pools) await p.end();
  await db.drop();
});

test("many takes at once from three processes: exactly the burst is admitted, then Retry-After", async () => {
  const results = await Promise.all(Array.from({ length: 12 }, (_, i) => takeSharedToken(pools[i % 3]!, "payer-sandbox:ps_a", 1 / 20, 3)));
  expect(results.filter((r) => r.ok).length).toBe(3);
  const refused = results.find((r) => !r.ok);
  expect(refused).toMatchObject({ ok: false });
  if (refused && !refused.ok) expect(refused.retryAfterSeconds).toBeGreaterThan(15);
  // Another bucket is its own.
  expect((await takeSharedToken(pools[1]!, "payer-sandbox:ps_b", 1 / 20, 3)).ok).toBe(true);
});

test("the bucket refills at its rate, kept in the database (any process sees it)", async () => {
  const name = "payer-sandbox:ps_c";
  for (let i = 0; i < 2; i++) expect((await takeSharedToken(pools[0]!, name, 2, 2)).ok).toBe(true);
  expect((await takeSharedToken(pools[1]!, name, 2, 2)).ok).toBe(false);
  await Bun.sleep(600); // 2 a second: one more after half a second
  expect((await takeSharedToken(pools[2]!, name, 2, 2)).ok).toBe(true);
  expect((await takeSharedToken(pools[0]!, name, 2, 2)).ok).toBe(false);
});
