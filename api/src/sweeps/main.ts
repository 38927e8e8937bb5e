/**
 * The sweeper on its own: `bun api/src/sweeps/main.ts`. The API process runs one too unless
 * SERVICE_SWEEPER=false; any number may run side by side (they share the work through the
 * tables). Needs the same DATABASE_URL (or the embedded Postgres of the data dir when
 * `bun run dev` has it running), the networks (SERVICE_RPC_URL_<KEY>, …: with `bun run dev`'s
 * own anvil, SERVICE_RPC_URL_LOCAL=http://127.0.0.1:8545) and SERVICE_RELAYER_PRIVATE_KEY
 * (sandbox networks: the dev key by default). Stops cleanly on SIGINT/SIGTERM.
 */
import { databaseUrlOf } from "../config.ts";
import { connect } from "../db/client.ts";
import { joinAsNode, roleSettingsOrExit } from "../nodes/join.ts";
import { relayerKeyProblems, relayerKeysFor } from "../credentials/relayer.ts";
import { startSweeper } from "./sweeper.ts";
import { stopOnSignals } from "../shutdown.ts";

const log = (line: string) => console.log(`[paysession-sweeper] ${line}`);

const { config, chains } = roleSettingsOrExit("nothing to sweep", (config, networks) =>
  relayerKeyProblems(networks, config.sweeps.relayerPrivateKey?.reveal()),
);

const url = databaseUrlOf(config);
const database = connect(url, { max: Math.min(config.dbPoolSize, 5) });
const presence = await joinAsNode(database.sql, ["sweeper"], log);
const networks = chains.networks;
const sweeper = await startSweeper({
  sql: database.sql,
  networks,
  relayerKeys: relayerKeysFor(networks, config.sweeps.relayerPrivateKey?.reveal()),
  settings: config.sweeps,
  refunds: { maxPerDayMinor: config.refunds.maxPerDayMinor, maxPerRefundMinor: config.refunds.maxPerRefundMinor },
  log,
});
log(`sweeping on ${networks.map((n) => n.key).join(", ")} (batches of ${config.sweeps.batchSize})`);

stopOnSignals(log, async () => {
  await sweeper.stop();
  await presence.stop();
  await database.close();
});
