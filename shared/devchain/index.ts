/**
 * A real local chain for `bun run dev`, tests and benchmarks: the anvil binary from
 * @foundry-rs/anvil, bound to 127.0.0.1 (or the `host` asked for). We spawn the platform binary itself when we can
 * find it (so the PID we kill is anvil, not the Node wrapper that would leave it orphaned
 * if the wrapper died hard), else node_modules/.bin/anvil.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, renameSync, writeFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** anvil's default mnemonic accounts (public knowledge; for local networks only). */
export const ANVIL_ACCOUNTS = [
  {
    address: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
    privateKey: "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  },
  {
    address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    privateKey: "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  },
  {
    address: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
    privateKey: "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  },
] as const;

/** The sandbox relayer of the local networks: anvil's account #2 (the service's relayer key there; its address names the refund vaults). */
export const DEV_RELAYER_ACCOUNT = ANVIL_ACCOUNTS[2];

export interface DevChainOptions {
  port: number;
  /**
   * The interface anvil listens on; default 127.0.0.1. `0.0.0.0` makes it reachable from other
   * hosts and containers (`bun run admin sandbox:chain --host`); rpcUrl stays the loopback one.
   */
  host?: string;
  chainId: number;
  /** Load state from this file at start and dump it there on stop (and every few seconds). */
  stateFile?: string;
  /**
   * With `stateFile`: also write the state after every block that holds a transaction (looked
   * for every 200 ms), so a crash (SIGKILL, power loss) loses no acknowledged payment or sweep —
   * anvil's own dump runs only every few seconds. Empty heartbeat blocks are not worth a write.
   */
  persistEachBlock?: boolean;
  /** Seconds between blocks; default: mine a block per transaction (automine). */
  blockTime?: number;
  /**
   * Automine, and also an empty block every this many seconds (anvil --mixed-mining), as a
   * real network keeps making blocks: a session's expiry is decided only once the indexer
   * has stored a block stamped after it (api/src/sessions/actor.ts), so an idle chain must
   * still move on.
   */
  heartbeatSeconds?: number;
  /** Extra anvil flags, e.g. ["--slots-in-an-epoch", "1"]. */
  extraArgs?: string[];
}

export interface DevChain {
  rpcUrl: string;
  chainId: number;
  pid: number;
  stop(): Promise<void>;
}

export function anvilBinary(): string {
  const platformBin = resolve(ROOT, `node_modules/@foundry-rs/anvil-${process.platform}-${archName()}/bin/anvil`);
  return existsSync(platformBin) ? platformBin : resolve(ROOT, "node_modules/.bin/anvil");
}

function archName(): string {
  return process.arch === "x64" ? "amd64" : process.arch;
}

export async function startDevChain(opts: DevChainOptions): Promise<DevChain> {
  const args = ["--host", opts.host ?? "127.0.0.1", "--port", String(opts.port), "--chain-id", String(opts.chainId), "--silent"];
  if (opts.blockTime !== undefined) args.push("--block-time", String(opts.blockTime));
  else if (opts.heartbeatSeconds !== undefined) args.push("--mixed-mining", "--block-time", String(opts.heartbeatSeconds));
  if (opts.stateFile) args.push("--state", opts.stateFile, "--state-interval", "5");
  if (opts.extraArgs) args.push(...opts.extraArgs);

  const child = spawn(anvilBinary(), args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  let hasExited = false;
  void exited.then(() => (hasExited = true));

  const rpcUrl = `http://127.0.0.1:${opts.port}`;
  let persister: { stop(): Promise<void> } | undefined;
  const stop = async () => {
    await persister?.stop();
    await stopChild(child, exited, () => hasExited);
  };
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (hasExited) throw new Error(`anvil exited during start-up (port ${opts.port}): ${stderr.trim() || "no output"}`);
    const id = await rpcChainId(rpcUrl);
    if (id !== null) {
      if (id !== opts.chainId) {
        await stop();
        throw new Error(`port ${opts.port} answers with chain id ${id}, expected ${opts.chainId}: another node holds the port?`);
      }
      break;
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`anvil did not answer on ${rpcUrl} within 15 s: ${stderr.trim()}`);
    }
    await sleep(50);
  }
  if (opts.stateFile && opts.persistEachBlock) {
    const head = BigInt((await rpc(rpcUrl, "eth_blockNumber", [])) as string);
    persister = persistEachBlock(rpcUrl, opts.stateFile, head, () => hasExited);
  }
  return { rpcUrl, chainId: opts.chainId, pid: child.pid!, stop };
}

/** Writes anvil's state to `file` after each new block with transactions (see persistEachBlock). */
function persistEachBlock(rpcUrl: string, file: string, startHead: bigint, exited: () => boolean): { stop(): Promise<void> } {
  let seen = startHead;
  let running: Promise<void> | undefined;
  const look = async () => {
    const head = BigInt((await rpc(rpcUrl, "eth_blockNumber", [])) as string);
    if (head <= seen) {
      seen = head;
      return;
    }
    let busy = false;
    for (let b = head; b > seen && b > head - 50n && !busy; b--) {
      busy = Number((await rpc(rpcUrl, "eth_getBlockTransactionCountByNumber", [`0x${b.toString(16)}`])) as string) > 0;
    }
    seen = head;
    if (!busy) return;
    const hex = (await rpc(rpcUrl, "anvil_dumpState", [])) as string;
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, gunzipSync(Buffer.from(hex.slice(2), "hex")));
    renameSync(tmp, file); // atomic: a crash leaves the old state or the new, never half a file
  };
  const timer = setInterval(() => {
    if (running || exited()) return;
    running = look()
      .catch(() => {}) // the chain is stopping or busy: the next look tries again
      .finally(() => (running = undefined));
  }, 200);
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

async function rpc(url: string, method: string, params: unknown[]): Promise<unknown> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    signal: AbortSignal.timeout(5000),
  });
  const body = (await res.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

async function rpcChainId(url: string): Promise<number | null> {
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      signal: AbortSignal.timeout(1000),
    });
    const body = (await res.json()) as { result?: string };
    return body.result ? Number(body.result) : null;
  } catch {
    return null;
  }
}

/** SIGTERM (anvil dumps --state on it), SIGKILL after 5 s; only ever the PID we spawned. */
async function stopChild(child: ChildProcess, exited: Promise<unknown>, hasExited: () => boolean): Promise<void> {
  if (hasExited()) return;
  child.kill("SIGTERM");
  const timer = setTimeout(() => {
    if (!hasExited()) child.kill("SIGKILL");
  }, 5000);
  await exited;
  clearTimeout(timer);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
