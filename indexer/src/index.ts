/**
 * Indexing functions. Every stablecoin Transfer on each enabled chain becomes a row of
 * indexer.transfers (full mode) or only those touching a watched address (bounded mode,
 * see ../watched.ts). Reorgs are Ponder's job: it reverts rows written for dropped blocks.
 *
 * Ponder executes every file under indexer/src/, so only indexing code lives here: helpers
 * and tests sit one level up.
 */
import { ponder } from "ponder:registry";
import { chainHead, transfer } from "ponder:schema";
import { loadChainsConfig } from "../../shared/chains/config.ts";
import { WatchedFilter } from "../watched.ts";
import { postgresWatchedLookup } from "../watched-db.ts";

const { indexMode } = loadChainsConfig(process.env);
const databaseUrl = process.env.DATABASE_URL;
if (indexMode === "bounded" && !databaseUrl) throw new Error("bounded mode needs DATABASE_URL (to read app.watched_addresses)");
const watched = indexMode === "bounded" ? new WatchedFilter(postgresWatchedLookup(databaseUrl!)) : null;

ponder.on("Stablecoin:Transfer", async ({ event, context }) => {
  const { from, to, value } = event.args;
  const chainId = context.chain.id;
  if (watched && !(await watched.keeps(chainId, event.block.number, from, to))) return;
  await context.db
    .insert(transfer)
    .values({
      chainId,
      blockNumber: event.block.number,
      blockHash: event.block.hash,
      blockTimestamp: event.block.timestamp,
      txHash: event.transaction.hash,
      logIndex: event.log.logIndex,
      from,
      to,
      value,
    })
    // A log is unique per (chain, tx, index); never fail the indexer on a replay.
    .onConflictDoNothing();
});

ponder.on("ChainHead:block", async ({ event, context }) => {
  const head = { blockNumber: event.block.number, blockHash: event.block.hash, blockTimestamp: event.block.timestamp };
  await context.db
    .insert(chainHead)
    .values({ chainId: context.chain.id, ...head })
    // A trigger on the table NOTIFYs the runners with this block's commit (../head-notify.ts).
    .onConflictDoUpdate(head);
});
