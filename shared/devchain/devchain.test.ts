import { afterAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../testing/ports.ts";
import { startDevChain, type DevChain } from "./index.ts";
import { localClients } from "./clients.ts";

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

test("killed hard (SIGKILL), a chain that persists each block keeps every transaction it mined", async () => {
  const stateFile = join(mkdtempSync(join(tmpdir(), "devchain-")), "state.json");
  const port = await freePort();
  const a = await startDevChain({ port, chainId: 31337, stateFile, persistEachBlock: true, heartbeatSeconds: 1 });
  started.push(a);
  let c = localClients(a.rpcUrl, 31337);
  const [from, to] = ["0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"] as const;
  for (let i = 0; i < 3; i++) {
    const hash = await c.publicClient.request({ method: "eth_sendTransaction" as never, params: [{ from, to, value: "0x1" }] as never });
    // Mined before the next (with a block a second beside automine, a transaction can wait for its block).
    await c.publicClient.waitForTransactionReceipt({ hash: hash as `0x${string}`, pollingInterval: 20 });
  }
  const nonce = await c.publicClient.getTransactionCount({ address: from });
  expect(nonce).toBe(3);
  await Bun.sleep(600); // one look of the persister (every 200 ms); anvil's own dump would wait 5 s
  process.kill(a.pid, "SIGKILL");
  await Bun.sleep(200);

  const b = await startDevChain({ port, chainId: 31337, stateFile });
  started.push(b);
  c = localClients(b.rpcUrl, 31337);
  expect(await c.publicClient.getTransactionCount({ address: from })).toBe(3);
});

test("a port already taken by another chain is refused with a clear error", async () => {
  const port = await freePort();
  const a = await startDevChain({ port, chainId: 31337 });
  started.push(a);
  await expect(startDevChain({ port, chainId: 31338 })).rejects.toThrow(/anvil exited|chain id 31337/);
});
