/**
 * A session runner on its own: `bun run actors`. The API process runs one too unless
 * SERVICE_SESSION_RUNNER=false; any number may run side by side (each due session is
 * stepped by one of them at a time). Uses DATABASE_URL, or the embedded Postgres of the data
 * dir when `bun run dev` has it running, and the same SERVICE_RPC_URL_<KEY> settings as the
 * API (for each network's confirmation depth). Stops cleanly on SIGINT/SIGTERM.
 */
import { ConfigError, databaseUrlOf, loadConfig } from "../config.ts";
import { connect } from "../db/client.ts";
import { joinAsNode } from "../nodes/join.ts";
import { ChainConfigError, loadChainsConfig } from "../../../shared/chains/config.ts";
import { SessionRunner } from "./runner.ts";
import { stopOnSignals } from "../shutdown.ts";
import { findInChain } from "../../../shared/error-chain.ts";

const log = (line: string) => console.log(`[paysession-actors] ${line}`);

let config;
let chains;
try {
  config = loadConfig();
  chains = loadChainsConfig(process.env);
} catch (err) {
  const bad = findInChain(err, (x) => x instanceof ConfigError || x instanceof ChainConfigError);
  if (!bad) throw err;
  console.error(bad.message);
  process.exit(1);
}

const url = databaseUrlOf(config);
const database = connect(url, { max: Math.min(config.dbPoolSize, config.runner.concurrency + 2) });
const presence = await joinAsNode(database.sql, ["actors"], log);
const runner = new SessionRunner(database.sql, chains.networks, config.runner, log);
await runner.start();
log(`stepping session actors (concurrency ${config.runner.concurrency}, poll ${config.runner.pollMs} ms)`);

stopOnSignals(log, async () => {
  await runner.stop();
  await presence.stop();
  await database.close();
});
