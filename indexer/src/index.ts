/**
 * Indexing functions. Every stablecoin Transfer on each enabled chain becomes a row of
 * indexer.transfers (full mode) or only those touching a watched address (bounded mode,
 * see ../watched.ts). A Transfer carried out by an EIP-3009 authorization (its AuthorizationUsed
 * just before it: ../authorized.ts) becomes a row of indexer.authorized_transfers (full mode) or
 * only when the nonce is one of our sessions' (bounded mode, ../watched-db.ts).
 * Reorgs are Ponder's job: it reverts rows written for dropped blocks.
 *
 * Ponder executes every file under indexer/src/, so only indexing code lives here: helpers
 * and tests sit one level up.
 */
import { ponder } from "ponder:registry";
import { authorizedTransfer, chainHead, transfer } from "ponder:schema";
import { loadChainsConfig } from "../../shared/chains/config.ts";
import { WatchedFilter } from "../watched.ts";
import { postgresAuthorizationLookup, postgresWatchedLookup } from "../watched-db.ts";
import { AuthorizationPairs } from "../authorized.ts";

const { indexMode } = loadChainsConfig(process.env);
const databaseUrl = process.env.DATABASE_URL;
if (indexMode === "bounded" && !databaseUrl) throw new Error("bounded mode needs DATABASE_URL (to read app.watched_addresses)");
const watched = indexMode === "bounded" ? new WatchedFilter(postgresWatchedLookup(databaseUrl!)) : null;
const ourNonce = indexMode === "bounded" ? postgresAuthorizationLookup(databaseUrl!) : null;
const pairs = new AuthorizationPairs();

ponder.on("Stablecoin:AuthorizationUsed", async ({ event, context }) => {
  const { authorizer, nonce } = event.args;
  if (ourNonce && !(await ourNonce(nonce))) return;
  pairs.used(context.chain.id, event.block.number, { txHash: event.transaction.hash, logIndex: event.log.logIndex, token: event.log.address, authorizer, nonce });
});

ponder.on("Stablecoin:Transfer", async ({ event, context }) => {
  const { from, to, value } = event.args;
  const chainId = context.chain.id;
  const token = event.log.address.toLowerCase() as `0x${string}`;
  const use = pairs.take(chainId, event.block.number, { txHash: event.transaction.hash, logIndex: event.log.logIndex, token, from });
  if (use) {
    await context.db
      .insert(authorizedTransfer)
      .values({
        chainId,
        blockNumber: event.block.number,
        blockHash: event.block.hash,
        blockTimestamp: event.block.timestamp,
        txHash: event.transaction.hash,
        logIndex: event.log.logIndex,
        nonce: use.nonce as `0x${string}`,
        token,
        from,
        to,
        value,
      })
      .onConflictDoNothing();
  }
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
      token,
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
