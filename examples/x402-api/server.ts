/**
 * An API sold to agents by x402, paid through Paysession (docs/x402.md): a Hono server whose
 * `GET /weather` costs a price in dollars, protected by the unmodified @x402/hono middleware
 * with Paysession as its facilitator. Everything the payment requirements need comes from the
 * facilitator itself (GET /x402/supported, with this merchant's API key): the network, the
 * stablecoin and its EIP-712 name and version, and `payTo`, the merchant's settlement address —
 * the only address Paysession lets the payment go to. Each paid request becomes a payment session
 * of the merchant (webhooks, dashboard, CSV), its reference the resource's URL.
 *
 * It speaks only the public API and imports nothing of Paysession's: copy the folder.
 */
import { Hono } from "hono";
import { paymentMiddleware, x402ResourceServer } from "@x402/hono";
import { HTTPFacilitatorClient } from "@x402/core/server";
import { ExactEvmScheme } from "@x402/evm/exact/server";

export interface X402ApiOptions {
  /** Paysession's base address (SERVICE_API_HOST); the facilitator is under /x402. */
  apiHost: string;
  /** The merchant's API key (sk_test_… in the sandbox), with full access or the scope facilitator:settle. */
  apiKey: string;
  /** The price of one request, in dollars with two decimals ("0.01"). */
  priceUsd: string;
  /** CAIP-2 id of the network to be paid on (`eip155:<chainId>`); default: the first Paysession offers the key. */
  network?: string;
  port?: number;
  hostname?: string;
}

/** Supported kinds as Paysession describes them (GET /x402/supported). */
interface PaysessionKind {
  network: `${string}:${string}`;
  scheme: string;
  extra?: { payTo?: string; assets?: { asset: string; symbol: string; decimals: number; name?: string; version?: string; eip3009: boolean }[] };
}

/** "0.01" at `decimals` → base units, exactly (no floats for money). */
export function baseUnits(priceUsd: string, decimals: number): string {
  const m = /^(\d+)\.(\d{2})$/.exec(priceUsd);
  if (!m) throw new Error(`price must be dollars with two decimals, like "0.01"; got ${JSON.stringify(priceUsd)}`);
  return (BigInt(m[1]! + m[2]!) * 10n ** BigInt(decimals - 2)).toString();
}

export async function startX402Api(o: X402ApiOptions) {
  const auth = { Authorization: `Bearer ${o.apiKey}` };
  const facilitator = new HTTPFacilitatorClient({
    url: `${o.apiHost.replace(/\/+$/, "")}/x402`,
    // The key goes with every call to the facilitator (x402 asks for headers per path).
    createAuthHeaders: async () => ({ verify: auth, settle: auth, supported: auth }),
  });
  const supported = await facilitator.getSupported();
  const kind = (supported.kinds as PaysessionKind[]).find((k) => k.scheme === "exact" && (!o.network || k.network === o.network));
  if (!kind) throw new Error(`Paysession offers no x402 network${o.network ? ` ${o.network}` : ""} to this key`);
  const coin = kind.extra?.assets?.find((a) => a.eip3009 && a.name && a.version);
  const payTo = kind.extra?.payTo;
  if (!coin || !payTo) throw new Error(`no stablecoin with EIP-3009, or no settlement address, on ${kind.network}`);
  const requirements = {
    scheme: "exact",
    network: kind.network,
    payTo,
    // Not a default asset of the x402 packages on every network (the sandbox's TestUSD): the
    // amount in base units, the token, and its EIP-712 domain the client signs under.
    price: { amount: baseUnits(o.priceUsd, coin.decimals), asset: coin.asset, extra: { name: coin.name, version: coin.version } },
    maxTimeoutSeconds: 120,
  };

  const server = new x402ResourceServer(facilitator).register(kind.network, new ExactEvmScheme());
  const app = new Hono();
  app.get("/", (c) => c.json({ paid: { "GET /weather": `$${o.priceUsd} in ${coin.symbol} on ${kind.network}` } }));
  app.use(paymentMiddleware({ "GET /weather": { accepts: requirements, description: "Today's weather", mimeType: "application/json" } }, server));
  app.get("/weather", (c) => c.json({ weather: "sunny", temperature: 21 }));

  const http = Bun.serve({ port: o.port ?? 0, hostname: o.hostname ?? "127.0.0.1", fetch: app.fetch });
  return {
    url: `http://${http.hostname}:${http.port}`,
    network: kind.network,
    asset: coin.asset,
    payTo,
    amount: requirements.price.amount,
    stop: () => http.stop(true),
  };
}
