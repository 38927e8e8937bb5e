import { afterAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../testing/ports.ts";
import { startDevChain, type DevChain } from "./index.ts";
import { localClients } from "../testing/clients.ts";

const started: DevChain[] = [];
afterAll(async () => {
  for (const c of started) await c.stop();
});

test("starts a real anvil on 127.0.0.1 with the chain id asked for, and stops it", async () => {
  const chain = await startDevChain({ port: await freePort(), chainId: 31338 });
  started.push(chain);
  const { publicClient } = localClients(chain.rpcUrl, 31338);
  expect(await publicClient.getChainId()).toBe(31338);
  expect(new URL(chain.rpcUrl).hostname).toBe("127.0.0.1");
  await chain.stop();
  expect(() => process.kill(chain.pid, 0)).toThrow(); // the process is gone
  await expect(publicClient.getChainId()).rejects.toThrow();
});

test("a restart with the same state file keeps the chain's state", async () => {
  const stateFile = join(mkdtempSync(join(tmpdir(), "devchain-")), "state.json");
  const port = await freePort();
  const a = await startDevChain({ port, chainId: 31337, stateFile });
  started.push(a);
  let c = localClients(a.rpcUrl, 31337);
  await c.publicClient.request({ method: "anvil_mine" as never, params: ["0x7"] as never });
  expect(await c.publicClient.getBlockNumber()).toBe(7n);
  await a.stop();

  const b = await startDevChain({ port, chainId: 31337, stateFile });
  started.push(b);
  c = localClients(b.rpcUrl, 31337);
  expect(await c.publicClient.getBlockNumber()).toBe(7n);
});

test("a port already taken by another chain is refused with a clear error", async () => {
  const port = await freePort();
  const a = await startDevChain({ port, chainId: 31337 });
  started.push(a);
  await expect(startDevChain({ port, chainId: 31338 })).rejects.toThrow(/anvil exited|chain id 31337/);
});
