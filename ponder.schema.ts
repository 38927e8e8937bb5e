/**
 * Indexed tables (Postgres schema `indexer`; the API owns schema `app`). Ponder reads this
 * file through the one-line re-export indexer/ponder.schema.ts. Column names are snake_case
 * in SQL (Ponder's casing): chain_id, block_number, tx_hash, …; `value` is numeric(78,0)
 * in base units of the row's `token` (USDC and USDT: 6 decimals).
 */
import { index, onchainTable, primaryKey } from "ponder";

export const transfer = onchainTable(
  "transfers",
  (t) => ({
    chainId: t.integer().notNull(),
    blockNumber: t.bigint().notNull(),
    blockHash: t.hex().notNull(),
    /** Unix seconds. */
    blockTimestamp: t.bigint().notNull(),
    txHash: t.hex().notNull(),
    logIndex: t.integer().notNull(),
    /** The stablecoin contract that logged it (lowercase 0x hex): one of the network's accepted ones. */
    token: t.hex().notNull(),
    /** Lowercase 0x hex, like app.watched_addresses.address. */
    from: t.hex().notNull(),
    to: t.hex().notNull(),
    value: t.bigint().notNull(),
  }),
  (table) => ({
    pk: primaryKey({ columns: [table.chainId, table.txHash, table.logIndex] }),
    // Deposits into an address (session actors, analysts' "received" queries).
    toIdx: index("transfers_to_idx").on(table.to, table.chainId, table.blockNumber),
    // Outflows (sweeps, refunds) from an address.
    fromIdx: index("transfers_from_idx").on(table.from, table.chainId, table.blockNumber),
    // New blocks' transfers (the session runner's cursor looks only at those).
    blockIdx: index("transfers_block_idx").on(table.chainId, table.blockNumber),
  }),
);

/**
 * Payments by EIP-3009 authorization: a `Transfer` carried out by the token's
 * `transferWithAuthorization` (its `AuthorizationUsed(authorizer, nonce)` just before it in the same
 * transaction; indexer/authorized.ts pairs them). Kept apart from `transfers`, whose rows all touch
 * a deposit address and are read by it: these go from the payer straight to a settlement address
 * and are read by nonce (the session's: api/src/gasless/authorization.ts). Bounded mode keeps only
 * the nonces of recorded authorizations (app.payment_authorizations); full mode keeps every one.
 */
export const authorizedTransfer = onchainTable(
  "authorized_transfers",
  (t) => ({
    chainId: t.integer().notNull(),
    blockNumber: t.bigint().notNull(),
    blockHash: t.hex().notNull(),
    /** Unix seconds. */
    blockTimestamp: t.bigint().notNull(),
    txHash: t.hex().notNull(),
    /** The Transfer's log index (its AuthorizationUsed is an earlier log of the same transaction). */
    logIndex: t.integer().notNull(),
    /** The EIP-3009 nonce, 0x + 64 lowercase hex. */
    nonce: t.hex().notNull(),
    /** The token that carried it out (lowercase 0x hex): its AuthorizationUsed and Transfer are both its logs. */
    token: t.hex().notNull(),
    /** The authorizer: the payer who signed, and whose tokens moved. */
    from: t.hex().notNull(),
    to: t.hex().notNull(),
    value: t.bigint().notNull(),
  }),
  (table) => ({
    pk: primaryKey({ columns: [table.chainId, table.txHash, table.logIndex] }),
    // A session's payment by its nonce (session actors, the payer view).
    nonceIdx: index("authorized_transfers_nonce_idx").on(table.nonce, table.chainId),
    // New blocks' payments (the session runner's cursor).
    blockIdx: index("authorized_transfers_block_idx").on(table.chainId, table.blockNumber),
  }),
);

/**
 * The newest block the indexer has processed, per chain (one row each). The API derives
 * confirmations as head.block_number - transfer.block_number + 1 without its own RPC call,
 * and it moves backwards on a reorg together with the transfers.
 */
export const chainHead = onchainTable("chain_heads", (t) => ({
  chainId: t.integer().primaryKey(),
  blockNumber: t.bigint().notNull(),
  blockHash: t.hex().notNull(),
  blockTimestamp: t.bigint().notNull(),
}));
