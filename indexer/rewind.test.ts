/**
 * The chain goes backwards under a stopped indexer (a local chain that lost its last blocks in
 * a crash, a node replaced by one that is behind): the next start notices, says so in one line,
 * rebuilds the index from the chain, and comes up — instead of refusing to start.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { createTestDatabase } from "../testing/database.ts";
import { eventually } from "../testing/eventually.ts";
import { startTestChain, startTestIndexer, type TestChain } from "../testing/indexer-stack.ts";

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: postgres.Sql;
let local: TestChain;

beforeAll(async () => {
  db = await createTestDatabase("rewind");
  sql = postgres(db.url, { max: 2, onnotice: () => {} });
  local = await startTestChain("local");
}, 60_000);

afterAll(async () => {
  await local?.chain.stop();
  await sql?.end();
  await db?.drop();
}, 30_000);

const to = "0x00000000000000000000000000000000000000b7" as const;

test("a chain that lost blocks the indexer had stored: rebuilt on the next start, the lost transfer gone, new ones indexed", async () => {
  const snapshot = (await local.rpc("evm_snapshot", [])) as string;
  const first = await startTestIndexer(db.url, [local]);
  const lost = await local.mint(to, 5n);
  await local.rpc("anvil_mine", ["0x14"]); // well past any finality depth
  await eventually(async () => {
    const [h] = await sql`select block_number::text as n from indexer.chain_heads where chain_id = 31337`;
    return h && BigInt(h.n as string) >= lost.blockNumber + 20n ? true : undefined;
  }, "the indexer at the head");
  expect((await sql`select 1 from indexer.transfers where tx_hash = ${lost.transactionHash}`).length).toBe(1);
  await first.stop();

  await local.rpc("evm_revert", [snapshot]); // the chain goes back before the mint
  const notices: string[] = [];
  const second = await startTestIndexer(db.url, [local], {}, { notice: (l) => notices.push(l) });
  try {
    expect(notices).toHaveLength(1);
    expect(notices[0]).toContain("went backwards");
    expect((await sql`select 1 from indexer.transfers where tx_hash = ${lost.transactionHash}`).length).toBe(0);
    const fresh = await local.mint(to, 7n);
    await eventually(async () => ((await sql`select 1 from indexer.transfers where tx_hash = ${fresh.transactionHash}`).length ? true : undefined), "a new transfer indexed");
  } finally {
    await second.stop();
  }
}, 90_000);
