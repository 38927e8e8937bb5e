/**
 * An indexer node on its own: `bun run indexer`. It sits at the indexer seat (indexer-seat.ts):
 * it runs its own Ponder indexer as its child, into a schema of its own, all the time (HTTP on
 * 127.0.0.1: SERVICE_INDEXER_PORT: /sql, /graphql, /ready); while it holds the indexer lease the
 * service reads its index (the views schema `indexer`), otherwise it is a warm standby whose index
 * the service reads within a second of the holder's death. Run two, on two hosts, for an indexer
 * that survives one. Uses DATABASE_URL (or the embedded Postgres of the data dir when `bun run dev`
 * has it running) and the networks (SERVICE_RPC_URL_<KEY>, …). SERVICE_INDEXER=false is refused
 * here (nothing to do). Stops cleanly on SIGINT/SIGTERM (the lease is released: a standby takes
 * over at once).
 */
import { databaseUrlOf } from "../config.ts";
import { connect } from "../db/client.ts";
import { startIndexerSeat } from "./indexer-start.ts";
import { stopOnSignals } from "../shutdown.ts";
import { joinAsNode, roleSettingsOrExit } from "./join.ts";
import { describeError } from "../../../shared/describe-error.ts";

const log = (line: string) => console.log(`[paysession-indexer] ${line}`);

const { config, chains } = roleSettingsOrExit("nothing to index", (config) =>
  config.indexerEnabled ? [] : ["SERVICE_INDEXER=false: an indexer node with the indexer off has nothing to do"],
);

const url = databaseUrlOf(config);
const database = connect(url, { max: 3, connectTimeoutMs: config.dbConnectTimeoutMs, statementTimeoutMs: config.dbStatementTimeoutMs });
const presence = await joinAsNode(database.sql, ["indexer"], log);

const seat = await startIndexerSeat({
  config,
  chains,
  databaseUrl: url,
  nodeId: presence.info.id,
  env: process.env,
  log,
  onState: (state) => presence.setIndexer(state),
}).catch(async (err) => {
  // A first start that fails is a configuration to fix: said once, exit 1.
  console.error(`[paysession-indexer] indexer start failed: ${describeError(err)}`);
  await presence.stop();
  await database.close();
  process.exit(1);
});

async function shutDown(): Promise<void> {
  await seat?.stop();
  await presence.stop();
  await database.close();
}
stopOnSignals(log, shutDown);
