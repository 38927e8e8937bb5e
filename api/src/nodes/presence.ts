/**
 * This process in the node registry (registry.ts): registered at start, a beat every BEAT_MS,
 * its row deleted on a clean stop. Each beat also reads how many API nodes are alive, which the
 * request limiter divides the per-key limit by (http/rate-limit.ts): that number is kept here,
 * in memory, so a request never waits for the registry.
 */
import type { Sql } from "postgres";
import { Outage } from "../db/outage.ts";
import { BEAT_MS, beat, deregisterNode, type IndexerState, type NodeInfo } from "./registry.ts";
import { describeError } from "../../../shared/describe-error.ts";

export class NodePresence {
  /** Live API nodes at the last beat (this one included when it serves the API); 1 until then. */
  apiNodes = 1;
  private indexer: IndexerState | null = null;
  private timer: ReturnType<typeof setInterval> | undefined;
  private beating: Promise<void> | undefined;
  private readonly outage: Outage;

  constructor(
    private readonly sql: Sql,
    readonly info: NodeInfo,
    private readonly log: (line: string) => void = () => {},
  ) {
    this.outage = new Outage("node registry", log);
  }

  /** Registers (the first beat inserts the row; a database that does not answer fails the start). */
  async start(): Promise<void> {
    this.apiNodes = Math.max(1, (await beat(this.sql, this.info, this.indexer)).apiNodes);
    this.timer = setInterval(() => void this.beatOnce(), BEAT_MS);
  }

  /** The indexer role's state changed: said at once, not at the next beat. */
  setIndexer(state: IndexerState | null): void {
    this.indexer = state;
    if (this.timer) void this.beatOnce();
  }

  private beatOnce(): Promise<void> {
    // One beat at a time: a slow database must not pile them up.
    return (this.beating ??= beat(this.sql, this.info, this.indexer)
      .then(
        ({ apiNodes }) => {
          this.apiNodes = Math.max(1, apiNodes);
          this.outage.ok();
        },
        (e) => {
          // During an outage the last count stands; Outage logs its start and end once.
          if (this.outage.failed(e) === undefined) this.log(`node registry beat failed: ${describeError(e)}`);
        },
      )
      .finally(() => (this.beating = undefined)));
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.beating;
    await deregisterNode(this.sql, this.info.id).catch(() => {});
  }
}
