/**
 * `bun examples/merchant/main.ts` — the example shop on its own, configured by the three
 * values of the spec (SERVICE_API_HOST, SERVICE_API_KEY, NEXT_PUBLIC_SERVICE_MERCHANT_ID),
 * plus optional MERCHANT_EXAMPLE_PORT (default 4100) and SERVICE_WEBHOOK_SECRET.
 * (`bun run dev` starts it for you with the demo merchant's credentials.)
 */
import { startMerchantExample } from "./server.ts";

const need = (name: string) => {
  const v = process.env[name];
  if (!v) {
    console.error(`${name} is not set (see README "Your first payment in five minutes")`);
    process.exit(1);
  }
  return v;
};

const shop = await startMerchantExample({
  apiHost: need("SERVICE_API_HOST"),
  apiKey: need("SERVICE_API_KEY"),
  merchantId: need("NEXT_PUBLIC_SERVICE_MERCHANT_ID"),
  port: Number(process.env.MERCHANT_EXAMPLE_PORT ?? 4100),
  webhookSecret: process.env.SERVICE_WEBHOOK_SECRET,
  dataDir: process.env.MERCHANT_EXAMPLE_DATA_DIR ?? ".data/merchant-example",
  log: (line) => console.log(`[shop] ${line}`),
});
console.log(`[shop] example shop ${shop.url}`);
process.on("SIGINT", () => void shop.stop().then(() => process.exit(0)));
process.on("SIGTERM", () => void shop.stop().then(() => process.exit(0)));
