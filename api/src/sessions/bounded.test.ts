/**
 * Bounded indexing with the API's own rows: the view app.watched_addresses lists every
 * session's deposit addresses and the settlement addresses, so a session created through
 * the API is paid, indexed and swept, while unrelated traffic is not kept.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eventually } from "../../../testing/eventually.ts";
import { startLifecycleStack, type LifecycleStack } from "../../../testing/lifecycle.ts";

let stack: LifecycleStack;
beforeAll(async () => {
  stack = await startLifecycleStack({ env: { SERVICE_INDEX_MODE: "bounded" } });
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

test("a session created through the API is watched: paid, indexed, swept; other transfers are not kept", async () => {
  const sql = stack.svc.services.database.sql;
  const s = await stack.create("3.00");
  const watched = await sql`select kind from app.watched_addresses where address = ${s.networks[0]!.depositAddress.toLowerCase()}`;
  expect(watched.map((w) => w.kind)).toEqual(["deposit"]);
  const stranger = "0x00000000000000000000000000000000000000f1";
  await stack.chains[0]!.mint(stranger, 5_000_000n);
  await stack.pay(s, 3_000_000n);
  const done = await stack.waitFor(s.id, "SUCCEEDED");
  expect(done.history.map((h) => h.status)).toEqual(["PENDING", "FUNDED", "SUCCEEDED"]);
  // The sweep out of the deposit address is kept too (it touches a watched address).
  await eventually(async () => {
    const rows = await sql`select 1 from indexer.transfers where "from" = ${s.networks[0]!.depositAddress.toLowerCase()}`;
    return rows.length ? true : undefined;
  }, "the sweep indexed");
  expect((await sql`select 1 from indexer.transfers where "to" = ${stranger}`).length).toBe(0);
}, 30_000);
