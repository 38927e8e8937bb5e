/**
 * The image's HEALTHCHECK. The container's PID 1 is the role's bun (container/entrypoint.sh), so
 * its command line says the role: the API is healthy while `/readyz` answers 200 (503 while the
 * database is away or not migrated, or while it drains: docs/topology.md, "The load balancer");
 * the sandbox chain while anvil answers; a role without a port is healthy while its process runs, which it does only while it works
 * (each exits when it cannot go on, and its restart policy starts it again).
 */
import { readFileSync } from "node:fs";

const command = readFileSync("/proc/1/cmdline", "utf8").split("\0");
if (command.includes("api/src/main.ts")) {
  const port = process.env.SERVICE_PORT ?? "4000";
  const ok = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(3000) }).then(
    (r) => r.status === 200,
    () => false,
  );
  process.exit(ok ? 0 : 1);
}
if (command.includes("sandbox:chain")) {
  const port = process.env.SERVICE_DEV_CHAIN_PORT ?? "8545";
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] });
  const ok = await fetch(`http://127.0.0.1:${port}`, { method: "POST", headers: { "content-type": "application/json" }, body, signal: AbortSignal.timeout(3000) }).then(
    (r) => r.ok,
    () => false,
  );
  process.exit(ok ? 0 : 1);
}
process.exit(0);
