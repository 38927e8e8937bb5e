import type { Config } from "../config.ts";
import type { Database } from "../db/client.ts";
import { RateLimiter } from "./rate-limit.ts";

/** What the HTTP layer needs from the rest of the process. */
export interface Services {
  config: Config;
  database: Database;
  limiter: RateLimiter;
  /** keyId → when its last_used_at was last written (see auth.ts). */
  keyTouchedAt: Map<string, number>;
}

export function makeServices(config: Config, database: Database): Services {
  return {
    config,
    database,
    limiter: new RateLimiter(config.rateLimit.perSecond, config.rateLimit.burst),
    keyTouchedAt: new Map(),
  };
}
