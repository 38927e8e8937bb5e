/**
 * `bun run dev` as a newcomer runs it: embedded Postgres under the data dir, a demo
 * merchant created once, credentials printed and written to credentials.json.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort } from "../../shared/testing/ports.ts";

const dataDir = mkdtempSync(join(tmpdir(), "paysession-dev-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function runDev(port: number, pgPort: number) {
  const child = Bun.spawn(["bun", resolve(import.meta.dir, "main.ts"), "--dev"], {
    env: { ...process.env, DATABASE_URL: "", SERVICE_PORT: String(port), SERVICE_EMBEDDED_PG_PORT: String(pgPort), SERVICE_DATA_DIR: dataDir, SERVICE_PUBLIC_URL: `http://127.0.0.1:${port}` },
    stdout: "pipe",
    stderr: "pipe",
  });
  const reader = child.stdout.getReader();
  let out = "";
  const deadline = Date.now() + 30_000;
  while (!out.includes("credentials.json") && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    out += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return { child, out };
}

test("bun run dev starts everything, creates the demo merchant once, and stops cleanly", async () => {
  const [port, pgPort] = [await freePort(), await freePort()];
  const first = await runDev(port, pgPort);
  try {
    expect(first.out).toContain("demo merchant (sandbox) created");
    expect(first.out).toContain(`Swagger   http://127.0.0.1:${port}/docs`);
    const creds = JSON.parse(readFileSync(join(dataDir, "credentials.json"), "utf8"));
    expect(Object.keys(creds).sort()).toEqual(["apiBaseUrl", "apiKey", "merchantId", "swaggerUrl"]);
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
  const before = JSON.parse(readFileSync(join(dataDir, "credentials.json"), "utf8"));
  const second = await runDev(port, pgPort);
  try {
    expect(second.out).not.toContain("created");
    const after = JSON.parse(readFileSync(join(dataDir, "credentials.json"), "utf8"));
    expect(after.apiKey).toBe(before.apiKey);
    // The session made in the first run survived the restart: data lives in the data dir.
    const list = await fetch(`${after.apiBaseUrl}/payment-sessions`, { headers: { authorization: `Bearer ${after.apiKey}` } });
    expect((await list.json()).data.length).toBe(1);
  } finally {
    second.child.kill("SIGTERM");
    expect(await second.child.exited).toBe(0);
  }
}, 60_000);
