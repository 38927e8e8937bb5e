/**
 * Starting this node's seat at the indexer from the service's settings: the API process
 * (main.ts, SERVICE_INDEXER=true or standby) and `bun run indexer` (indexer-main.ts) alike.
 */
import type { Config } from "../config.ts";
import type { ChainsConfig } from "../../../shared/chains/config.ts";
import { startIndexer, type IndexerProcess } from "../../../indexer/process.ts";
import { IndexerSeat } from "./indexer-seat.ts";
import type { IndexerState } from "./registry.ts";
import { describeError } from "../../../shared/describe-error.ts";

/**
 * This node's seat at the indexer (nodes/indexer-seat.ts): it runs its own Ponder into its own
 * schema all the time, and the service reads that index while this node holds the indexer lease
 * (a warm standby while another node does). Undefined when the indexer is off here
 * (SERVICE_INDEXER=false) or no network is configured.
 */
export async function startIndexerSeat(opts: {
  config: Config;
  chains: ChainsConfig;
  databaseUrl: string;
  nodeId: string;
  env: Record<string, string | undefined>;
  log: (line: string) => void;
  onState?: (state: IndexerState) => void;
}): Promise<IndexerSeat | undefined> {
  const { config, chains, log } = opts;
  if (chains.networks.length === 0) {
    log("no network configured (SERVICE_RPC_URL_<KEY>): indexer not started");
    return undefined;
  }
  if (!config.indexerEnabled) return undefined;
  const seat = new IndexerSeat({
    databaseUrl: opts.databaseUrl,
    nodeId: opts.nodeId,
    log,
    onState: (state) => {
      if (state === "standby") log("indexer   standby: another node holds the indexer lease (or none yet); this one's index is kept up to date and the service reads it if that node stops");
      opts.onState?.(state);
    },
    // The seat is given up (another node may take it) and tried again after a pause.
    onFailure: (err) => log(`indexer   FAILED, seat given up (tried again shortly): ${describeError(err)}`),
    // The slot is ours, so a Ponder lock left on its schema is a dead node's (cleared); the head
    // notification's trigger moves with the views (indexer/views.ts), not installed per instance.
    startIndexer: async (schema, signal) => {
      const indexer = await startIndexer({ databaseUrl: opts.databaseUrl, port: config.indexerPort, env: opts.env, notice: log, schema, clearStaleLock: true, headNotify: false, signal });
      log(`indexer   ${indexer.url}  (SQL ${indexer.url}/sql, GraphQL ${indexer.url}/graphql; schema "${schema}"; ${chains.indexMode} mode; networks: ${chains.networks.map((n) => n.key).join(", ")})`);
      reportCatchUp(indexer, config, log);
      return indexer;
    },
  });
  await seat.start();
  return seat;
}

/**
 * The API does not wait for the indexer's backfill: it serves meanwhile (/readyz says how far
 * behind the indexer is) and payments are detected once the indexer reaches their blocks.
 */
function reportCatchUp(indexer: IndexerProcess, config: Config, log: (line: string) => void): void {
  const started = Date.now();
  const slow = setTimeout(
    () => log(`indexer   still catching up after ${Math.round(config.indexerReadyTimeoutMs / 1000)} s (GET /readyz: blocks behind per network)`),
    config.indexerReadyTimeoutMs,
  );
  indexer
    .waitUntilReady(Number.MAX_SAFE_INTEGER)
    .then(() => log(`indexer   caught up (${((Date.now() - started) / 1000).toFixed(1)} s after start)`))
    .catch(() => {
      // An exit is the seat's to report (onFailure).
    })
    .finally(() => clearTimeout(slow));
}
