/**
 * `bun run dev` as a newcomer runs it: embedded Postgres under the data dir, a demo
 * merchant created once, credentials printed and written to credentials.json.
 */
import { signInAttemptAt } from "../../testing/dashboard.ts";
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort } from "../../testing/ports.ts";

const dataDir = mkdtempSync(join(tmpdir(), "paysession-dev-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function runDev(port: number, pgPort: number, chainPort: number, indexerPort: number, shopPort: number) {
  const child = Bun.spawn(["bun", resolve(import.meta.dir, "main.ts"), "--dev"], {
    env: { ...process.env, DATABASE_URL: "", SERVICE_PORT: String(port), SERVICE_EMBEDDED_PG_PORT: String(pgPort), SERVICE_DATA_DIR: dataDir, SERVICE_PUBLIC_URL: `http://127.0.0.1:${port}`, SERVICE_DEV_CHAIN_PORT: String(chainPort), SERVICE_INDEXER_PORT: String(indexerPort), SERVICE_RPC_URL_LOCAL: "", MERCHANT_EXAMPLE_PORT: String(shopPort) },
    stdout: "pipe",
    stderr: "pipe",
  });
  const reader = child.stdout.getReader();
  let out = "";
  const deadline = Date.now() + 30_000;
  // The example shop is the last thing started.
  while (!/shop {6}http|example shop not started/.test(out) && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    out += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return { child, out };
}

test("bun run dev starts everything, creates the demo merchant once, and stops cleanly", async () => {
  const ports = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort()] as const;
  const first = await runDev(...ports);
  const port = ports[0];
  try {
    expect(first.out).toContain("demo merchant (sandbox) created");
    expect(first.out).toContain(`Swagger   http://127.0.0.1:${port}/docs`);
    const creds = JSON.parse(readFileSync(join(dataDir, "credentials.json"), "utf8"));
    expect(Object.keys(creds).sort()).toEqual(["apiBaseUrl", "apiKey", "dashboardEmail", "dashboardPassword", "dashboardUrl", "demoUrl", "indexerUrl", "merchantId", "rpcUrl", "swaggerUrl"]);
    // The dashboard address and its demo login are printed, and the login works.
    expect(first.out).toContain(`dashboard ${creds.dashboardUrl}   (sign in as ${creds.dashboardEmail} / ${creds.dashboardPassword})`);
    expect((await signInAttemptAt(`http://127.0.0.1:${port}`, creds.dashboardEmail, creds.dashboardPassword)).status).toBe(303);
    // The example shop runs on the demo merchant: its page loads the SDK from the service, and
    // its webhook handler is registered.
    expect(creds.demoUrl).toBe(`http://127.0.0.1:${ports[4]}`);
    expect(first.out).toContain(`shop      ${creds.demoUrl}`);
    expect(await (await fetch(creds.demoUrl)).text()).toContain(`${creds.apiBaseUrl}/sdk/v1/paysession.js`);
    expect((await fetch(`${creds.apiBaseUrl}/sdk/v1/paysession.js`)).status).toBe(200);
    expect(first.out).toContain("(deployed token, factory, batch, usdt, refund vaults)");
    // The local test network answers with our chain id and the indexer is ready.
    const rpc = await fetch(creds.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }) });
    expect(Number((await rpc.json()).result)).toBe(31337);
    expect((await fetch(`${creds.indexerUrl}/ready`)).status).toBe(200);
    // Development: sandbox webhooks may go to localhost (SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS), and it says so.
    expect(first.out).toContain("sandbox endpoints may target localhost and private addresses");
    const hook = await fetch(`${creds.apiBaseUrl}/webhook-endpoints`, {
      method: "POST",
      headers: { authorization: `Bearer ${creds.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ url: "http://localhost:3000/webhooks" }),
    });
    expect(hook.status).toBe(201);
    expect(first.out).toContain(creds.apiKey);
    const r = await fetch(`${creds.apiBaseUrl}/payment-sessions`, {
      method: "POST",
      headers: { authorization: `Bearer ${creds.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ amount: "1.00", currency: "USD" }),
    });
    expect(r.status).toBe(201);
  } finally {
    first.child.kill("SIGTERM");
    expect(await first.child.exited).toBe(0);
  }
  // Nothing left behind: the chain and the indexer stopped with the service.
  const creds = JSON.parse(readFileSync(join(dataDir, "credentials.json"), "utf8"));
  expect(await fetch(creds.rpcUrl, { method: "POST", body: "{}" }).then(() => "up", () => "down")).toBe("down");
  expect(await fetch(`${creds.indexerUrl}/ready`).then(() => "up", () => "down")).toBe("down");
  const before = JSON.parse(readFileSync(join(dataDir, "credentials.json"), "utf8"));
  const second = await runDev(...ports);
  try {
    expect(second.out).not.toContain("created");
    // The chain kept its state: nothing deployed again.
    expect(second.out).toContain("deposit factory");
    expect(second.out).not.toContain("(deployed");
    const after = JSON.parse(readFileSync(join(dataDir, "credentials.json"), "utf8"));
    expect(after.apiKey).toBe(before.apiKey);
    expect(after.dashboardPassword).toBe(before.dashboardPassword);
    // The session made in the first run survived the restart: data lives in the data dir.
    const list = await fetch(`${after.apiBaseUrl}/payment-sessions`, { headers: { authorization: `Bearer ${after.apiKey}` } });
    expect((await list.json()).data.length).toBe(1);
  } finally {
    second.child.kill("SIGTERM");
    expect(await second.child.exited).toBe(0);
  }
}, 120_000);
