/**
 * The sweeper on its own: `bun api/src/sweeps/main.ts`. The API process runs one too unless
 * SERVICE_SWEEPER=false; any number may run side by side (they share the work through the
 * tables). Needs the same DATABASE_URL (or the embedded Postgres of the data dir when
 * `bun run dev` has it running), the networks (SERVICE_RPC_URL_<KEY>, …: with `bun run dev`'s
 * own anvil, SERVICE_RPC_URL_LOCAL=http://127.0.0.1:8545) and SERVICE_RELAYER_PRIVATE_KEY
 * (sandbox networks: the dev key by default). Stops cleanly on SIGINT/SIGTERM.
 */
import { ConfigError, loadConfig } from "../config.ts";
import { connect } from "../db/client.ts";
import { joinAsNode } from "../nodes/join.ts";
import { parseChainsEnv } from "../../../shared/chains/config.ts";
import { relayerKeyProblems, relayerKeysFor } from "./relayer.ts";
import { startSweeper } from "./sweeper.ts";
import { stopOnSignals } from "../shutdown.ts";

const log = (line: string) => console.log(`[paysession-sweeper] ${line}`);

const problems: string[] = [];
let config;
try {
  config = loadConfig();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  problems.push(...err.problems);
}
const chains = parseChainsEnv(process.env);
if (!chains.ok) problems.push(...chains.errors);
else if (chains.config.networks.length === 0) problems.push("no network configured (SERVICE_RPC_URL_<KEY>): nothing to sweep");
if (chains.ok && config) problems.push(...relayerKeyProblems(chains.config.networks, config.sweeps.relayerPrivateKey?.reveal()));
if (problems.length || !config || !chains.ok) {
  console.error(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  process.exit(1);
}

const url = config.databaseUrl ?? `postgres://postgres:postgres@127.0.0.1:${config.embeddedPgPort}/postgres`;
const database = connect(url, { max: Math.min(config.dbPoolSize, 5) });
const presence = await joinAsNode(database.sql, ["sweeper"], log);
const networks = chains.config.networks;
const sweeper = await startSweeper({
  sql: database.sql,
  networks,
  relayerKeys: relayerKeysFor(networks, config.sweeps.relayerPrivateKey?.reveal()),
  settings: config.sweeps,
  log,
});
log(`sweeping on ${networks.map((n) => n.key).join(", ")} (batches of ${config.sweeps.batchSize})`);

stopOnSignals(log, async () => {
  await sweeper.stop();
  await presence.stop();
  await database.close();
});
