/**
 * An indexer node on its own: `bun run indexer`. It sits at the indexer seat (indexer-seat.ts):
 * while it holds the indexer lease it runs the Ponder indexer as its child (HTTP on 127.0.0.1:
 * SERVICE_INDEXER_PORT: /sql, /graphql, /ready); otherwise it waits as a standby and takes over
 * within seconds of the holder's death. Run two, on two hosts, for an indexer that survives one.
 * Uses DATABASE_URL (or the embedded Postgres of the data dir when `bun run dev` has it running)
 * and the networks (SERVICE_RPC_URL_<KEY>, …). SERVICE_INDEXER=false is refused here (nothing to do).
 * Stops cleanly on SIGINT/SIGTERM (the lease is released: a standby takes over at once).
 */
import { ConfigError, loadConfig } from "../config.ts";
import { connect } from "../db/client.ts";
import { parseChainsEnv } from "../../../shared/chains/config.ts";
import { startIndexerSeat } from "../onchain.ts";
import { stopOnSignals } from "../shutdown.ts";
import { joinAsNode } from "./join.ts";

const log = (line: string) => console.log(`[paysession-indexer] ${line}`);

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
else if (chains.config.networks.length === 0) problems.push("no network configured (SERVICE_RPC_URL_<KEY>): nothing to index");
if (config && !config.indexerEnabled) problems.push("SERVICE_INDEXER=false: an indexer node with the indexer off has nothing to do");
if (problems.length || !config || !chains.ok) {
  console.error(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  process.exit(1);
}

const url = config.databaseUrl ?? `postgres://postgres:postgres@127.0.0.1:${config.embeddedPgPort}/postgres`;
const database = connect(url, { max: 3, connectTimeoutMs: config.dbConnectTimeoutMs, statementTimeoutMs: config.dbStatementTimeoutMs });
const presence = await joinAsNode(database.sql, ["indexer"], log);

let stopping = false;
const seat = await startIndexerSeat({
  config,
  chains: chains.config,
  databaseUrl: url,
  sql: database.sql,
  nodeId: presence.info.id,
  env: process.env,
  log,
  onState: (state) => presence.setIndexer(state),
  // The lease is released already: a standby takes over; we exit so that a supervisor restarts us.
  onFailure: (err) => {
    if (stopping) return;
    console.error(`[paysession-indexer] indexer failed: ${String((err as Error)?.message ?? err)}`);
    void shutDown().then(() => process.exit(1));
  },
});

async function shutDown(): Promise<void> {
  stopping = true;
  await seat?.stop();
  await presence.stop();
  await database.close();
}
stopOnSignals(log, shutDown);
