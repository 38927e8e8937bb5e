/**
 * What every process of the service does once its pool is open, before any work: apply this
 * build's migrations (refusing a database a newer build migrated: db/migrate.ts DatabaseAhead)
 * and join the node registry. The role processes' entry points call it; the API process does the
 * same in server.ts.
 */
import type { Sql } from "postgres";
import { DatabaseAhead, migrate } from "../db/migrate.ts";
import { NodePresence } from "./presence.ts";
import { thisNode, type NodeRole } from "./registry.ts";

export async function joinAsNode(sql: Sql, roles: NodeRole[], log: (line: string) => void): Promise<NodePresence> {
  try {
    const applied = await migrate(sql);
    if (applied.length) log(`applied migrations: ${applied.join(", ")}`);
  } catch (e) {
    if (!(e instanceof DatabaseAhead)) throw e;
    console.error(`refusing to start: ${e.message}`);
    process.exit(1);
  }
  const presence = new NodePresence(sql, thisNode(roles), log);
  await presence.start();
  log(`node ${presence.info.id} (${roles.join(", ")}; ${presence.info.version} ${presence.info.migration}) registered`);
  return presence;
}
