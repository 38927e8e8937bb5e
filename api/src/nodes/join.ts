/**
 * What every process of the service does once its pool is open, before any work: apply this
 * build's migrations (refusing a database a newer build migrated: db/migrate.ts DatabaseAhead)
 * and join the node registry. The role processes' entry points call it; the API process does the
 * same in server.ts.
 */
import type { Sql } from "postgres";
import { ConfigError, loadConfig, type Config } from "../config.ts";
import { parseChainsEnv, type ChainsConfig, type NetworkConfig } from "../../../shared/chains/config.ts";
import { DatabaseAhead, migrate } from "../db/migrate.ts";
import { NodePresence } from "./presence.ts";
import { thisNode, type NodeRole } from "./registry.ts";
import { findInChain } from "../../../shared/error-chain.ts";

export async function joinAsNode(sql: Sql, roles: NodeRole[], log: (line: string) => void): Promise<NodePresence> {
  try {
    const applied = await migrate(sql);
    if (applied.length) log(`applied migrations: ${applied.join(", ")}`);
  } catch (e) {
    const ahead = findInChain(e, (x) => x instanceof DatabaseAhead);
    if (!ahead) throw e;
    console.error(`refusing to start: ${ahead.message}`);
    process.exit(1);
  }
  const presence = new NodePresence(sql, thisNode(roles), log);
  await presence.start();
  log(`node ${presence.info.id} (${roles.join(", ")}; ${presence.info.version} ${presence.info.migration}) registered`);
  return presence;
}

/**
 * The settings of a role process that works on the networks (the sweeper, an indexer node): every
 * bad or missing value — ours, the chain registry's, none configured, and the role's own `checks`
 * — said at once, one line each, then exit 1.
 */
export function roleSettingsOrExit(nothingToDo: string, checks: (config: Config, networks: NetworkConfig[]) => string[] = () => []): { config: Config; chains: ChainsConfig } {
  const problems: string[] = [];
  let config: Config | undefined;
  try {
    config = loadConfig();
  } catch (err) {
    const bad = findInChain(err, (x) => x instanceof ConfigError);
    if (!bad) throw err;
    problems.push(...bad.problems);
  }
  const chains = parseChainsEnv(process.env);
  if (!chains.ok) problems.push(...chains.errors);
  else if (chains.config.networks.length === 0) problems.push(`no network configured (SERVICE_RPC_URL_<KEY>): ${nothingToDo}`);
  if (chains.ok && config) problems.push(...checks(config, chains.config.networks));
  if (problems.length || !config || !chains.ok) {
    console.error(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    process.exit(1);
  }
  return { config, chains: chains.config };
}
