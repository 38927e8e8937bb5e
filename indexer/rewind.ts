/**
 * A chain that went backwards under the indexer. A local chain that lost its last seconds in a
 * crash, a node replaced by one that is behind, a test network reset: the indexed tables and
 * Ponder's RPC cache (schema ponder_sync) then describe blocks the chain no longer has, and
 * Ponder refuses to start ("Finalized block … cannot move backwards"). The launcher
 * (process.ts) detects it before Ponder starts — the indexer's newest block is missing from the
 * chain, or has another hash — or from Ponder's refusal, and rebuilds: drops the indexed
 * schema and the RPC cache, and moves a remembered start block that the chain no longer
 * reaches back to the chain's head. One log line says so. What the lost blocks held is then
 * gone from the index too: the session actors and the sweeper see it and report it (a funding
 * payment reorged away, a sweep to be sent again, funds_reverted), nothing silently.
 */
import type postgres from "postgres";
import type { PublicClient } from "viem";
import type { NetworkConfig } from "../shared/chains/config.ts";

export const PONDER_WENT_BACK = "cannot move backwards";
const PONDER_SYNC_SCHEMA = "ponder_sync";

/** Networks whose chain no longer has the indexer's newest block (as stored in `<schema>.chain_heads`). */
export async function chainsThatWentBack(
  sql: postgres.Sql,
  schema: string,
  networks: readonly NetworkConfig[],
  clientFor: (n: NetworkConfig) => PublicClient,
): Promise<{ network: NetworkConfig; indexed: bigint; chainHead: bigint }[]> {
  const [t] = await sql`select to_regclass(${`${schema}.chain_heads`})::text as t`;
  if (!t?.t) return [];
  const heads = await sql.unsafe(`select chain_id, block_number::text as n, block_hash from "${schema.replace(/"/g, '""')}".chain_heads`);
  const out: { network: NetworkConfig; indexed: bigint; chainHead: bigint }[] = [];
  for (const h of heads) {
    const network = networks.find((n) => n.chainId === Number(h.chain_id));
    if (!network) continue;
    const client = clientFor(network);
    const indexed = BigInt(h.n as string);
    const chainHead = await client.getBlockNumber({ cacheTime: 0 });
    const block = chainHead >= indexed ? await client.getBlock({ blockNumber: indexed }).catch(() => null) : null;
    if (!block || block.hash.toLowerCase() !== String(h.block_hash).toLowerCase()) out.push({ network, indexed, chainHead });
  }
  return out;
}

/** Drops what describes the lost blocks; start blocks beyond the chain's head come back to it. */
export async function rebuildAfterChainWentBack(
  sql: postgres.Sql,
  schema: string,
  heads: readonly { chainId: number; head: bigint }[],
): Promise<void> {
  await sql.unsafe(`drop schema if exists "${schema.replace(/"/g, '""')}" cascade`);
  await sql.unsafe(`drop schema if exists "${PONDER_SYNC_SCHEMA}" cascade`);
  for (const h of heads) {
    await sql`update indexer_meta.start_blocks set start_block = ${h.head.toString()}::bigint, source = 'chain went back: its head then', chosen_at = now()
               where chain_id = ${h.chainId} and start_block > ${h.head.toString()}::bigint`;
  }
}
