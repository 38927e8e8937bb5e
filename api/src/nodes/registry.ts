/**
 * The registry of the service's live processes (table app.nodes): what each does, where it runs,
 * which build it is, when it started and when it last beat. The statements only; the loop that
 * beats is heartbeat.ts.
 *
 * A node is alive while its last beat is younger than ALIVE_MS (three beats and a margin): a
 * process killed without a word drops out of the count within that, and one stopped cleanly
 * deletes its row at once.
 */
import { hostname } from "node:os";
import type { Sql } from "postgres";
import { newId } from "../../../shared/ids.ts";
import { readMigrations } from "../db/migrate.ts";
import { col, decodeFirst, decodeRows, rowShape } from "../db/rows.ts";
import packageJson from "../../../package.json" with { type: "json" };

export const NODE_ROLES = ["api", "actors", "sweeper", "webhooks", "indexer"] as const;
export type NodeRole = (typeof NODE_ROLES)[number];
export type IndexerState = "active" | "standby";

/** How often a node beats. */
export const BEAT_MS = 2000;
/** A node whose last beat is older than this is taken for dead. */
export const ALIVE_MS = 7000;
/** Rows of nodes dead for longer than this are deleted (by any node's beat). */
const FORGET_AFTER = "1 day";

export interface NodeInfo {
  id: string;
  roles: NodeRole[];
  host: string;
  pid: number;
  version: string;
  migration: string;
}

/** This process, as the registry will show it. */
export function thisNode(roles: NodeRole[]): NodeInfo {
  const migrations = readMigrations();
  return {
    id: newId("node"),
    roles,
    host: hostname(),
    pid: process.pid,
    version: packageJson.version,
    migration: migrations.at(-1)?.tag ?? "none",
  };
}

const BeatRow = rowShape("node beat: live API nodes", { api_nodes: col.int });

/**
 * One beat: this node's row inserted (the first beat registers it; again if someone purged it
 * while we were away) or refreshed, and the number of live API nodes read back, in one statement.
 * Old dead rows are purged too.
 */
export async function beat(sql: Sql, node: NodeInfo, indexer: IndexerState | null): Promise<{ apiNodes: number }> {
  const rows = await sql`
    with me as (
      insert into app.nodes (id, roles, host, pid, version, migration, indexer)
      values (${node.id}, ${sql.array(node.roles)}, ${node.host}, ${node.pid}, ${node.version}, ${node.migration}, ${indexer})
      on conflict (id) do update set heartbeat_at = now(), indexer = excluded.indexer
      returning id, roles
    ), purged as (
      delete from app.nodes where heartbeat_at < now() - ${FORGET_AFTER}::interval and id <> ${node.id}
    )
    select (
      (select count(*) from app.nodes
        where 'api' = any(roles) and heartbeat_at > now() - ${ALIVE_MS} * interval '1 millisecond' and id <> ${node.id})
      + (select count(*) from me where 'api' = any(roles))
    )::int as api_nodes`;
  return { apiNodes: decodeFirst(BeatRow, rows)?.api_nodes ?? 1 };
}

export async function deregisterNode(sql: Sql, id: string): Promise<void> {
  await sql`delete from app.nodes where id = ${id}`;
}

const NodeRow = rowShape("registered nodes", {
  id: col.text,
  roles: col.json(),
  host: col.text,
  pid: col.int,
  version: col.text,
  migration: col.text,
  started_at: col.time,
  heartbeat_at: col.time,
  indexer: col.nullable(col.text),
  alive: col.bool,
  beat_age_ms: col.float,
});

export interface RegisteredNode {
  id: string;
  roles: string[];
  host: string;
  pid: number;
  version: string;
  migration: string;
  startedAt: Date;
  heartbeatAt: Date;
  indexer: string | null;
  alive: boolean;
  /** Milliseconds since its last beat, by the database's clock. */
  beatAgeMs: number;
}

/** Every registered node (live first, then the dead not yet forgotten), oldest start first. */
export async function listNodes(sql: Sql): Promise<RegisteredNode[]> {
  const rows = await sql`
    select id, to_jsonb(roles) as roles, host, pid, version, migration, started_at, heartbeat_at, indexer,
           heartbeat_at > now() - ${ALIVE_MS} * interval '1 millisecond' as alive,
           (extract(epoch from now() - heartbeat_at) * 1000)::float8 as beat_age_ms
    from app.nodes order by alive desc, started_at, id`;
  return decodeRows(NodeRow, rows).map((r) => ({
    id: r.id,
    roles: Array.isArray(r.roles) ? r.roles.map(String) : [],
    host: r.host,
    pid: r.pid,
    version: r.version,
    migration: r.migration,
    startedAt: r.started_at,
    heartbeatAt: r.heartbeat_at,
    indexer: r.indexer,
    alive: r.alive,
    beatAgeMs: Math.max(0, Math.round(r.beat_age_ms)),
  }));
}
