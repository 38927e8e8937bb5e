import { expect, test } from "bun:test";
import { startAnvil } from "./anvil.ts";

async function chainId(rpcUrl: string): Promise<string | undefined> {
  try {
    const res = await fetch(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
    });
    return ((await res.json()) as { result?: string }).result;
  } catch {
    return undefined;
  }
}

test("startAnvil answers on 127.0.0.1 with chain id 31337; stop() ends it", async () => {
  const [a, b] = await Promise.all([startAnvil(), startAnvil()]);
  try {
    expect(a.rpcUrl).toStartWith("http://127.0.0.1:");
    expect(a.port).not.toBe(b.port);
    expect(await chainId(a.rpcUrl)).toBe("0x7a69");
    expect(await chainId(b.rpcUrl)).toBe("0x7a69");
  } finally {
    await a.stop();
  }
  // The node behind the wrapper is gone too, and the other instance is untouched.
  expect(await chainId(a.rpcUrl)).toBeUndefined();
  expect(() => process.kill(a.pid, 0)).toThrow();
  expect(await chainId(b.rpcUrl)).toBe("0x7a69");
  await b.stop();
  await a.stop(); // idempotent
  expect(await chainId(b.rpcUrl)).toBeUndefined();
}, 30_000);
