/**
 * Our own sweep while the indexer is behind (issue 16): the indexer stored the payment, then
 * stopped moving; our relayer sweeps the deposit. The session settles on our own sweep's
 * receipt (the indexer never saw the money leave), and the relayer sends nothing more — not
 * while the indexer is behind, nor once it catches up and sees the transfer out.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eventually } from "../../../testing/eventually.ts";
import { startLifecycleStack, type LifecycleStack } from "../../../testing/lifecycle.ts";
import { startTestIndexer } from "../../../testing/indexer-stack.ts";

const USD = (cents: number) => BigInt(cents) * 10_000n;

let stack: LifecycleStack;
beforeAll(async () => {
  stack = await startLifecycleStack({ env: { SERVICE_INDEXER_POLLING_MS: "500" } });
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

const sql = () => stack.svc.services.database.sql;
const sweepRounds = (id: string) => sql()`select state, attempts from app.sweeps where session_id = ${id}`;

test("indexer behind: SUCCEEDED from our own sweep's receipt, one relayer transaction, none after the indexer catches up", async () => {
  const s = await stack.create("2.50");
  const deposit = s.networks[0]!.depositAddress.toLowerCase();
  const paid = await stack.pay(s, USD(250));
  // The indexer stores the payment, then falls behind (stopped: it sees nothing after this).
  await eventually(async () => {
    const [r] = await sql()`select 1 from indexer.transfers where tx_hash = ${paid.transactionHash}`;
    return r ? true : undefined;
  }, "the payment indexed", 10_000);
  await stack.indexer.stop();

  const done = await stack.waitFor(s.id, "SUCCEEDED", 20_000);
  expect(done.history.map((h) => h.reason)).toEqual(["created", "paid", "swept"]);
  // Precondition: the indexer never saw the money leave; the sweep is known from our receipt only.
  expect(await sql()`select 1 from indexer.transfers where "from" = ${deposit}`).toHaveLength(0);
  expect(await stack.chains[0]!.publicClient.readContract({ address: stack.chains[0]!.token, abi: [{ type: "function", name: "balanceOf", stateMutability: "view", inputs: [{ type: "address" }], outputs: [{ type: "uint256" }] }], functionName: "balanceOf", args: [deposit as `0x${string}`] })).toBe(0n);

  // Give the sweeper and the runner every chance to loop, then count.
  await Bun.sleep(3_000);
  let rounds = await sweepRounds(s.id);
  expect(rounds).toHaveLength(1);
  expect(rounds[0]).toMatchObject({ state: "confirmed", attempts: 1 });

  // The indexer catches up and stores our sweep's transfer out: still one round, still SUCCEEDED.
  stack.indexer = await startTestIndexer(stack.svc.databaseUrl, stack.chains, { SERVICE_INDEXER_POLLING_MS: "500" });
  await eventually(async () => ((await sql()`select 1 from indexer.transfers where "from" = ${deposit}`).length === 1 ? true : undefined), "the sweep indexed", 15_000);
  await Bun.sleep(1_500);
  rounds = await sweepRounds(s.id);
  expect(rounds).toHaveLength(1);
  expect(rounds[0]).toMatchObject({ state: "confirmed", attempts: 1 });
  expect((await stack.status(s.id)).status).toBe("SUCCEEDED");
}, 60_000);
