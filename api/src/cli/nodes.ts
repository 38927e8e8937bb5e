/** `bun run admin nodes`: the node registry as a table an operator reads at a glance. */
import type { RegisteredNode } from "../nodes/registry.ts";
import type { IndexerLease } from "../nodes/lease.ts";

const ago = (ms: number) => (ms < 1000 ? `${ms} ms ago` : ms < 120_000 ? `${(ms / 1000).toFixed(1)} s ago` : `${Math.round(ms / 60_000)} min ago`);

export function describeNodes(nodes: RegisteredNode[], lease: IndexerLease | null): string {
  if (nodes.length === 0) return "no node registered (none is running, or none has started since the registry came)";
  const rows = nodes.map((n) => [
    n.id,
    n.alive ? "alive" : "DEAD",
    n.roles.join(",") + (n.indexer ? ` (indexer ${n.indexer})` : ""),
    `${n.host} pid ${n.pid}`,
    `${n.version} ${n.migration}`,
    n.startedAt.toISOString(),
    `beat ${ago(n.beatAgeMs)}`,
  ]);
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const lines = rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd());
  const versions = new Set(nodes.filter((n) => n.alive).map((n) => `${n.version} ${n.migration}`));
  if (versions.size > 1) lines.push(`WARNING: live nodes run ${versions.size} builds (${[...versions].join("; ")}): finish the rolling upgrade`);
  lines.push(
    lease
      ? `indexer: ${lease.node}${lease.host ? ` on ${lease.host} pid ${lease.pid}` : ""} since ${lease.since.toISOString()}${lease.valid ? "" : " — its lease EXPIRED and no node has taken it yet"}`
      : "indexer: no node holds the indexer lease",
  );
  return lines.join("\n");
}
