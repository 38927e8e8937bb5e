/**
 * `bun examples/x402-api/main.ts` — the x402 API on its own, against any Paysession:
 * SERVICE_API_HOST and SERVICE_API_KEY (as `bun run dev` prints them), X402_PRICE (default 0.01),
 * X402_NETWORK (default: the first network offered), X402_API_PORT (default 4200).
 */
import { startX402Api } from "./server.ts";

const need = (name: string) => {
  const v = process.env[name];
  if (!v) {
    console.error(`${name} is not set (see docs/x402.md)`);
    process.exit(1);
  }
  return v;
};

const api = await startX402Api({
  apiHost: need("SERVICE_API_HOST"),
  apiKey: need("SERVICE_API_KEY"),
  priceUsd: process.env.X402_PRICE ?? "0.01",
  network: process.env.X402_NETWORK,
  port: Number(process.env.X402_API_PORT ?? 4200),
});
console.log(`[x402-api] ${api.url}/weather costs ${api.amount} base units of ${api.asset} on ${api.network}, paid to ${api.payTo}`);
process.on("SIGINT", () => void (api.stop(), process.exit(0)));
process.on("SIGTERM", () => void (api.stop(), process.exit(0)));
