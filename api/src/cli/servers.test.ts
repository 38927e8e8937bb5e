/**
 * `bun run admin pg` and `bun run admin sandbox:chain` as an operator runs them for a one-host
 * cluster (docs/topology.md, "One host"): each in the foreground until Ctrl-C, printing the
 * variable the service's processes take; what it prints works; Ctrl-C stops it with exit 0 and
 * leaves nothing running.
 */
import { afterAll, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import postgres from "postgres";
import { createPublicClient, http, type Address } from "viem";
import { freePort } from "../../../testing/ports.ts";
import { childEnv } from "../../../testing/suite-processes.ts";
import { eventually } from "../../../testing/eventually.ts";
import { livePostmaster } from "../db/embedded-server.ts";
import { predictedAuthorizationBatchAddress, predictedFactoryAddress, predictedTestUsdtAddress, predictedTokenAddress } from "../../../shared/contracts/addresses.ts";

const ROOT = resolve(import.meta.dir, "../../..");
const dir = mkdtempSync(join(tmpdir(), "paysession-servers-"));
chmodSync(dir, 0o755); // as root, Postgres runs as the user postgres, which must reach its data dir
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `bun run admin …` in a group of its own (as in a terminal), once it printed `line=`. */
async function server(args: string[], line: string) {
  const child = spawn("bun", ["run", "--silent", "admin", ...args], { cwd: ROOT, env: childEnv({}), stdio: ["ignore", "pipe", "pipe"], detached: true });
  let out = "";
  let err = "";
  child.stdout!.on("data", (d: Buffer) => void (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => void (err += d.toString()));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  const value = await eventually(() => {
    if (child.exitCode !== null) throw new Error(`admin ${args[0]} exited ${child.exitCode}: ${err}`);
    return out.match(new RegExp(`^${line}=(\\S+)$`, "m"))?.[1];
  }, `${line}= from admin ${args[0]}`, 60_000);
  const ctrlC = async () => {
    process.kill(-child.pid!, "SIGINT");
    return { code: await exited, err };
  };
  return { value, ctrlC };
}

test("admin pg: the embedded Postgres on the port, data dir and max_connections asked for; its DATABASE_URL works; Ctrl-C stops it", async () => {
  const port = await freePort();
  const pgDir = join(dir, "pg");
  const pg = await server(["pg", "--port", String(port), "--data-dir", pgDir, "--max-connections", "57"], "DATABASE_URL");
  expect(pg.value).toBe(`postgres://postgres:postgres@127.0.0.1:${port}/postgres`);
  const sql = postgres(pg.value, { max: 1, onnotice: () => {} });
  const [row] = await sql`select current_setting('max_connections') as max, current_setting('data_directory') as dir`;
  await sql.end();
  expect(row).toEqual({ max: "57", dir: pgDir });
  const stopped = await pg.ctrlC();
  expect(stopped.code).toBe(0);
  expect(stopped.err).toContain("SIGINT: stopping");
  expect(livePostmaster(pgDir)).toBeUndefined();
}, 60_000);

test("admin pg refuses a bad --max-connections with exit 2, starting nothing", async () => {
  const p = Bun.spawn(["bun", "run", "--silent", "admin", "pg", "--max-connections", "many", "--data-dir", join(dir, "never")], { cwd: ROOT, env: childEnv({}), stderr: "pipe" });
  expect(await p.exited).toBe(2);
  expect(await new Response(p.stderr).text()).toContain("--max-connections must be a whole number");
});

test("admin sandbox:chain: anvil with the test tokens and the service's contracts at their fixed addresses; Ctrl-C stops it", async () => {
  const port = await freePort();
  const chain = await server(["sandbox:chain", "--port", String(port), "--data-dir", join(dir, "chain")], "SERVICE_RPC_URL_LOCAL");
  expect(chain.value).toBe(`http://127.0.0.1:${port}`);
  const client = createPublicClient({ transport: http(chain.value) });
  expect(await client.getChainId()).toBe(31337);
  const contracts: Address[] = [predictedTokenAddress(), predictedTestUsdtAddress(), predictedFactoryAddress(), predictedAuthorizationBatchAddress()];
  for (const address of contracts) expect({ address, code: ((await client.getCode({ address })) ?? "0x").length > 2 }).toEqual({ address, code: true });
  expect((await chain.ctrlC()).code).toBe(0);
  expect(await client.getChainId().then(() => "answers", () => "gone")).toBe("gone");
}, 60_000);

test("admin sandbox:chain --host 0.0.0.0 answers on every address (for containers and other hosts), on 127.0.0.1 only without it", async () => {
  // Another address of this machine than 127.0.0.1, on any Linux: all of 127/8 is the loopback's,
  // and a server bound to 127.0.0.1 does not answer on 127.0.0.2 (one bound to 0.0.0.0 does).
  const address = "127.0.0.2";
  const answers = (url: string) => createPublicClient({ transport: http(url, { retryCount: 0, timeout: 2000 }) }).getChainId().then(() => "answers", () => "refused");
  const open = await freePort();
  const wide = await server(["sandbox:chain", "--host", "0.0.0.0", "--port", String(open), "--data-dir", join(dir, "chain-wide")], "SERVICE_RPC_URL_LOCAL");
  expect(await answers(`http://${address}:${open}`)).toBe("answers");
  expect((await wide.ctrlC()).code).toBe(0);
  const closed = await freePort();
  const loopback = await server(["sandbox:chain", "--port", String(closed), "--data-dir", join(dir, "chain-loopback")], "SERVICE_RPC_URL_LOCAL");
  expect(await answers(`http://${address}:${closed}`)).toBe("refused");
  expect((await loopback.ctrlC()).code).toBe(0);
}, 90_000);
