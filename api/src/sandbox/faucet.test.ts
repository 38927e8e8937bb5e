/**
 * The faucet as several API processes use it: each process has its own Faucet (its own queue and
 * clients) and all send from the one faucet account. Concurrent pays through two of them all land,
 * each a payment of its own — none refused for a nonce another process took.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Address } from "viem";
import { loadChainsConfig } from "../../../shared/chains/config.ts";
import { startTestChain, type TestChain } from "../../../testing/chain.ts";
import { createTestDatabase } from "../../../testing/database.ts";
import { connect, type Database } from "../db/client.ts";
import { Faucet } from "./faucet.ts";

let chain: TestChain;
let testDb: Awaited<ReturnType<typeof createTestDatabase>>;
let database: Database;

beforeAll(async () => {
  chain = await startTestChain();
  testDb = await createTestDatabase("faucet");
  database = connect(testDb.url, { max: 4 });
});
afterAll(async () => {
  await database?.close();
  await testDb?.drop();
  await chain?.stop();
});

const stranger = (i: number) => `0x${(0xfa0000 + i).toString(16).padStart(40, "0")}` as Address;

test("two API processes' faucets paying at once: every payment lands, once, at its own address", async () => {
  const net = loadChainsConfig({ SERVICE_RPC_URL_LOCAL: chain.anvil.rpcUrl }).networks.find((n) => n.key === "local")!;
  const [a, b] = [new Faucet(database.sql), new Faucet(database.sql)];
  const amounts = Array.from({ length: 10 }, (_, i) => 1_000_000n + BigInt(i));
  const results = await Promise.allSettled(amounts.map((amount, i) => (i % 2 ? a : b).pay(net, stranger(i), amount)));
  expect(results.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason).split("\n")[0])).toEqual([]);
  const hashes = results.map((r) => (r as PromiseFulfilledResult<string>).value);
  expect(new Set(hashes).size).toBe(10);
  for (const [i, amount] of amounts.entries()) expect(await chain.balanceOf(stranger(i), net.stablecoin.address)).toBe(amount);
}, 60_000);
