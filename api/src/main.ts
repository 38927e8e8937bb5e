/**
 * `bun run start` — the service. `bun run dev` — the same with `--dev`: also creates the
 * sandbox demo merchant (once) and writes its credentials to <data dir>/credentials.json.
 */
import { join } from "node:path";
import { ConfigError, encryptionKeyProblems, loadConfig, type Config } from "./config.ts";
import { ensureDemoMerchant, updateDevCredentials } from "./credentials/demo.ts";
import { ensureDemoUser } from "./dashboard/demo-user.ts";
import { startMerchantExample, type MerchantExample } from "../../examples/merchant/server.ts";
import { relayerAddressFor, startService, type RunningService } from "./server.ts";
import { describeStatus, NetworkReadiness, probeNetworks } from "./onchain/network-status.ts";
import { chainEnvFor, startLocalNetwork } from "./onchain.ts";
import { startIndexerSeat } from "./nodes/indexer-start.ts";
import type { DevChain } from "../../shared/devchain/index.ts";
import type { IndexerSeat } from "./nodes/indexer-seat.ts";
import { parseChainsEnv } from "../../shared/chains/config.ts";
import { relayerKeyProblems } from "./credentials/relayer.ts";
import { stopInOrder, stopOnSignals } from "./shutdown.ts";
import { findInChain } from "../../shared/error-chain.ts";
import { describeError } from "../../shared/describe-error.ts";

const dev = process.argv.includes("--dev");
const log = (line: string) => console.log(`[paysession] ${line}`);

