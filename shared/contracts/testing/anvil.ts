/**
 * A real anvil node for tests and benches: a free 127.0.0.1 port, `--chain-id 31337`, ready
 * when it answers JSON-RPC. `stop()` signals only the process started here (the npm `anvil`
 * wrapper, which passes SIGTERM on to the real binary).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

const ANVIL_BIN = fileURLToPath(new URL("../../../node_modules/.bin/anvil", import.meta.url));

export interface Anvil {
  rpcUrl: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

/** Processes still running, so a crashing test run does not leave nodes behind. */
const running = new Set<ChildProcess>();
process.once("exit", () => {
  // SIGTERM, not SIGKILL: the wrapper must live long enough to pass it on to the real binary.
  for (const child of running) child.kill("SIGTERM");
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

async function answers(rpcUrl: string): Promise<boolean> {
  try {
    const res = await fetch(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
    });
    return res.ok && "result" in ((await res.json()) as object);
  } catch {
    return false;
  }
}

function stopper(child: ChildProcess, rpcUrl: string): () => Promise<void> {
  return async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
      await exited;
      clearTimeout(timer);
    }
    running.delete(child);
    // The wrapper exits as soon as it has passed the signal on; wait for the node itself to
    // close its port, so a stopped anvil really is gone when stop() resolves.
    const deadline = Date.now() + 3000;
    while (Date.now() < deadline && (await answers(rpcUrl))) await new Promise((r) => setTimeout(r, 25));
  };
}

/**
 * Starts anvil and resolves once its RPC answers. `args` are appended (e.g.
 * `["--disable-default-create2-deployer"]`). Retries on another port if the chosen one was
 * taken in between.
 */
export async function startAnvil(opts: { args?: string[]; timeoutMs?: number } = {}): Promise<Anvil> {
  const timeoutMs = opts.timeoutMs ?? 15_000;
  let lastError = "";
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const rpcUrl = `http://127.0.0.1:${port}`;
    const child = spawn(
      ANVIL_BIN,
      ["--port", String(port), "--host", "127.0.0.1", "--chain-id", "31337", "--silent", ...(opts.args ?? [])],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    running.add(child);
    let stderr = "";
    child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    const stop = stopper(child, rpcUrl);
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline && child.exitCode === null && child.signalCode === null) {
      // Still alive after answering: the answer came from our node, not a port thief's.
      if ((await answers(rpcUrl)) && child.exitCode === null && child.pid !== undefined) {
        return { rpcUrl, port, pid: child.pid, stop };
      }
      await new Promise((r) => setTimeout(r, 25));
    }
    lastError = stderr.trim() || `no RPC answer on ${rpcUrl} within ${timeoutMs} ms`;
    await stop();
  }
  throw new Error(`anvil did not start: ${lastError}`);
}
