/**
 * A session's step is three round trips to Postgres — BEGIN, the lock with the reads, the writes
 * with COMMIT behind them (db/pipelined-transaction.ts) — on the real stack (anvil, Ponder, the
 * service), counted on the step's own connection: block → FUNDED waits on every round trip, and
 * under load each one waits for a busy core too (docs/on-chain.md, "Detection as the merchant sees it").
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startLifecycleStack, type LifecycleStack } from "../../../testing/lifecycle.ts";
import { countingClient, type CountingClient } from "../../../testing/round-trips.ts";
import { eventually } from "../../../testing/eventually.ts";
import { stepSession } from "./actor.ts";
import { indexedHeads, wakeSessionsTouchedAfter } from "./indexed.ts";

let stack: LifecycleStack;
let c: CountingClient;
beforeAll(async () => {
  // No runner and no sweeper: the test takes the steps itself.
  stack = await startLifecycleStack({ env: { SERVICE_SESSION_RUNNER: "false", SERVICE_SWEEPER: "false" } });
  c = countingClient(stack.svc.databaseUrl);
}, 60_000);
afterAll(async () => {
  await c?.end();
  await stack?.close();
});

/** A session paid in full and its payment indexed, not yet stepped. */
async function paidAndIndexed() {
  const s = await stack.create("1.00");
  await stack.pay(s, 1_000_000n);
  const deposit = s.networks[0]!.depositAddress.toLowerCase();
  await eventually(async () => (await c.sql`select 1 from indexer.transfers where "to" = ${deposit}`).length > 0 || undefined, "the payment indexed");
  return s;
}

test("the funding step: PENDING → FUNDED in three round trips", async () => {
  const networks = stack.svc.services.networks;
  // A first funding step prepares its statements on the connection, as a runner's first does.
  const first = await paidAndIndexed();
  expect((await stepSession(c.sql, first.id, {}, { skipLocked: true, networks })).decision?.transition?.to).toBe("FUNDED");

  const s = await paidAndIndexed();
  c.reset();
  const r = await stepSession(c.sql, s.id, {}, { skipLocked: true, networks });
  expect(r.decision?.transition?.to).toBe("FUNDED");
  expect(c.roundTrips).toBe(3);
  // Committed with everything the step writes: the status, its event, the sweep it calls for.
  const [row] = await c.sql`select status, (select count(*)::int from app.session_events e where e.session_id = s.id and e.status = 'FUNDED') as events,
                                   (select count(*)::int from app.sweeps w where w.session_id = s.id) as sweeps
                              from app.payment_sessions s where s.id = ${s.id}`;
  expect(row).toEqual({ status: "FUNDED", events: 1, sweeps: 1 });
});

test("the scan of a new head: the sessions it concerns woken, and the cursor moved, in one round trip", async () => {
  const chainId = stack.chains[0]!.chain.chainId;
  const scan = async () => {
    const [h] = (await indexedHeads(c.sql)).filter((x) => x.chainId === chainId);
    return { h: h!, woken: await wakeSessionsTouchedAfter(c.sql, chainId, h!.head - 2n, { block: h!.head, hash: h!.hash }) };
  };
  await scan(); // its statement prepared on the connection
  const s = await paidAndIndexed();
  const [h] = (await indexedHeads(c.sql)).filter((x) => x.chainId === chainId);
  c.reset();
  const woken = await wakeSessionsTouchedAfter(c.sql, chainId, h!.head - 2n, { block: h!.head, hash: h!.hash });
  expect(c.roundTrips).toBe(1);
  expect(woken).toContain(s.id);
});