// Every bad value, of ours and of the chain registry, is reported before anything starts.
const problems: string[] = [];
let config: Config | undefined;
try {
  config = loadConfig();
} catch (err) {
  const bad = findInChain(err, (x) => x instanceof ConfigError);
  if (!bad) throw err;
  problems.push(...bad.problems);
}
const chainEnv = config ? chainEnvFor(config, dev, process.env) : { ownLocalChain: false, env: process.env };
const chains = parseChainsEnv(chainEnv.env);
if (!chains.ok) problems.push(...chains.errors);
// The sweeper signs with SERVICE_RELAYER_PRIVATE_KEY; sandbox networks may use the dev key.
if (chains.ok && config?.sweeps.enabled) problems.push(...relayerKeyProblems(chains.config.networks, config.sweeps.relayerPrivateKey?.reveal()));
if (chains.ok && config) {
  const production = chains.config.networks.filter((n) => n.environment === "production").map((n) => n.name);
  problems.push(...encryptionKeyProblems(production, config.encryptionKey));
}
if (problems.length || !config || !chains.ok) {
  console.error(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  process.exit(1);
}

// Development: sandbox webhooks may go to localhost and private addresses unless said otherwise.
if (dev && !process.env.SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS) config.webhooks.allowPrivateTargets = true;

// Started in order, stopped in reverse: the local chain (the API's workers use it), the API
// with its Postgres, then the indexer (which writes into that Postgres).
let chain: DevChain | undefined;
let service: RunningService | undefined;
let indexer: IndexerSeat | undefined;
let shop: MerchantExample | undefined;
const fail = async (what: string, err: unknown) => {
  console.error(`[paysession] ${what} failed: ${describeError(err)}`);
  await indexer?.stop();
  await service?.stop();
  await chain?.stop();
  process.exit(1);
};
if (chainEnv.ownLocalChain) chain = await startLocalNetwork({ dataDir: config.dataDir, port: config.devChainPort }, log).catch((e) => fail("local test network", e));

// Every configured network is looked at before anything else starts (the database included):
// a wrong chain, an unreachable RPC or a wrong stablecoin refuses the start, one line each; a
// missing deposit factory only makes that network not ready (no sessions offered on it).
const networks = chains.config.networks;
const relayerFor = relayerAddressFor(config, networks);
const statuses = await probeNetworks(networks, { relayerFor });
for (const s of statuses) log(`network   ${describeStatus(s)}`);
const fatal = statuses.flatMap((s) => s.fatal);
if (fatal.length) {
  console.error(`refusing to start: a configured network is not what it should be:\n${fatal.map((p) => `  - ${p}`).join("\n")}`);
  await chain?.stop();
  process.exit(1);
}
for (const line of statuses.flatMap((s) => s.notReady)) log(`NOT READY ${line}`);
const readiness = new NetworkReadiness(networks, { relayerFor, refreshMs: config.networkCheckMs, log });
readiness.seed(statuses);
if (!networks.some((n) => n.environment === "sandbox")) {
  log("no sandbox network is enabled: sandbox keys get 503 network_unavailable (run a sandbox server beside this one, see docs/going-live.md, \"Sandbox and production side by side\")");
}
const indexerRole = config.indexerEnabled && networks.length > 0;
const running = await startService(config, log, { networks, readiness, indexerRole }).catch((e) => fail("service start", e));
service = running;
log(`API       ${running.url}   (public base: ${config.publicUrl}, sandbox base: ${config.sandboxPublicUrl})`);
log(`Swagger   ${running.swaggerUrl}`);
if (config.webhooks.allowPrivateTargets) log("webhooks  sandbox endpoints may target localhost and private addresses (SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS=false to refuse)");
indexer = await startIndexerSeat({
  config,
  chains: chains.config,
  databaseUrl: running.databaseUrl,
  nodeId: running.services.presence.info.id,
  env: chainEnv.env,
  log,
  onState: (state) => running.services.presence.setIndexer(state),
}).catch((e) => fail("indexer start", e));

if (running.sweeper) log(`sweeper   running (batches of ${config.sweeps.batchSize}; SERVICE_SWEEPER=false to run it apart)`);

if (dev) {
  const file = join(config.dataDir, "credentials.json");
  const { credentials, created } = await ensureDemoMerchant(running.services.database.db, file, {
    apiBaseUrl: config.sandboxPublicUrl.toString().replace(/\/$/, ""),
    swaggerUrl: running.swaggerUrl,
    ...(indexer?.process ? { indexerUrl: indexer.process.url } : {}),
    ...(chain ? { rpcUrl: chain.rpcUrl } : {}),
  });
  log(`demo merchant (sandbox)${created ? " created" : ""}:`);
  log(`  SERVICE_API_HOST=${credentials.apiBaseUrl}`);
  log(`  SERVICE_API_KEY=${credentials.apiKey}`);
  log(`  NEXT_PUBLIC_SERVICE_MERCHANT_ID=${credentials.merchantId}`);
  const dashboardUrl = `${config.publicUrl.toString().replace(/\/$/, "")}/dashboard`;
  const demo = await ensureDemoUser(running.services.database.db, file, dashboardUrl);
  log(`dashboard ${dashboardUrl}   (sign in as ${demo.email} / ${demo.password})`);
  log(`  (also in ${file})`);
  // The example shop (examples/merchant) on the demo merchant's credentials: a page to pay
  // through the SDK and the checkout, and a webhook handler (README "Your first payment").
  shop = await startDemoShop(config.dataDir, credentials).catch((e) => {
    log(`example shop not started: ${describeError(e)}`);
    return undefined;
  });
  if (shop) {
    updateDevCredentials(file, { demoUrl: shop.url });
    log(`shop      ${shop.url}   (example merchant: pay a sandbox session through the checkout)`);
  }
}

async function startDemoShop(dataDir: string, credentials: { apiBaseUrl: string; apiKey: string; merchantId: string }): Promise<MerchantExample> {
  const opts = {
    apiHost: credentials.apiBaseUrl,
    apiKey: credentials.apiKey,
    merchantId: credentials.merchantId,
    dataDir: join(dataDir, "merchant-example"),
    log: (line: string) => log(`shop      ${line}`),
  };
  const port = Number(process.env.MERCHANT_EXAMPLE_PORT ?? 4100);
  // Its default port taken: any free one (the URL is printed and in credentials.json).
  return startMerchantExample({ ...opts, port }).catch(() => startMerchantExample({ ...opts, port: 0 }));
}

// In order: HTTP stops taking work and lets requests in flight finish (at most
// SERVICE_SHUTDOWN_GRACE_MS), the indexer (it writes into our Postgres), the service
// (workers hand back their claims, pool, Postgres), then the local chain the workers used.
stopOnSignals(log, () =>
  stopInOrder([() => shop?.stop(), () => running.drain(), () => indexer?.stop(), () => running.stop(), () => chain?.stop()]),
);
