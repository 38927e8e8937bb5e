/**
 * `bun run start` in a production configuration, as a real process: what refuses the start,
 * and that it refuses before anything (the database included) has started.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import { ANVIL_ACCOUNTS } from "../../shared/devchain/index.ts";
import { startMainnetStandIn, type MainnetStandIn } from "../../testing/mainnet-standin.ts";
import { isolatedEnv } from "../../testing/indexer-stack.ts";
import { freePort } from "../../testing/ports.ts";

let ethereum: MainnetStandIn;
const dirs: string[] = [];
beforeAll(async () => {
  ethereum = await startMainnetStandIn("ethereum");
}, 30_000);
afterAll(async () => {
  await ethereum?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function start(env: Record<string, string>) {
  const dataDir = mkdtempSync(join(tmpdir(), "paysession-prod-"));
  dirs.push(dataDir);
  const child = Bun.spawn(["bun", resolve(import.meta.dir, "main.ts")], {
    env: { ...(isolatedEnv({}) as Record<string, string>), PATH: process.env.PATH!, SERVICE_DATA_DIR: dataDir, SERVICE_PORT: "0", SERVICE_EMBEDDED_PG_PORT: String(await freePort()), SERVICE_INDEXER_PORT: String(await freePort()), ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  const code = await child.exited;
  clearTimeout(timer);
  return { code, out: await new Response(child.stdout).text(), err: await new Response(child.stderr).text(), dataDir };
}

test("production without SERVICE_ENCRYPTION_KEY refuses to start, says how to make one and why to keep it, and makes no key file", async () => {
  const r = await start({ SERVICE_RPC_URL_ETHEREUM: ethereum.rpcUrl, SERVICE_RELAYER_PRIVATE_KEY: ANVIL_ACCOUNTS[1].privateKey });
  expect(r.code).toBe(1);
  expect(r.err).toContain("SERVICE_ENCRYPTION_KEY is required when a production network is enabled (Ethereum)");
  expect(r.err).toContain("openssl rand -base64 32");
  expect(r.err).toContain("must be rotated");
  expect(readdirSync(r.dataDir)).toEqual([]); // no encryption.key, no database
}, 40_000);

test("every network is checked before anything starts: one line per problem, no database booted", async () => {
  const r = await start({
    SERVICE_RPC_URL_ETHEREUM: "http://127.0.0.1:9/v2/SECRET-PROVIDER-KEY",
    SERVICE_RPC_URL_BASE: ethereum.rpcUrl, // answers with chain id 1
    SERVICE_RELAYER_PRIVATE_KEY: ANVIL_ACCOUNTS[1].privateKey,
    SERVICE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
  });
  expect(r.code).toBe(1);
  expect(r.err).toContain("refusing to start");
  expect(r.err).toContain("  - Ethereum: RPC (SERVICE_RPC_URL_ETHEREUM) did not answer");
  expect(r.err).toContain("  - Base: SERVICE_RPC_URL_BASE serves chain id 1, expected 8453");
  expect(r.out + r.err).not.toContain("SECRET-PROVIDER-KEY");
  expect(r.out).not.toContain("embedded Postgres");
  expect(existsSync(join(r.dataDir, "pg"))).toBe(false);
}, 40_000);
