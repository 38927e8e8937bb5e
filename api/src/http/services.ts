import type { Config } from "../config.ts";
import type { Database } from "../db/client.ts";
import { RateLimiter } from "./rate-limit.ts";
import type { Resolver } from "../webhooks/target.ts";

/** What the HTTP layer needs from the rest of the process. */
export interface Services {
  config: Config;
  database: Database;
  limiter: RateLimiter;
  /** keyId → when its last_used_at was last written (see auth.ts). */
  keyTouchedAt: Map<string, number>;
  /** Seals webhook secrets at rest (webhooks/secrets.ts). */
  encryptionKey: Buffer;
  /** DNS for webhook URLs (tests replace it). */
  resolver?: Resolver;
}

export function makeServices(config: Config, database: Database, encryptionKey: Buffer, resolver?: Resolver): Services {
  return {
    config,
    database,
    encryptionKey,
    resolver,
    limiter: new RateLimiter(config.rateLimit.perSecond, config.rateLimit.burst),
    keyTouchedAt: new Map(),
  };
}
