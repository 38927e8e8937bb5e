/**
 * `bun run admin pg [--port P] [--data-dir D] [--max-connections N]`: the embedded Postgres as a
 * server on its own, in the foreground, for several processes of the service on one host to
 * share (docs/topology.md, "One host"). It prints the DATABASE_URL they take, and runs until
 * SIGINT or SIGTERM (Ctrl-C), then shuts down cleanly. Unsupervised: it is the process, and its
 * own supervisor (a terminal, a systemd unit) restarts it.
 */
import { join } from "node:path";
import type { Config } from "../config.ts";
import { startEmbeddedPostgres } from "../db/embedded.ts";
import { stopOnSignals } from "../shutdown.ts";
import { describeError } from "../../../shared/describe-error.ts";

export interface PgArgs {
  port?: string;
  dataDir?: string;
  maxConnections?: string;
}

type Die = (message: string) => never;

/** Whole numbers within bounds, or a clear refusal (exit 2). */
export function wholeFlag(name: string, raw: string | undefined, fallback: number, min: number, max: number, die: Die): number {
  if (raw === undefined) return fallback;
  if (!/^[0-9]+$/.test(raw) || Number(raw) < min || Number(raw) > max) die(`--${name} must be a whole number from ${min} to ${max}`);
  return Number(raw);
}

export async function pgCommand(args: PgArgs, config: Config, die: Die): Promise<void> {
  const port = wholeFlag("port", args.port, config.embeddedPgPort, 1, 65535, die);
  const maxConnections = wholeFlag("max-connections", args.maxConnections, config.embeddedPgMaxConnections, 10, 10_000, die);
  const dataDir = args.dataDir ?? join(config.dataDir, "pg");
  const log = (line: string) => console.error(`[pg] ${line}`);
  const pg = await startEmbeddedPostgres({ dataDir, port, maxConnections, supervise: false, log }).catch((e) => die(describeError(e)));
  log(`embedded Postgres 17 on 127.0.0.1:${port}, data in ${dataDir}, max_connections ${maxConnections}; Ctrl-C stops it`);
  console.log(`DATABASE_URL=${pg.url}`);
  stopOnSignals(log, () => pg.stop());
}
