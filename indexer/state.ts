/**
 * Launcher state kept outside Ponder's own schema (so a reset of `indexer` keeps it), in
 * schema `indexer_meta`:
 *  - start_blocks: the first block indexed per chain. "Head when first started" is decided
 *    once and kept, so a restart neither skips blocks nor re-scans from a newer head.
 *  - settings: a fingerprint of what Ponder's build id does not cover (the top-level schema
 *    file behind the one-line re-export, and the index mode); when it changes the indexed
 *    tables are rebuilt from the start blocks.
 */
import type postgres from "postgres";
import type { NetworkConfig } from "../shared/chains/config.ts";
import { envSuffix } from "../shared/chains/presets.ts";

type Sql = postgres.Sql;

export interface StartBlockChoice {
  startBlock: number;
  /** What to write back, if anything. */
  persist: "insert" | "update" | null;
  source: string;
}

/** Pure: explicit env wins (and is remembered), then the remembered block, then the head. */
export function chooseStartBlock(explicit: number | null, persisted: number | null, head: number | null, envName: string): StartBlockChoice {
  if (explicit !== null) {
    return { startBlock: explicit, persist: persisted === explicit ? null : persisted === null ? "insert" : "update", source: envName };
  }
  if (persisted !== null) return { startBlock: persisted, persist: null, source: "indexer_meta.start_blocks" };
  if (head === null) throw new Error(`${envName}: no start block configured or persisted, and no head given`);
  return { startBlock: head, persist: "insert", source: "head when first started" };
}

export async function ensureStateTables(sql: Sql): Promise<void> {
  await sql`create schema if not exists indexer_meta`;
  await sql`create table if not exists indexer_meta.start_blocks (
    chain_id integer primary key,
    network text not null,
    start_block bigint not null,
    source text not null,
    chosen_at timestamptz not null default now()
  )`;
  await sql`create table if not exists indexer_meta.settings (key text primary key, value text not null)`;
}

/** Resolves every network's start block, persisting new choices. Returns SERVICE_START_BLOCK_* env. */
export async function resolveStartBlocks(
  sql: Sql,
  networks: NetworkConfig[],
  headOf: (n: NetworkConfig) => Promise<number>,
): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const n of networks) {
    const envName = `SERVICE_START_BLOCK_${envSuffix(n.key)}`;
    const [row] = await sql<{ start_block: string }[]>`select start_block from indexer_meta.start_blocks where chain_id = ${n.chainId}`;
    const persisted = row ? Number(row.start_block) : null;
    const head = n.startBlock === null && persisted === null ? await headOf(n) : null;
    const choice = chooseStartBlock(n.startBlock, persisted, head, envName);
    if (choice.persist === "insert") {
      // Two launchers starting at once must agree: the first insert wins, everyone re-reads it.
      await sql`insert into indexer_meta.start_blocks (chain_id, network, start_block, source)
                values (${n.chainId}, ${n.key}, ${choice.startBlock}, ${choice.source}) on conflict (chain_id) do nothing`;
    } else if (choice.persist === "update") {
      await sql`update indexer_meta.start_blocks set start_block = ${choice.startBlock}, source = ${choice.source}, chosen_at = now()
                where chain_id = ${n.chainId}`;
    }
    const [final] = await sql<{ start_block: string }[]>`select start_block from indexer_meta.start_blocks where chain_id = ${n.chainId}`;
    env[envName] = final!.start_block;
  }
  return env;
}

/** Stores `value` under `key`; returns the previous value (null the first time). */
export async function swapSetting(sql: Sql, key: string, value: string): Promise<string | null> {
  const [prev] = await sql<{ value: string }[]>`select value from indexer_meta.settings where key = ${key}`;
  await sql`insert into indexer_meta.settings (key, value) values (${key}, ${value})
            on conflict (key) do update set value = excluded.value`;
  return prev?.value ?? null;
}
